import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { signedRefundAmounts } from '../ledger/signer/signer-audit.js';
import { refuse } from './refusal.js';

// The signer's limits (docs/signer.md, "Limits"): what it signs of refund payouts per merchant and network, in token
// units (USDT and USDC together, each at its own decimals), over a rolling hour and a rolling day. Counted from the
// audit's signed rows, each refund once at its largest amount (a fee-bumped replacement is the same money).

export interface SignerLimits {
  /** Token units (decimal string, e.g. "10000"), per merchant and network, rolling hour. */
  refundPerHour: string;
  /** Token units, per merchant and network, rolling 24 hours. */
  refundPerDay: string;
}

export const DEFAULT_SIGNER_LIMITS: SignerLimits = { refundPerHour: '10000', refundPerDay: '50000' };

/** Amounts are compared at this common scale: 10^-SCALE token units. */
const SCALE = 24;
const DECIMAL = /^\d{1,18}(\.\d{1,18})?$/;

/** SIGNER_REFUND_LIMIT_PER_HOUR / SIGNER_REFUND_LIMIT_PER_DAY, token units; throws naming the variable. */
export function signerLimitsFrom(env: Record<string, string | undefined>): SignerLimits {
  const read = (name: string, fallback: string): string => {
    const v = env[name]?.trim();
    if (v === undefined || v === '') return fallback;
    if (!DECIMAL.test(v)) throw new Error(`${name} must be a non-negative decimal number of token units, e.g. 10000`);
    return v;
  };
  return {
    refundPerHour: read('SIGNER_REFUND_LIMIT_PER_HOUR', DEFAULT_SIGNER_LIMITS.refundPerHour),
    refundPerDay: read('SIGNER_REFUND_LIMIT_PER_DAY', DEFAULT_SIGNER_LIMITS.refundPerDay),
  };
}

function scaledUnits(text: string): bigint {
  if (!DECIMAL.test(text)) throw new Error(`not a decimal number of token units: ${text}`);
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 10n ** BigInt(SCALE) + BigInt(frac.padEnd(SCALE, '0'));
}

const scaledBase = (amount: bigint, decimals: number): bigint => amount * 10n ** BigInt(SCALE - decimals);

/**
 * Refuses `over_limit` when signing `amount` of `refundId` would take the merchant's refund payouts on this network
 * over a limit. The caller holds the merchant's limit lock (lockSignerLimits) until its audit row is written.
 */
export async function checkRefundLimits(
  db: Kysely<Database>,
  limits: SignerLimits,
  o: {
    merchantId: string;
    network: string;
    mode: string;
    refundId: string;
    amount: bigint;
    decimals: number;
    decimalsOf: (token: string) => number | undefined;
    now: Date;
  },
): Promise<void> {
  const others = await signedRefundAmounts(db, { ...o, except: o.refundId });
  const own = scaledBase(o.amount, o.decimals);
  let hour = own;
  let day = own;
  for (const r of others) {
    const d = o.decimalsOf(r.token);
    if (d === undefined) continue; // a token no longer configured: nothing of it can be signed here any more
    if (r.lastHour !== null) hour += scaledBase(r.lastHour, d);
    day += scaledBase(r.lastDay, d);
  }
  if (hour > scaledUnits(limits.refundPerHour))
    refuse('over_limit', `refund payouts of this merchant on ${o.network} would exceed ${limits.refundPerHour} token units in an hour`);
  if (day > scaledUnits(limits.refundPerDay))
    refuse('over_limit', `refund payouts of this merchant on ${o.network} would exceed ${limits.refundPerDay} token units in a day`);
}
