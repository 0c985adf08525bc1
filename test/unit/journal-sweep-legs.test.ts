import { describe, expect, it } from 'vitest';
import { sweepStepLegs } from '../../src/ledger/journal/sweep-entries.js';
import { normalizeLegs } from '../../src/ledger/journal/accounts.js';

// The legs of a sweep step's journal entry per network method (docs/journal.md "Sweeps"). The EVM paths are proven
// end to end by test/integration/journal-sweep*.test.ts; these pin the Solana and TRON cases and the token fee.

const solana = {
  network: 'solana' as const,
  mode: 'test' as const,
  token: 'USDC' as const,
  destination_kind: 'treasury' as const,
  destination: 'Tre4s',
};
const tron = {
  network: 'tron' as const,
  mode: 'test' as const,
  token: 'USDT' as const,
  destination_kind: 'hot_wallet' as const,
  destination: 'THot',
};

describe('sweep step legs', () => {
  it('Solana batch: tokens per source to the treasury, fee and new-account rent from the fee payer, closed accounts rent back to it', () => {
    const legs = normalizeLegs(
      sweepStepLegs(
        solana,
        { purpose: 'batch', from_address: 'Payer', step: { to: 'Tre4s', sources: ['A', 'B'] } },
        {
          txHash: 'sig',
          block: { height: 10n, hash: 'h' },
          swept: [
            { source: 'A', amount: 5_000_000n },
            { source: 'B', amount: 7_000_000n },
          ],
          elsewhere: 0n,
          fee: 10_000n,
          nativeMoved: 4_078_560n,
          rentPaid: 2_039_280n,
        },
      ),
    );
    expect(legs).toEqual(
      expect.arrayContaining([
        { account: 'address:solana:test:A', asset: 'solana:test:USDC', amount: -5_000_000n },
        { account: 'address:solana:test:B', asset: 'solana:test:USDC', amount: -7_000_000n },
        { account: 'treasury:solana:test:Tre4s', asset: 'solana:test:USDC', amount: 12_000_000n },
        // fee 10,000 + rent paid 2,039,280 − rent back 4,078,560, net into the payer
        { account: 'address:solana:test:Payer', asset: 'solana:test:native', amount: 4_078_560n - 10_000n - 2_039_280n },
        { account: 'fees:solana', asset: 'solana:test:native', amount: 10_000n + 2_039_280n - 4_078_560n },
      ]),
    );
    expect(legs).toHaveLength(5);
  });

  it('Solana close: no token moves; the fee from the fee payer, the closed accounts rent back to it', () => {
    const legs = normalizeLegs(
      sweepStepLegs(
        solana,
        { purpose: 'close', from_address: 'Payer', step: { to: 'Payer', sources: [] } },
        { txHash: 'sig2', block: { height: 11n, hash: 'h' }, swept: [], elsewhere: 0n, fee: 15_000n, nativeMoved: 4_078_560n },
      ),
    );
    expect(legs).toEqual([
      { account: 'address:solana:test:Payer', asset: 'solana:test:native', amount: 4_078_560n - 15_000n },
      { account: 'fees:solana', asset: 'solana:test:native', amount: 15_000n - 4_078_560n },
    ]);
  });

  it('TRON: activation moves TRX gas station → deposit; a delegation journals only its burnt TRX; a transfer its token and fee', () => {
    const landed = { txHash: 't', block: { height: 5n, hash: 'h' }, swept: [], elsewhere: 0n };
    expect(
      normalizeLegs(
        sweepStepLegs(
          tron,
          { purpose: 'activate', from_address: 'TGas', step: { to: 'TDep', sources: [] } },
          { ...landed, fee: 1_100_000n, nativeMoved: 1n },
        ),
      ),
    ).toEqual([
      { account: 'address:tron:test:TGas', asset: 'tron:test:native', amount: -1_100_001n },
      { account: 'fees:tron', asset: 'tron:test:native', amount: 1_100_000n },
      { account: 'address:tron:test:TDep', asset: 'tron:test:native', amount: 1n },
    ]);
    // Energy is a resource: a delegation that burnt nothing (bandwidth covered) journals nothing at all.
    expect(
      normalizeLegs(
        sweepStepLegs(
          tron,
          { purpose: 'delegate', from_address: 'TRes', step: { to: 'TDep', sources: [] } },
          { ...landed, fee: 0n, nativeMoved: 0n },
        ),
      ),
    ).toEqual([]);
    const transfer = normalizeLegs(
      sweepStepLegs(
        tron,
        { purpose: 'transfer', from_address: 'TDep', step: { to: 'THot', sources: ['TDep'] } },
        { ...landed, swept: [{ source: 'TDep', amount: 9_990_000n }], elsewhere: 10_000n, fee: 345_000n, nativeMoved: 0n },
      ),
    );
    expect(transfer).toEqual(
      expect.arrayContaining([
        // A token fee (elsewhere) leaves the source for `external`: the source's total is exactly what left it.
        { account: 'address:tron:test:TDep', asset: 'tron:test:USDT', amount: -10_000_000n },
        { account: 'address:tron:test:THot', asset: 'tron:test:USDT', amount: 9_990_000n },
        { account: 'external', asset: 'tron:test:USDT', amount: 10_000n },
        { account: 'address:tron:test:TDep', asset: 'tron:test:native', amount: -345_000n },
        { account: 'fees:tron', asset: 'tron:test:native', amount: 345_000n },
      ]),
    );
    expect(transfer).toHaveLength(5);
  });
});
