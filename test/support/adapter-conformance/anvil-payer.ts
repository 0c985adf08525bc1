import { Contract } from 'ethers';
import type { AnvilNode } from '../anvil.js';
import { deployBatcher } from '../evm-tokens/deploy.js';
import { payFrom, walletAt, type DeployedToken } from '../evm-tokens/scenario.js';

// The payer side of the Anvil-backed families (EVM, and TRON whose JSON-RPC Anvil stands in for): 20-byte hex
// addresses, transfers from Anvil account 1, reorgs by snapshot and a longer branch. Hashes are returned 0x-hex.

type Send = (...args: unknown[]) => Promise<{ hash: string; wait(): Promise<unknown> }>;

export interface AnvilPayer {
  readonly address: string;
  /** One transaction: a plain transfer for one recipient, the batcher contract for several. */
  pay(token: DeployedToken, transfers: Array<{ to: string; amount: bigint }>): Promise<string>;
  /** A transfer mined with status 0 (an explicit gas limit skips the estimate that would refuse it). */
  payFailing(token: DeployedToken, to: string, amount: bigint): Promise<void>;
  /** Mined and seen, then replaced by a branch one block longer without it; replay re-sends the same bytes. */
  reorg(token: DeployedToken, to: string, amount: bigint): Promise<{ txHash: string; forget(): Promise<void>; replay(): Promise<void> }>;
}

export function anvilPayer(node: AnvilNode): AnvilPayer {
  const payer = walletAt(1, node.provider);
  let batcher: Contract | undefined;
  const approved = new Set<string>();
  return {
    address: payer.address.toLowerCase(),
    async pay(token, transfers) {
      if (transfers.length === 1) return payFrom(payer, token, transfers[0]!.to, transfers[0]!.amount);
      batcher ??= await deployBatcher(walletAt(0, node.provider));
      const batcherAddress = await batcher.getAddress();
      if (!approved.has(token.address)) {
        const approve = new Contract(token.address, ['function approve(address,uint256)'], payer);
        await (await (approve.getFunction('approve') as Send)(batcherAddress, 2n ** 255n)).wait();
        approved.add(token.address);
      }
      const pay = batcher.connect(payer) as Contract;
      const tx = await (pay.getFunction('pay') as Send)(
        token.address,
        transfers.map((t) => t.to),
        transfers.map((t) => t.amount),
      );
      await minedReceipt(node, tx.hash);
      return tx.hash;
    },
    async payFailing(token, to, amount) {
      const c = new Contract(token.address, ['function transfer(address to, uint256 value)'], payer);
      const tx = await (c.getFunction('transfer') as Send)(to, amount, { gasLimit: 100_000n });
      if ((await minedReceipt(node, tx.hash)).status !== '0x0') throw new Error('the failing transfer did not fail');
    },
    async reorg(token, to, amount) {
      const c = new Contract(token.address, ['function transfer(address,uint256)'], payer);
      const raw = await payer.signTransaction(
        await payer.populateTransaction({ to: token.address, data: c.interface.encodeFunctionData('transfer', [to, amount]) }),
      );
      const snapshot = await node.rpc<string>('evm_snapshot');
      // Automine may answer before the block is sealed: wait for the receipt, or the watcher can read an older head.
      const hash = await node.rpc<string>('eth_sendRawTransaction', [raw]);
      await minedReceipt(node, hash);
      return {
        txHash: hash,
        async forget() {
          await node.rpc('evm_revert', [snapshot]);
          const block = await node.provider.getBlock('latest');
          await node.rpc('evm_setNextBlockTimestamp', [block!.timestamp + 30]); // other block hashes on the new branch
          await node.mine(2);
        },
        async replay() {
          await minedReceipt(node, await node.rpc<string>('eth_sendRawTransaction', [raw]));
        },
      };
    },
  };
}

/**
 * The receipt once `hash` is mined. Read from the node directly: a provider's block polling can miss blocks after a
 * revert lowered the head, and automine may answer eth_sendRawTransaction before the block is sealed.
 */
export async function minedReceipt(node: AnvilNode, hash: string): Promise<{ status: string; blockNumber: string }> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
    const receipt = await node.rpc<{ status: string; blockNumber: string } | null>('eth_getTransactionReceipt', [hash]);
    if (receipt) return receipt;
  }
  throw new Error(`transaction ${hash} was not mined within 20 s`);
}

export async function erc20Balance(node: AnvilNode, token: DeployedToken, holderHex: string): Promise<bigint> {
  const c = new Contract(token.address, ['function balanceOf(address) view returns (uint256)'], node.provider);
  return (c.getFunction('balanceOf') as (a: string) => Promise<bigint>)(holderHex);
}

/** Pauses the token (both shapes have pause()) around `send`: what is mined meanwhile reverts. */
export async function whileTokenPaused(token: DeployedToken, send: () => Promise<void>): Promise<void> {
  await (await (token.contract.getFunction('pause') as Send)()).wait();
  try {
    await send();
  } finally {
    await (await (token.contract.getFunction('unpause') as Send)()).wait();
  }
}
