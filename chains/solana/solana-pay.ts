import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';

// Solana Pay transfer requests (spec: https://docs.solanapay.com/spec):
//   solana:<recipient>?amount=<decimal>&spl-token=<mint>&reference=<base58>&label=<text>&message=<text>&memo=<text>
// Rules we follow:
// - recipient is the session's deposit OWNER (a wallet address), never its token account: the wallet derives the
//   associated token account of (recipient, mint) and creates it if missing.
// - amount is in token units as a plain decimal (no exponent, no trailing zeros, at most the mint's decimals),
//   computed from the base-unit bigint; it is always present so that wallets do not ask the payer.
// - reference is derived from the deposit owner (sha256 of a fixed tag and the owner's 32 bytes, read as a public
//   key): unique per session, reproducible by the watcher without storage, and never a signer. Wallets add it as a
//   read-only key of the transfer instruction, so getSignaturesForAddress(reference) finds the payment even when a
//   wallet pays a token account other than the ATA (the watcher credits only accounts owned by the deposit owner).
// - label and message are percent-encoded UTF-8; memo is optional and public on chain, so it never carries ids a
//   merchant would not publish.

const REFERENCE_TAG = 'stablepay/solana-pay-reference/v1';

export function paymentReference(depositOwner: string): string {
  const digest = createHash('sha256').update(REFERENCE_TAG).update(new PublicKey(depositOwner).toBytes()).digest();
  return new PublicKey(digest).toBase58();
}

export function formatTokenAmount(baseUnits: bigint, decimals: number): string {
  if (baseUnits < 0n) throw new RangeError('amount must not be negative');
  const s = baseUnits.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = decimals > 0 ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  return frac ? `${whole}.${frac}` : whole;
}

export interface TransferRequestInput {
  recipient: string;
  /** Base units of the token (6 decimals for USDC/USDT). */
  amount: bigint;
  decimals: number;
  splToken: string;
  references?: readonly string[];
  label?: string;
  message?: string;
  memo?: string;
}

export function solanaPayTransferUrl(input: TransferRequestInput): string {
  const recipient = new PublicKey(input.recipient).toBase58();
  if (input.amount <= 0n) throw new RangeError('a transfer request amount must be positive');
  const params: string[] = [
    `amount=${formatTokenAmount(input.amount, input.decimals)}`,
    `spl-token=${new PublicKey(input.splToken).toBase58()}`,
  ];
  for (const r of input.references ?? []) params.push(`reference=${new PublicKey(r).toBase58()}`);
  if (input.label !== undefined) params.push(`label=${encodeURIComponent(input.label)}`);
  if (input.message !== undefined) params.push(`message=${encodeURIComponent(input.message)}`);
  if (input.memo !== undefined) params.push(`memo=${encodeURIComponent(input.memo)}`);
  return `solana:${recipient}?${params.join('&')}`;
}
