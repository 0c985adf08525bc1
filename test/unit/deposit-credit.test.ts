import { describe, expect, it } from 'vitest';
import { type CreditableSession, type FinalDeposit, decideCredits } from '../../src/domain/deposit-credit.js';

// The credit decision of confirmFinalDeposits as a pure function (src/domain/deposit-credit.ts). The ledger's
// integration tests (test/integration/deposits*.test.ts, payment-outcomes) prove the writes around it.

const T0 = new Date('2026-11-28T12:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const USDT6 = (token: string) => (token === 'USDT' ? 6 : token === 'USDC18' ? 18 : 6);

function session(over: Partial<CreditableSession> = {}): CreditableSession {
  return {
    id: 'cs_1',
    merchantId: 'm_1',
    network: 'ethereum',
    token: 'USDT',
    status: 'open',
    expiresAt: at(600),
    targetAmountMinor: 1000n, // 10.00
    receivedBase: 0n,
    ...over,
  };
}
function deposit(id: string, amountBase: bigint, over: Partial<FinalDeposit> = {}): FinalDeposit {
  return { id, sessionId: 'cs_1', token: 'USDT', amountBase, blockTime: at(10), ...over };
}
const rules = (toleranceBps = 0) => ({ network: 'ethereum', tokenDecimals: USDT6, toleranceBps: () => toleranceBps });

describe('decideCredits', () => {
  it('adds partial payments up and pays the session with the deposit that completes it', () => {
    const r = decideCredits([deposit('d1', 4_000_000n), deposit('d2', 6_000_000n), deposit('d3', 1n)], [session()], rules());
    expect(r.decisions).toEqual([
      { depositId: 'd1', disposition: 'credited', reason: null },
      { depositId: 'd2', disposition: 'credited', reason: null },
      { depositId: 'd3', disposition: 'unmatched', reason: 'session_paid' },
    ]);
    expect(r.credited).toEqual([{ sessionId: 'cs_1', received: 10_000_000n, paidBy: 'd2' }]);
    expect(r.failedTransfers).toEqual([]);
  });

  it('counts what the session received before the batch', () => {
    const r = decideCredits([deposit('d2', 2_500_000n)], [session({ receivedBase: 7_500_000n })], rules());
    expect(r.credited).toEqual([{ sessionId: 'cs_1', received: 10_000_000n, paidBy: 'd2' }]);
  });

  it('settles within the merchant tolerance, and not below it', () => {
    expect(decideCredits([deposit('d1', 9_900_000n)], [session()], rules(100)).credited[0]!.paidBy).toBe('d1');
    expect(decideCredits([deposit('d1', 9_899_999n)], [session()], rules(100)).credited[0]!.paidBy).toBeNull();
  });

  it('never credits a look-alike, even named as the session token and enough to pay it: unsupported_token, no payment.failed', () => {
    const throwing = {
      network: 'ethereum',
      tokenDecimals: () => {
        throw new Error('decimals of a look-alike asked');
      },
      toleranceBps: () => 0,
    };
    const r = decideCredits(
      [
        deposit('alike', 10_000_000n, { unsupported: true }),
        deposit('alike2', 5n, { unsupported: true, sessionId: null, token: 'USDC.e' }),
      ],
      [session()],
      throwing,
    );
    expect(r.decisions).toEqual([
      { depositId: 'alike', disposition: 'unmatched', reason: 'unsupported_token' },
      { depositId: 'alike2', disposition: 'unmatched', reason: 'unsupported_token' },
    ]);
    expect(r.credited).toEqual([]);
    expect(r.failedTransfers).toEqual([]);
    // The real token after it pays the session as usual.
    const after = decideCredits([deposit('alike', 10_000_000n, { unsupported: true }), deposit('real', 10_000_000n)], [session()], rules());
    expect(after.credited).toEqual([{ sessionId: 'cs_1', received: 10_000_000n, paidBy: 'real' }]);
  });

  it('names why a deposit credits nothing', () => {
    const sessions = [session(), session({ id: 'cs_paid', status: 'paid' }), session({ id: 'cs_canceled', status: 'canceled' })];
    const r = decideCredits(
      [
        deposit('late', 1n, { blockTime: at(601) }),
        deposit('nosession', 1n, { sessionId: null }),
        deposit('unknown', 1n, { sessionId: 'cs_gone' }),
        deposit('paid', 1n, { sessionId: 'cs_paid' }),
        deposit('canceled', 1n, { sessionId: 'cs_canceled' }),
      ],
      sessions,
      rules(),
    );
    expect(r.decisions.map((d) => [d.depositId, d.reason])).toEqual([
      ['late', 'late'],
      ['nosession', 'no_session'],
      ['unknown', 'no_session'],
      ['paid', 'session_paid'],
      ['canceled', 'session_canceled'],
    ]);
    expect(r.credited).toEqual([]);
  });

  it('credits an expired session for a transfer in a block at or before expires_at', () => {
    const r = decideCredits([deposit('d1', 10_000_000n, { blockTime: at(600) })], [session({ status: 'expired' })], rules());
    expect(r.credited).toEqual([{ sessionId: 'cs_1', received: 10_000_000n, paidBy: 'd1' }]);
  });

  it('reports a transfer of another token or network as failed once, only while the session is open, unpaid and in time', () => {
    const r = decideCredits(
      [
        deposit('usdc', 5_000_000n, { token: 'USDC' }),
        deposit('zero', 0n, { token: 'USDC' }),
        deposit('late-usdc', 5n, { token: 'USDC', blockTime: at(700) }),
        deposit('pay', 10_000_000n),
        deposit('after-paid', 7n, { token: 'USDC' }),
      ],
      [session()],
      rules(),
    );
    expect(r.decisions.filter((d) => d.reason === 'not_selected').map((d) => d.depositId)).toEqual([
      'usdc',
      'zero',
      'late-usdc',
      'after-paid',
    ]);
    expect(r.failedTransfers).toEqual([{ sessionId: 'cs_1', token: 'USDC', amountBase: 5_000_000n }]);
    const onBsc = decideCredits([deposit('d1', 10_000_000n)], [session({ network: 'bsc' })], rules());
    expect(onBsc.decisions[0]!.reason).toBe('not_selected');
    expect(onBsc.failedTransfers).toHaveLength(1);
  });

  it('reads each token decimals from the rules (18-decimal tokens)', () => {
    const r = decideCredits([deposit('d1', 10n * 10n ** 18n, { token: 'USDC18' })], [session({ token: 'USDC18' })], rules());
    expect(r.credited).toEqual([{ sessionId: 'cs_1', received: 10n * 10n ** 18n, paidBy: 'd1' }]);
  });
});
