import type { VersionedTransactionResponse } from '@solana/web3.js';

/**
 * Lamports a landed transaction locked as rent in the accounts it created (a pre-balance of zero, funded after), the
 * fee payer (index 0) excepted: what the fee payer put there (a token account's rent-exempt minimum). Refunds, deposit
 * setups and subscription charges read it to journal that rent (docs/journal.md).
 */
export function rentLocked(tx: VersionedTransactionResponse): bigint {
  const pre = tx.meta?.preBalances ?? [];
  const post = tx.meta?.postBalances ?? [];
  let sum = 0n;
  for (let i = 1; i < post.length; i++) if ((pre[i] ?? 0) === 0 && (post[i] ?? 0) > 0) sum += BigInt(post[i]!);
  return sum;
}
