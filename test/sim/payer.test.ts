import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interface, Wallet } from 'ethers';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { reorgEvm } from '../../scripts/sim/faults/chain-evm.js';
import { evmPayer } from '../../scripts/sim/payer.js';

// The simulated payer (scripts/sim/payer.ts) on a real Anvil node: a transfer a reorg dropped is broadcast again with
// the same signed bytes (same nonce, same hash), so the recipient is paid once, and later transfers queued behind the
// dropped nonce go through once it is back.

describe('simulated payer re-broadcast', () => {
  let node: AnvilNode;
  let usdc: DeployedToken;
  let payerWallet: Wallet;
  beforeAll(async () => {
    node = await startAnvil();
    [usdc] = (await deployTokens(node, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
    payerWallet = walletAt(3, node.provider);
    await fund(usdc, payerWallet.address, 1_000_000_000n);
  });
  afterAll(async () => node?.stop());

  const balance = async (a: string) => (await usdc.contract.getFunction('balanceOf')(a)) as bigint;
  const receipt = (h: string) => node.rpc<{ blockNumber: string } | null>('eth_getTransactionReceipt', [h]);

  it('a transfer the reorg dropped is mined again under the same hash when the payer waits for it', async () => {
    const payer = evmPayer(payerWallet, node.provider);
    const to = Wallet.createRandom().address;
    const sent = await payer.transfer(usdc.address, to, 1_500_000n);
    await payer.mined(sent.hash, 30_000);
    const r = await reorgEvm(node.url, { depth: 1, drop: 'all' });
    expect(r.dropped.map((h) => h.toLowerCase())).toContain(sent.hash.toLowerCase());
    expect(await receipt(sent.hash)).toBeNull();
    expect(await balance(to)).toBe(0n);

    const resent: string[] = [];
    await payer.mined(sent.hash, 30_000, (h) => resent.push(h));
    expect(resent).toEqual([sent.hash]);
    expect(await receipt(sent.hash)).not.toBeNull();
    expect(await balance(to)).toBe(1_500_000n);
  });

  it('after a reorg, rebroadcastVanished re-sends the dropped nonce so a later transfer queued behind it lands too', async () => {
    const payer = evmPayer(payerWallet, node.provider);
    const to = Wallet.createRandom().address;
    const first = await payer.transfer(usdc.address, to, 2_000_000n);
    await payer.mined(first.hash, 30_000);
    await reorgEvm(node.url, { depth: 1, drop: 'all' });
    // The payer does not know yet: its next transfer takes the next nonce and waits behind the gap.
    const second = await payer.transfer(usdc.address, to, 300_000n);
    expect(second.nonce).toBe(first.nonce + 1);
    expect(await receipt(second.hash)).toBeNull();

    expect(await payer.rebroadcastVanished()).toEqual([first.hash.toLowerCase()]);
    await payer.mined(first.hash, 30_000);
    await payer.mined(second.hash, 30_000);
    expect(await balance(to)).toBe(2_300_000n);
    // Nothing is left to re-send once both are mined.
    expect(await payer.rebroadcastVanished()).toEqual([]);
  });

  it("a subscription customer's approve sent through `send` and dropped by a reorg is re-sent: the allowance holds", async () => {
    // scripts/sim/scenario-subscriptions.ts: the customer's approvals go through the same wallet, so a "lower" or
    // "restore" approval a reorg dropped is sent again instead of leaving the renewal waiting on an allowance never set.
    const customer = walletAt(4, node.provider);
    await node.rpc('anvil_setBalance', [customer.address, '0xde0b6b3a7640000']);
    const wallet = evmPayer(customer, node.provider);
    const spender = Wallet.createRandom().address;
    const approve = new Interface(['function approve(address spender, uint256 value)']);
    const allowance = async () => (await usdc.contract.getFunction('allowance')(customer.address, spender)) as bigint;
    const sent = await wallet.send(usdc.address, approve.encodeFunctionData('approve', [spender, 7_000_000n]));
    await wallet.mined(sent.hash, 30_000);
    expect(await allowance()).toBe(7_000_000n);
    const r = await reorgEvm(node.url, { depth: 1, drop: 'all' });
    expect(r.dropped.map((h) => h.toLowerCase())).toContain(sent.hash.toLowerCase());
    expect(await allowance()).toBe(0n);
    expect(await wallet.rebroadcastVanished()).toEqual([sent.hash.toLowerCase()]);
    await wallet.mined(sent.hash, 30_000);
    expect(await allowance()).toBe(7_000_000n);
  });
});
