import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Wallet } from 'ethers';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import { tronAddressAt, tronHotWalletKeyPath } from '../../chains/tron/keys.js';
import { DEVNET_MNEMONIC } from '../../src/cli/devnet.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { type SimTron, startSimTron } from '../../scripts/sim/env/tron.js';
import { transfers } from '../../scripts/sim/invariants/evm-chain.js';
import { tronAsEvm, tronHex } from '../../scripts/sim/invariants/tron-chain.js';

// Reorgs on the simulator's TRON (docs/simulation.md): the Anvil node under the fake java-tron is reorged like the EVM
// ones (faults/chain-evm.ts); the payer broadcasts a transfer the reorg dropped again (same bytes, same hash), so it
// lands once; a reorg that would replace a block holding a transaction the fake executed (it keeps those in memory and
// cannot put them back) is skipped.

let tron: SimTron;
beforeAll(async () => {
  tron = await startSimTron(21);
}, 120_000);
afterAll(async () => {
  await tron?.stop();
});

const landed = async (to: string) => transfers(tronAsEvm({ evm: [], tron: tron.contract })!, { to: [tronHex(to)!] });

describe('simulator TRON reorgs', () => {
  it("drops the payer's transfer; the payer broadcasts it again and it lands once", async () => {
    // The devnet's token deployments well below what the reorg replaces (it drops every transaction there).
    const deployed = BigInt(await tron.chain.node.provider.getBlockNumber());
    while (BigInt(await tron.chain.node.provider.getBlockNumber()) < deployed + 4n) await new Promise((res) => setTimeout(res, 250));
    const to = tronBase58(evmHexToTron(Wallet.createRandom().address));
    const hash = await tron.pay('USDT', to, 1_500_000n);
    const rebroadcast: string[] = [];
    // Deep enough to reach the transfer's block (a block a second), shallower than anything the fake executed.
    const r = await tron.reorg!({ depth: 3, drop: 'all' });
    expect(r).not.toBeNull();
    expect(r!.dropped.map((h) => h.toLowerCase())).toContain(hash.toLowerCase());
    expect(await landed(to)).toEqual([]);
    rebroadcast.push(...(await tron.resync!()));
    expect(rebroadcast.map((h) => h.toLowerCase())).toContain(hash.toLowerCase());
    const deadline = Date.now() + 30_000;
    while ((await landed(to)).length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 250));
    expect((await landed(to)).map((t) => [t.txHash, t.value])).toEqual([[hash.toLowerCase(), 1_500_000n]]);
  }, 120_000);

  it('is skipped while a block it would replace holds a transaction the fake executed', async () => {
    const env = { ...tron.env };
    const adapter = createChainAdapter(loadChainSettings(env, 'tron', 'test')!, env);
    const signer = new MnemonicSigner(DEVNET_MNEMONIC);
    const key = tronHotWalletKeyPath(9, 0);
    const hot = await tronAddressAt(signer, key);
    await tron.fundHotWallet(hot, 5n);
    // Payouts read balances at the solidified state (3 blocks behind): wait until it holds the funding.
    const funded = BigInt(await tron.chain.node.provider.getBlockNumber());
    while ((await tron.chain.fake.chain.solidHeight()) < funded) await new Promise((res) => setTimeout(res, 250));
    const to = tronBase58(evmHexToTron(Wallet.createRandom().address));
    const signed = await adapter.signTransfer(
      await adapter.buildTokenTransfer({ from: { key, address: tronBase58(hot) }, to, token: 'USDC', amount: 2_000_000n }),
      signer,
    );
    expect(await adapter.broadcast(signed)).toEqual({ status: 'accepted' });
    expect(tron.chain.fake.chain.holdsFrom(BigInt(await tron.chain.node.provider.getBlockNumber()) - 1n)).toBe(true);
    expect(await tron.reorg!({ depth: 2, drop: 'all' })).toBeNull();
    expect((await landed(to)).map((t) => t.value)).toEqual([2_000_000n]);
  }, 120_000);
});
