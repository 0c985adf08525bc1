import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { NetworkWatcher } from '../../../src/watcher/network-watcher.js';
import { listUnmatchedDeposits } from '../../../src/ledger/payments/deposits.js';
import {
  TokenRegistryMismatchError,
  TransferRejectedError,
  type SignedTransfer,
  type TokenSymbol,
  type TokenTransferRequest,
} from '../../../chains/types.js';
import { createBoundSession, depositsFor, eventsFor, sessionRow, signer } from '../evm-tokens/scenario.js';
import type { ConformanceFixture } from './fixture.js';

// The scenarios every chain adapter must pass, written once: detection through the real watcher and ledger
// (right token, look-alikes and failed transfers never credited, confirmation depth, reorg or drop), and the sending
// side (refusals before signing, success with the delivered amount, failure on chain, proven-dead bytes).
// A family joins by writing a ConformanceFixture and calling describeAdapterConformance from its family's test file.

interface Deposit {
  tx_hash: string;
  log_index: number;
  to_address: string;
  from_address: string | null;
  token: string;
  token_contract: string;
  amount_base: bigint;
  status: string;
  disposition: string | null;
  unmatched_reason: string | null;
}

export function describeAdapterConformance(title: string, setup: () => Promise<ConformanceFixture>): void {
  describe(`adapter conformance: ${title}`, () => {
    let f: ConformanceFixture;
    let watcher: NetworkWatcher;

    /** Polls until the watcher reached the head; every step commits like the service's watcher. */
    async function drain() {
      for (let i = 0; i < 50; i++) if ((await watcher.step()).caughtUp) return;
      throw new Error('watcher did not catch up');
    }
    const decimals = (token: TokenSymbol) => f.adapter.tokens.find((t) => t.symbol === token)!.decimals;
    /** Minor units (cents) of a stablecoin in the token's base units. */
    const base = (token: TokenSymbol, minor: bigint) => minor * 10n ** BigInt(decimals(token) - 2);
    const contractOf = (token: TokenSymbol) => f.adapter.normalizeAddress(f.adapter.tokens.find((t) => t.symbol === token)!.address);
    const session = (amountMinor: bigint, token: TokenSymbol, o: { expiresInSec?: number } = {}) =>
      createBoundSession(f.db, f.adapter, f.merchant, { amountMinor, token, ...o });
    const deposits = async (sessionId: string) =>
      (
        await sql<Deposit>`select tx_hash, log_index, to_address, from_address, token, token_contract, amount_base, status, disposition, unmatched_reason
        from deposits where session_id = ${sessionId} order by block_number, log_index`.execute(f.db)
      ).rows;

    beforeAll(async () => {
      f = await setup();
      watcher = new NetworkWatcher({ db: f.db, adapter: f.adapter, pollIntervalMs: 50 });
      await drain();
    });
    afterAll(async () => {
      await f?.close();
    });

    describe('detection', () => {
      it('checks the registry tokens on chain and refuses other decimals', async () => {
        await expect(f.adapter.verifyTokens()).resolves.toBeUndefined();
        const wrong = f.adapterWith([{ ...f.adapter.tokens[0]!, decimals: 18 }]);
        await expect(wrong.verifyTokens()).rejects.toThrow(TokenRegistryMismatchError);
        await expect(wrong.verifyTokens()).rejects.toThrow(/18/);
      });

      it('credits a transfer to a derived address only at the confirmation depth, once, in exact base units', async () => {
        const s = await session(1250n, 'USDC');
        expect(s.address).toMatch(f.addressPattern);
        const tx = await f.pay('USDC', [{ to: s.address, amount: base('USDC', 1250n) }]);
        expect(tx).toMatch(f.txHashPattern);
        await f.land();
        await drain();
        expect((await sessionRow(f.db, s.id)).status).toBe('open');
        expect(await deposits(s.id)).toMatchObject([{ status: 'provisional', disposition: null }]);
        await f.advance(f.stepsToFinal - 1);
        await drain();
        expect((await sessionRow(f.db, s.id)).status).toBe('open'); // one step short of final
        expect(await deposits(s.id)).toMatchObject([{ status: 'provisional' }]);
        await f.advance(1);
        await drain();
        expect(await sessionRow(f.db, s.id)).toMatchObject({ status: 'paid', received_base: base('USDC', 1250n) });
        const [d, ...more] = await deposits(s.id);
        expect(more).toEqual([]);
        expect(d).toMatchObject({
          tx_hash: tx,
          to_address: s.address,
          from_address: f.payer,
          token: 'USDC',
          token_contract: contractOf('USDC'),
          amount_base: base('USDC', 1250n),
          status: 'confirmed',
          disposition: 'credited',
        });
        const events = await eventsFor(f.db, s.id);
        expect(events.map((e) => e.type)).toEqual(['payment.completed']);
        expect((events[0]!.payload as { data: { object: Record<string, string> } }).data.object).toMatchObject({
          amount: '12.50',
          currency: 'USDC',
          status: 'completed',
          session_id: s.id,
        });
        await f.advance(5);
        await drain();
        expect(await eventsFor(f.db, s.id)).toHaveLength(1);
        expect(await deposits(s.id)).toHaveLength(1);
      });

      it('adds up two partial transfers; an overpayment is paid with the excess recorded', async () => {
        const a = await session(1000n, 'USDT');
        const b = await session(1000n, 'USDT');
        await f.pay('USDT', [{ to: a.address, amount: base('USDT', 400n) }]);
        await f.land();
        await f.advance(f.stepsToFinal);
        await drain();
        expect(await sessionRow(f.db, a.id)).toMatchObject({ status: 'open', received_base: base('USDT', 400n) });
        await f.pay('USDT', [{ to: a.address, amount: base('USDT', 600n) }]);
        await f.pay('USDT', [{ to: b.address, amount: base('USDT', 1000n) + 1n }]);
        await f.land();
        await f.advance(f.stepsToFinal);
        await drain();
        expect(await sessionRow(f.db, a.id)).toMatchObject({ status: 'paid', received_base: base('USDT', 1000n) });
        expect(await sessionRow(f.db, b.id)).toMatchObject({ status: 'paid', received_base: base('USDT', 1000n) + 1n });
        const st = await sql<{ overpaid_base: bigint }>`select overpaid_base from session_settlements where session_id = ${b.id}`.execute(
          f.db,
        );
        expect(st.rows[0]!.overpaid_base).toBe(1n);
        expect((await deposits(a.id)).map((d) => d.disposition)).toEqual(['credited', 'credited']);
      });

      it('pays two sessions in one transaction separately (distinct log indexes) and ignores an address no session has', async () => {
        const s1 = await session(300n, 'USDC');
        const s2 = await session(700n, 'USDC');
        const stranger = f.newDestination();
        const tx = await f.pay('USDC', [
          { to: s1.address, amount: base('USDC', 300n) },
          { to: s2.address, amount: base('USDC', 700n) },
          { to: stranger, amount: base('USDC', 500n) },
        ]);
        await f.land();
        await f.advance(f.stepsToFinal);
        await drain();
        expect((await sessionRow(f.db, s1.id)).status).toBe('paid');
        expect((await sessionRow(f.db, s2.id)).status).toBe('paid');
        const [d1, d2] = [(await deposits(s1.id))[0]!, (await deposits(s2.id))[0]!];
        expect([d1.tx_hash, d2.tx_hash]).toEqual([tx, tx]);
        expect(d1.log_index).not.toBe(d2.log_index);
        const all = await sql<{ n: bigint }>`select count(*)::bigint as n from deposits where tx_hash = ${tx}`.execute(f.db);
        expect(all.rows[0]!.n).toBe(2n);
      });

      it('never credits a look-alike token, a transfer that failed on chain, or the other registry token', async () => {
        const s = await session(500n, 'USDT');
        await f.payLookAlike(s.address, base('USDT', 500n));
        await f.payFailing('USDT', s.address, 10n ** 15n);
        await f.pay('USDC', [{ to: s.address, amount: base('USDC', 500n) }]); // the session asked for USDT
        await f.land();
        await f.advance(f.stepsToFinal);
        await drain();
        // Only the registry USDC transfer is recorded, and as not selected: the look-alike and the failure are not.
        expect(await deposits(s.id)).toMatchObject([
          { token: 'USDC', status: 'confirmed', disposition: 'unmatched', unmatched_reason: 'not_selected' },
        ]);
        expect(await sessionRow(f.db, s.id)).toMatchObject({ status: 'open', received_base: 0n });
        expect((await eventsFor(f.db, s.id)).map((e) => e.type)).not.toContain('payment.completed');
      });

      it('a transfer after expiry becomes an unmatched deposit listed for the operator', async () => {
        const s = await session(100n, 'USDT');
        await sql`update payment_sessions set expires_at = now() - interval '10 seconds' where id = ${s.id}`.execute(f.db);
        await f.pay('USDT', [{ to: s.address, amount: base('USDT', 100n) }]);
        await f.land();
        await f.advance(f.stepsToFinal);
        await drain();
        expect((await sessionRow(f.db, s.id)).status).toBe('open');
        expect(await depositsFor(f.db, s.id)).toMatchObject([{ status: 'confirmed', disposition: 'unmatched', unmatched_reason: 'late' }]);
        const list = await listUnmatchedDeposits(f.db, { mode: 'test' });
        expect(list.some((d) => d.sessionId === s.id && d.amountBase === base('USDT', 100n))).toBe(true);
      });

      it('a transfer that leaves the chain (reorg below the depth, or lost by the leader) pays nothing; landing again pays once', async () => {
        expect(Number(Boolean(f.reorg)) + Number(Boolean(f.drop))).toBe(1);
        const s = await session(2000n, 'USDC');
        const amount = base('USDC', 2000n);
        if (f.reorg) {
          const t = await f.reorg('USDC', s.address, amount);
          await drain();
          expect(await deposits(s.id)).toMatchObject([{ tx_hash: t.txHash, status: 'provisional' }]);
          await t.forget();
          await drain();
          expect(await deposits(s.id)).toMatchObject([{ status: 'orphaned' }]);
          await f.advance(f.stepsToFinal + 1);
          await drain();
          expect(await sessionRow(f.db, s.id)).toMatchObject({ status: 'open', received_base: 0n });
          expect(await eventsFor(f.db, s.id)).toEqual([]);
          await t.replay();
        } else {
          const t = await f.drop!('USDC', s.address, amount);
          await t.forget();
          await f.land();
          await f.advance(f.stepsToFinal + 1);
          await drain();
          expect(await deposits(s.id)).toEqual([]);
          expect(await sessionRow(f.db, s.id)).toMatchObject({ status: 'open', received_base: 0n });
          await t.replay();
        }
        await f.land();
        await f.advance(f.stepsToFinal);
        await drain();
        expect(await sessionRow(f.db, s.id)).toMatchObject({ status: 'paid', received_base: amount });
        expect((await deposits(s.id)).filter((d) => d.status === 'confirmed')).toMatchObject([
          { disposition: 'credited', amount_base: amount },
        ]);
        expect((await eventsFor(f.db, s.id)).map((e) => e.type)).toEqual(['payment.completed']);
      });
    });

    describe('payout outcome', () => {
      const request = async (to: string, amount: bigint, token: TokenSymbol = 'USDT'): Promise<TokenTransferRequest> => {
        const nonce = await f.adapter.getAccountNonce(f.hotWallet.address);
        return { from: f.hotWallet, to, token, amount, ...(nonce !== null ? { nonce } : {}) };
      };
      const sign = async (r: TokenTransferRequest) => f.adapter.signTransfer(await f.adapter.buildTokenTransfer(r), signer);
      /** The engine's rule for re-signing: the adapter says the bytes expired, or the chain refuses them for good. */
      async function provenDead(signed: SignedTransfer): Promise<boolean> {
        if (await f.adapter.isExpired(signed)) return true;
        const r = await f.adapter.broadcast(signed);
        return r.status === 'rejected' && (r.reason === 'nonce_too_low' || r.reason === 'expired');
      }
      const rejection = (p: Promise<unknown>) =>
        p.then(
          () => null,
          (e: unknown) => e,
        );

      it('refuses before signing: a token balance too small, a malformed destination, no native coin for the fee', async () => {
        const to = f.newDestination();
        // Both tokens: on EVM, USDT is Tether-style (a short balance reverts with no reason) and USDC names the shortfall.
        for (const token of ['USDT', 'USDC'] as const) {
          const short = await rejection(f.adapter.buildTokenTransfer(await request(to, 10n ** 15n, token)));
          expect(short, token).toBeInstanceOf(TransferRejectedError);
          expect(short, token).toMatchObject({ reason: 'insufficient_token_balance' });
        }
        const malformed = await rejection(f.adapter.buildTokenTransfer({ ...(await request(to, 1n)), to: 'not-an-address' }));
        expect(malformed).toBeInstanceOf(TransferRejectedError);
        expect(malformed).toMatchObject({ reason: 'invalid' });
        const { native } = await f.adapter.getBalances(f.hotWallet.address);
        await f.setNativeBalance(f.hotWallet.address, 0n);
        try {
          await expect(f.adapter.buildTokenTransfer(await request(to, 1n))).rejects.toMatchObject({ reason: 'insufficient_gas' });
        } finally {
          await f.setNativeBalance(f.hotWallet.address, native);
        }
        expect(await f.tokenBalance('USDT', to)).toBe(0n);
      });

      it('success: final only at the depth, the delivered amount read from the chain, re-broadcast idempotent', async () => {
        const to = f.newDestination();
        const before = await f.tokenBalance('USDT', f.hotWallet.address);
        const nativeBefore = await f.nativeBalance?.(f.hotWallet.address);
        const signed = await sign(await request(to, 12_500_000n));
        expect(signed.hash).toMatch(f.txHashPattern);
        expect(await f.adapter.getTransactionOutcome(signed.hash)).toEqual({ status: 'unknown' }); // signed, not sent
        expect(await f.adapter.broadcast(signed)).toEqual({ status: 'accepted' });
        await f.land();
        expect(await f.adapter.getTransactionOutcome(signed.hash)).toMatchObject({ status: 'succeeded', final: false });
        expect(await f.adapter.broadcast(signed)).toEqual({ status: 'already_known' });
        await f.advance(f.stepsToFinal + 1);
        const outcome = await f.adapter.getTransactionOutcome(signed.hash);
        expect(outcome).toMatchObject({ status: 'succeeded', final: true });
        expect(outcome.status === 'succeeded' && outcome.fee).toBeGreaterThan(0n);
        // The reported fee is what the sender lost, to the base unit (a rollup's L1 data fee included).
        if (f.nativeBalance && nativeBefore !== undefined && outcome.status === 'succeeded')
          expect(nativeBefore - (await f.nativeBalance(f.hotWallet.address))).toBe(outcome.fee);
        const from = f.adapter.normalizeAddress(f.hotWallet.address)!;
        const delivery = await f.adapter.readDelivery(signed.hash, 'USDT', from, f.adapter.normalizeAddress(to)!);
        expect(delivery).toMatchObject({ delivered: 12_500_000n, elsewhere: 0n });
        // Solana: the payout created the new recipient's token account, and the rent it locked there is reported (the
        // journal books it, docs/journal.md); no other family locks rent.
        if (f.adapter.family === 'solana') expect(delivery?.rentPaid).toBeGreaterThan(0n);
        else expect(delivery?.rentPaid ?? 0n).toBe(0n);
        expect(await f.tokenBalance('USDT', to)).toBe(12_500_000n);
        expect(await f.tokenBalance('USDT', f.hotWallet.address)).toBe(before - 12_500_000n);
        expect(await f.adapter.broadcast(signed)).toEqual({ status: 'already_known' });
        await f.land();
        expect(await f.tokenBalance('USDT', to)).toBe(12_500_000n); // the repeat moved nothing
      });

      it('failure on chain: failed and final, nothing delivered', async () => {
        const to = f.newDestination();
        const signed = await sign(await request(to, 3_000_000n));
        await f.landFailing(signed, 'USDT');
        await f.advance(f.stepsToFinal + 1);
        expect(await f.adapter.getTransactionOutcome(signed.hash)).toMatchObject({ status: 'failed', reason: 'reverted', final: true });
        expect(
          await f.adapter.readDelivery(
            signed.hash,
            'USDT',
            f.adapter.normalizeAddress(f.hotWallet.address)!,
            f.adapter.normalizeAddress(to)!,
          ),
        ).toBeNull();
        expect(await f.tokenBalance('USDT', to)).toBe(0n);
      });

      it('bytes that can never land are proven dead, never before; re-signed, exactly one transfer lands', async () => {
        const to = f.newDestination();
        const stale = await sign(await request(to, 2_000_000n));
        expect(await f.adapter.isExpired(stale)).toBe(false);
        await f.outlive(stale);
        expect(await provenDead(stale)).toBe(true);
        expect(await f.adapter.getTransactionOutcome(stale.hash)).toEqual({ status: 'unknown' });
        const fresh = await sign(await request(to, 2_000_000n));
        expect(fresh.hash).not.toBe(stale.hash);
        expect(await f.adapter.broadcast(fresh)).toEqual({ status: 'accepted' });
        await f.land();
        expect(await provenDead(stale)).toBe(true); // the old bytes stay refused
        await f.advance(f.stepsToFinal + 1);
        expect(await f.adapter.getTransactionOutcome(fresh.hash)).toMatchObject({ status: 'succeeded', final: true });
        expect(await f.adapter.getTransactionOutcome(stale.hash)).toEqual({ status: 'unknown' });
        expect(await f.tokenBalance('USDT', to)).toBe(2_000_000n);
      });
    });
  });
}
