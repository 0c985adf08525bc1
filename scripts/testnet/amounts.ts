import { formatUnits } from 'ethers';

// Amounts of one run. The API speaks 2-decimal minor units of the stablecoin; chains speak base units.

export interface RunAmounts {
  /** Session amount, a decimal string in the token (e.g. "1.00"). */
  session: string;
  sessionMinor: bigint;
  refundMinor: bigint;
  subscriptionMinor: bigint;
}

export function runAmounts(env: Record<string, string | undefined>): RunAmounts {
  const session = (env.TESTNET_AMOUNT ?? env.AMOUNT ?? '1.00').trim();
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(session);
  if (!m) throw new Error(`TESTNET_AMOUNT must be a decimal with at most 2 places, not ${session}`);
  const sessionMinor = BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
  const refundMinor = BigInt((env.TESTNET_REFUND_MINOR ?? env.REFUND_MINOR ?? String(sessionMinor / 2n)).trim());
  const subscriptionMinor = BigInt((env.TESTNET_SUBSCRIPTION_MINOR ?? '100').trim());
  if (sessionMinor <= 0n || refundMinor <= 0n || refundMinor > sessionMinor)
    throw new Error('TESTNET_REFUND_MINOR must be between 1 and the session amount in cents');
  if (subscriptionMinor <= 0n) throw new Error('TESTNET_SUBSCRIPTION_MINOR must be positive');
  return { session, sessionMinor, refundMinor, subscriptionMinor };
}

/** 2-decimal minor units to the token's base units (decimals ≥ 2). */
export function minorToBase(minor: bigint, decimals: number): bigint {
  return minor * 10n ** BigInt(decimals - 2);
}

export function show(base: bigint, decimals: number, symbol: string): string {
  return `${formatUnits(base, decimals)} ${symbol}`;
}
