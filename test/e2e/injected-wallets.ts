import type { Wallet } from 'ethers';
import type { Page } from 'playwright-core';
import type { AnvilNode } from '../support/anvil.js';

// An EIP-1193 provider injected into a page (window.ethereum), as a browser wallet exposes one, that signs with a
// test key in Node against Anvil: accounts and chain id answered locally, eth_sendTransaction signed by `wallet`,
// every other method forwarded to the node. Returns the calldata of each transaction it sent, in order.
export async function injectEip1193(page: Page, wallet: Wallet, node: AnvilNode, chainIdHex = '0x7a69'): Promise<string[]> {
  const sent: string[] = [];
  await page.exposeFunction('__eip1193', async (method: string, paramsJson: string) => {
    const params = JSON.parse(paramsJson) as any[];
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return JSON.stringify([wallet.address]);
      case 'eth_chainId':
        return JSON.stringify(chainIdHex);
      case 'eth_sendTransaction': {
        const tx = await wallet.sendTransaction({ to: params[0].to, data: params[0].data });
        sent.push(params[0].data);
        return JSON.stringify(tx.hash);
      }
      default:
        return JSON.stringify(await node.rpc(method, params));
    }
  });
  await page.addInitScript(() => {
    const w = globalThis as unknown as { __eip1193(m: string, p: string): Promise<string>; ethereum: unknown };
    const bridge = w.__eip1193;
    w.ethereum = {
      isMetaMask: false,
      request: async ({ method, params }: { method: string; params?: unknown[] }) =>
        JSON.parse(await bridge(method, JSON.stringify(params ?? []))),
    };
  });
  return sent;
}
