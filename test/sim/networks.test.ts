import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { Wallet } from 'ethers';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import { type SimSolana, startSimSolana } from '../../scripts/sim/env/solana.js';
import { type SimTron, startSimTron } from '../../scripts/sim/env/tron.js';
import { dropNextSolanaTransactions, expireSolanaBlockhashes } from '../../scripts/sim/faults/chain-solana.js';
import { solanaReader } from '../../scripts/sim/invariants/solana-chain.js';
import { tronAsEvm, tronHex } from '../../scripts/sim/invariants/tron-chain.js';
import { transfers } from '../../scripts/sim/invariants/evm-chain.js';
import { createPrng } from '../../scripts/sim/prng.js';
import { buildSchedule, SOLANA_FAULT_KINDS, SOLANA_STALL } from '../../scripts/sim/schedule.js';

// The simulator's Solana and TRON (docs/simulation.md): the schedule draws the Solana faults only when Solana runs;
// the Solana payer behaves as a wallet (a dropped transaction or an expired blockhash: it signs again, and the payment
// lands exactly once); the TRON payer's transfers land on the fake java-tron's chain, and the wallet-API fault proxy
// forwards by path.

const base = { activeMs: 20_000, intensity: 1, confirmations: 3 };

describe('simulator schedule with Solana and TRON', () => {
  it('draws the Solana fault kinds only when Solana runs, and Anvil reorgs only on an Anvil-backed network of the seed', () => {
    const kinds = (networks: string[]) => {
      const seen = new Set<string>();
      const reorgs = new Set<string>();
      for (let seed = 0; seed < 300; seed++)
        for (const f of buildSchedule(createPrng(seed).fork('faults'), { ...base, networks })) {
          seen.add(f.kind);
          if (f.kind === 'reorg') reorgs.add(String(f.params.network));
          if (f.kind === SOLANA_STALL) {
            const p = f.params as { forMs: number; expire: boolean };
            expect(p.forMs).toBeGreaterThanOrEqual(1000);
            expect(p.forMs).toBeLessThanOrEqual(4000);
            expect(typeof p.expire).toBe('boolean');
          }
          if (f.kind === 'solana.drop') {
            const p = f.params as { count?: number; forMs?: number };
            if (p.count !== undefined) expect(p.count).toBeGreaterThanOrEqual(1);
            else expect(p.forMs).toBeGreaterThanOrEqual(1000);
          }
        }
      return { seen, reorgs };
    };
    const evmOnly = kinds(['ethereum', 'bsc']);
    for (const k of SOLANA_FAULT_KINDS) expect(evmOnly.seen.has(k)).toBe(false);
    const mixed = kinds(['ethereum', 'solana', 'tron']);
    for (const k of SOLANA_FAULT_KINDS) expect(mixed.seen.has(k)).toBe(true);
    expect(evmOnly.seen.has(SOLANA_STALL)).toBe(false);
    expect(mixed.seen.has(SOLANA_STALL)).toBe(true);
    // TRON's node is an Anvil under the fake java-tron: reorged too.
    expect([...mixed.reorgs].sort()).toEqual(['ethereum', 'tron']);
    expect([...kinds(['solana']).reorgs]).toEqual(['solana']); // no Anvil: drawn, then skipped by the runner
    expect(kinds(['tron']).seen.has('solana.drop')).toBe(false);
    // An EVM-only seed's schedule is what it was before Solana joined: the Solana kinds add no draw to it.
    const s1 = buildSchedule(createPrng(1).fork('faults'), { ...base, networks: ['ethereum'] });
    expect(s1.every((f) => !f.kind.startsWith('solana.'))).toBe(true);
    // The CI seed on three networks draws no reorg: TRON's reorgs left its schedule as it was. The stalled leader comes
    // from a stream of its own: the seed's other faults are the ones it drew before (8649 kill, 10550 drop).
    const ci2 = buildSchedule(createPrng(2).fork('faults'), { ...base, activeMs: 15_000, networks: ['ethereum', 'solana', 'tron'] });
    expect(ci2.map((f) => [f.at, f.kind, f.params])).toEqual([
      [2781, SOLANA_STALL, { forMs: 3110, expire: false }],
      [8649, 'kill', { role: 'api' }],
      [10550, 'solana.drop', { count: 2 }],
    ]);
  });
});

describe('simulator Solana payer', () => {
  let sol: SimSolana;
  beforeAll(async () => {
    sol = await startSimSolana(7);
  }, 60_000);
  afterAll(async () => {
    await sol?.stop();
  });

  it('pays exactly once through a dropped transaction and an expired blockhash', async () => {
    const reader = solanaReader({ ...sol.contract, confirmations: 'confirmed' });
    const owner = Keypair.generate().publicKey.toBase58();
    expect((await dropNextSolanaTransactions(sol.contract.rpcUrl, { count: 1 })).pending).toBe(1);
    const first = await sol.pay('USDT', owner, 1_250_000n);
    await expireSolanaBlockhashes(sol.contract.rpcUrl);
    const second = await sol.pay('USDC', owner, 2_000_000n);
    expect(first).not.toBe(second);
    const credits = await reader.creditsTo(owner);
    expect(credits.map((c) => [c.signature, c.token, c.amount])).toEqual([
      [first, 'USDT', 1_250_000n],
      [second, 'USDC', 2_000_000n],
    ]);
  }, 120_000);

  it('funds a hot wallet with SOL and both tokens, naming the token transfers', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    const f = await sol.fundHotWallet(hot, 5n);
    expect(f.native).toBe(10_000_000_000n);
    expect(f.txIds).toHaveLength(2);
    const reader = solanaReader({ ...sol.contract, confirmations: 'confirmed' });
    const credits = await reader.creditsTo(hot);
    // The signatures as they are (base58 is case-sensitive), not lowercased.
    expect(credits.map((c) => c.signature).sort()).toEqual([...f.txIds].sort());
    expect(credits.map((c) => c.amount)).toEqual([5_000_000n, 5_000_000n]);
    expect(sol.rpc.validator.account(hot)?.lamports).toBe(10_000_000_000n);
  }, 120_000);
});

describe('simulator TRON', () => {
  let tron: SimTron;
  beforeAll(async () => {
    tron = await startSimTron(9);
  }, 120_000);
  afterAll(async () => {
    await tron?.stop();
  });

  it('pays a base58 address on the chain the invariants read, and funds a hot wallet with TRX and tokens', async () => {
    const to = tronBase58(evmHexToTron(Wallet.createRandom().address));
    const hash = await tron.pay('USDC', to, 3_500_000n);
    const chain = tronAsEvm({ evm: [], tron: tron.contract })!;
    const seen = await transfers(chain, { to: [tronHex(to)!] });
    expect(seen.map((t) => [t.txHash, t.token, t.value])).toEqual([[hash.toLowerCase(), 'USDC', 3_500_000n]]);

    const hot = tronBase58(evmHexToTron(Wallet.createRandom().address));
    const f = await tron.fundHotWallet(hot, 2n);
    expect(f.native).toBe(1_000_000_000n);
    // Each token transfer once, by its txID as the journal names it (bare hex, no 0x).
    const got = await transfers(chain, { to: [tronHex(hot)!] });
    expect(got.map((t) => t.value)).toEqual([2_000_000n, 2_000_000n]);
    expect([...f.txIds].sort()).toEqual(got.map((t) => t.txHash.replace(/^0x/, '')).sort());
  }, 120_000);

  it("forwards the wallet API by path through its fault proxy, and answers a 5xx window with the service's errors", async () => {
    const wallet = tron.proxies.find((p) => p.protocol === 'http')!;
    const url = `${tron.env.CHAIN_TRON_TEST_FULL_HOST}/wallet/getnowblock`;
    const ok = await fetch(url, { method: 'POST', body: '{}' });
    expect(ok.status).toBe(200);
    const block = (await ok.json()) as { block_header?: { raw_data?: { number?: number } } };
    expect(block.block_header?.raw_data?.number).toBeGreaterThan(0);
    wallet.proxy.setFaults({ http5xxRate: 1 });
    try {
      expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(503);
    } finally {
      wallet.proxy.setFaults({ http5xxRate: 0 });
    }
  }, 60_000);
});
