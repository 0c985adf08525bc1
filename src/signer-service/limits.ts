import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { signedLimitedTotals, type LimitedPurpose } from '../ledger/signer/signer-audit.js';
import { refuse } from './refusal.js';

// The signer's limits (docs/signer.md, "Limits"): what it signs of refund payouts, and of sweeps to a treasury address
// changed recently, per merchant and network, in token units (USDT and USDC together, each at its own decimals), over
// a rolling hour and a rolling day. Counted from the audit's signed rows, each refund (each sweep step) once at its
// largest amount (a fee-bumped replacement is the same money). Sweeps to the refunds hot wallet are not limited.

export interface SignerLimits {
  /** Token units (decimal string, e.g. "10000"), per merchant and network, rolling hour. */
  refundPerHour: string;
  /** Token units, per merchant and network, rolling 24 hours. */
  refundPerDay: string;
  /** Token units per merchant and network, rolling hour, swept to a treasury changed in the last `sweepRecentHours`. */
  sweepPerHour?: string;
  /** The same, rolling 24 hours. */
  sweepPerDay?: string;
  /** How long (hours) after a change of its treasury address a merchant's sweeps to it are limited. */
  sweepRecentHours?: number;
}

export const DEFAULT_SIGNER_LIMITS: Required<SignerLimits> = {
  refundPerHour: '10000',
  refundPerDay: '50000',
  sweepPerHour: '10000',
  sweepPerDay: '50000',
  sweepRecentHours: 24,
};

/** Amounts are compared at this common scale: 10^-SCALE token units. */
const SCALE = 24;
const DECIMAL = /^\d{1,18}(\.\d{1,18})?$/;

/**
 * SIGNER_REFUND_LIMIT_PER_HOUR / _PER_DAY, SIGNER_SWEEP_LIMIT_PER_HOUR / _PER_DAY (token units) and
 * SIGNER_SWEEP_RECENT_HOURS (whole hours); throws naming the variable.
 */
export function signerLimitsFrom(env: Record<string, string | undefined>): Required<SignerLimits> {
  const read = (name: string, fallback: string): string => {
    const v = env[name]?.trim();
    if (v === undefined || v === '') return fallback;
    if (!DECIMAL.test(v)) throw new Error(`${name} must be a non-negative decimal number of token units, e.g. 10000`);
    return v;
  };
  return {
    refundPerHour: read('SIGNER_REFUND_LIMIT_PER_HOUR', DEFAULT_SIGNER_LIMITS.refundPerHour),
    refundPerDay: read('SIGNER_REFUND_LIMIT_PER_DAY', DEFAULT_SIGNER_LIMITS.refundPerDay),
    sweepPerHour: read('SIGNER_SWEEP_LIMIT_PER_HOUR', DEFAULT_SIGNER_LIMITS.sweepPerHour),
    sweepPerDay: read('SIGNER_SWEEP_LIMIT_PER_DAY', DEFAULT_SIGNER_LIMITS.sweepPerDay),
    sweepRecentHours: hours(env.SIGNER_SWEEP_RECENT_HOURS, DEFAULT_SIGNER_LIMITS.sweepRecentHours),
  };
}

function hours(raw: string | undefined, fallback: number): number {
  const v = raw?.trim();
  if (v === undefined || v === '') return fallback;
  if (!/^\d{1,6}$/.test(v)) throw new Error('SIGNER_SWEEP_RECENT_HOURS must be a whole number of hours, e.g. 24');
  return Number(v);
}

function scaledUnits(text: string): bigint {
  if (!DECIMAL.test(text)) throw new Error(`not a decimal number of token units: ${text}`);
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 10n ** BigInt(SCALE) + BigInt(frac.padEnd(SCALE, '0'));
}

const scaledBase = (amount: bigint, decimals: number): bigint => amount * 10n ** BigInt(SCALE - decimals);

/**
 * Refuses `over_limit` when signing `amount` for `objectId` (a refund payout, or a sweep step sending tokens to a
 * recently changed treasury) would take the merchant's such sends on this network over a limit. The caller holds the
 * merchant's limit lock (lockSignerLimits) until its audit row is written.
 */
export async function checkLimits(
  db: Kysely<Database>,
  limits: SignerLimits,
  o: {
    purpose: LimitedPurpose;
    merchantId: string;
    network: string;
    mode: string;
    objectId: string;
    amount: bigint;
    decimals: number;
    decimalsOf: (token: string) => number | undefined;
    now: Date;
  },
): Promise<void> {
  const others = await signedLimitedTotals(db, { ...o, except: o.objectId });
  const own = scaledBase(o.amount, o.decimals);
  let hour = own;
  let day = own;
  for (const r of others) {
    const d = o.decimalsOf(r.token);
    if (d === undefined) continue; // a token no longer configured: nothing of it can be signed here any more
    hour += scaledBase(r.lastHour, d);
    day += scaledBase(r.lastDay, d);
  }
  const refunds = o.purpose === 'refund_payout';
  const perHour = refunds ? limits.refundPerHour : (limits.sweepPerHour ?? DEFAULT_SIGNER_LIMITS.sweepPerHour);
  const perDay = refunds ? limits.refundPerDay : (limits.sweepPerDay ?? DEFAULT_SIGNER_LIMITS.sweepPerDay);
  const what = refunds ? 'refund payouts' : 'sweeps';
  const to = refunds ? '' : ' to a recently changed treasury';
  if (hour > scaledUnits(perHour))
    refuse('over_limit', `${what} of this merchant on ${o.network}${to} would exceed ${perHour} token units in an hour`);
  if (day > scaledUnits(perDay))
    refuse('over_limit', `${what} of this merchant on ${o.network}${to} would exceed ${perDay} token units in a day`);
}
