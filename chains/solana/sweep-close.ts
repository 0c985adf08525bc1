import { createCloseAccountInstruction } from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  PACKET_DATA_SIZE,
  type Connection,
  PublicKey,
  TransactionMessage,
  type MessageV0,
  type TransactionInstruction,
  type VersionedTransactionResponse,
} from '@solana/web3.js';
import {
  TransferRejectedError,
  type NetworkId,
  type SweepRequest,
  type SweepStep,
  type SweepStepReceipt,
  type UnsignedTransfer,
} from '../types.js';
import type { SolanaUnsignedBody } from './token-sender.js';

// The `close` step of a Solana sweep (docs/treasury-solana.md, "Closing"): after the batches of a sweep landed, one
// transaction per batch closes the deposit token accounts that batch emptied, rent to the gas station (the fee payer).
// It is built from the chain as it is then: only accounts holding exactly 0 base units are closed, so a payment that
// arrived after the batch was built is never in the way of the transfers (a CloseAccount of a non-empty account fails
// its whole transaction). Reads only the chain: no database.

/** Compute units budgeted for a close transaction: base plus per CloseAccount (measured on SPL Token, with headroom). */
export const CLOSE_COMPUTE_UNITS = { base: 1_000, close: 5_000 } as const;

/** Any valid 32-byte blockhash: sizing does not depend on its value. */
const SIZING_BLOCKHASH = PublicKey.default.toBase58();

/** What `plan` puts in a close step's params (strings: persisted as JSON). */
export interface CloseParams {
  /** Comma-separated deposit owners whose batch empties their token account. */
  close: string;
  /** Lamports those accounts held at planning (their rent): what the closes should return. */
  expectedRentBack: string;
  computeUnitLimit: string;
}

/** A persisted close step's params read back: every field checked, a tampered step refused. */
export function closeParams(params: Record<string, string>): CloseParams {
  const { close, expectedRentBack, computeUnitLimit } = params;
  if (!close || expectedRentBack === undefined || computeUnitLimit === undefined)
    throw new TransferRejectedError('invalid', 'sweep step params are not a Solana close step');
  return { close, expectedRentBack, computeUnitLimit };
}

export interface CloseShape {
  tokenProgramId: PublicKey;
  payer: PublicKey;
  accounts: Array<{ owner: PublicKey; account: PublicKey }>;
  computeUnitPrice: bigint;
}

export function closeComputeUnitLimit(closes: number): number {
  return CLOSE_COMPUTE_UNITS.base + closes * CLOSE_COMPUTE_UNITS.close;
}

/** 5000 lamports per signature (fee payer + each deposit owner) plus the priority fee at the full unit limit. */
export function closeMaxFee(s: CloseShape): bigint {
  const limit = BigInt(closeComputeUnitLimit(s.accounts.length));
  return 5_000n * BigInt(1 + s.accounts.length) + (s.computeUnitPrice * limit + 999_999n) / 1_000_000n;
}

function instructions(s: CloseShape): TransactionInstruction[] {
  return [
    ComputeBudgetProgram.setComputeUnitLimit({ units: closeComputeUnitLimit(s.accounts.length) }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: s.computeUnitPrice }),
    ...s.accounts.map((a) => createCloseAccountInstruction(a.account, s.payer, a.owner, [], s.tokenProgramId)),
  ];
}

export function compileClose(s: CloseShape, blockhash: string): MessageV0 {
  return new TransactionMessage({ payerKey: s.payer, recentBlockhash: blockhash, instructions: instructions(s) }).compileToV0Message();
}

/** Bytes of the signed close transaction. */
export function closeTransactionSize(s: CloseShape): number {
  const message = compileClose(s, SIZING_BLOCKHASH);
  const n = message.header.numRequiredSignatures;
  return (n < 0x80 ? 1 : 2) + 64 * n + message.serialize().length;
}

/**
 * The receipt of a landed close step: nothing swept, `nativeMoved` the lamports the closed accounts returned to the
 * fee payer (an account whose balance went from positive to 0), `fee` the transaction's fee.
 */
export function closeReceipt(tx: VersionedTransactionResponse, keys: string[], accounts: string[]): SweepStepReceipt | null {
  const meta = tx.meta;
  if (!meta || meta.err !== null) return null;
  let nativeMoved = 0n;
  for (const account of accounts) {
    const index = keys.indexOf(account);
    if (index < 0) continue;
    const pre = BigInt(meta.preBalances[index] ?? 0);
    const post = BigInt(meta.postBalances[index] ?? 0);
    if (post === 0n && pre > 0n) nativeMoved += pre;
  }
  return { swept: [], elsewhere: 0n, nativeMoved, fee: BigInt(meta.fee), energy: 0n };
}

/** The close steps of a plan: one per batch that empties at least one account, in group 1 (after every batch). */
export function planCloseStep(
  batch: Pick<SweepStep, 'from'>,
  closing: Array<{ owner: string; lamports: bigint }>,
  estimatedFee: bigint,
): SweepStep {
  const params: CloseParams = {
    close: closing.map((c) => c.owner).join(','),
    expectedRentBack: String(closing.reduce((sum, c) => sum + c.lamports, 0n)),
    computeUnitLimit: String(closeComputeUnitLimit(closing.length)),
  };
  return {
    group: 1,
    purpose: 'close',
    from: batch.from,
    to: batch.from.address,
    sources: [],
    value: 0n,
    params: { ...params },
    estimatedFee,
  };
}

export interface CloseContext {
  network: NetworkId;
  connection: Connection;
  tokenProgramId: PublicKey;
  computeUnitPrice(writable: PublicKey[], bumpPercent: number): Promise<bigint>;
  /** Per owner, its token account of `mint` when it may be closed now (holds exactly 0, ours, not frozen); else null. */
  closable(mint: PublicKey, owners: string[]): Promise<Array<PublicKey | null>>;
}

/**
 * The close step's transaction: CloseAccount (rent to the gas station) for each planned account that holds exactly 0
 * base units now, after its batch landed; null (the step is skipped) when none does. An account that received a
 * payment since its batch was built stays open: the watcher credits that payment and a later sweep takes it.
 */
export async function buildCloseStep(
  ctx: CloseContext,
  request: SweepRequest,
  step: SweepStep,
  mint: PublicKey,
  feeBumpPercent: number,
): Promise<UnsignedTransfer<SolanaUnsignedBody> | null> {
  const payer = new PublicKey(request.gasStation.address);
  const owners = closeParams(step.params).close.split(',');
  const keys = new Map(request.sources.map((s) => [s.address, s.key]));
  for (const owner of owners)
    if (!keys.has(owner)) throw new TransferRejectedError('invalid', `close step owner ${owner} is not in the request`);
  const closable = await ctx.closable(mint, owners);
  const accounts: CloseShape['accounts'] = [];
  owners.forEach((owner, i) => {
    const account = closable[i];
    if (account) accounts.push({ owner: new PublicKey(owner), account });
  });
  if (accounts.length === 0) return null;
  const shape: CloseShape = {
    tokenProgramId: ctx.tokenProgramId,
    payer,
    accounts,
    computeUnitPrice: await ctx.computeUnitPrice([payer], feeBumpPercent),
  };
  const size = closeTransactionSize(shape);
  if (size > PACKET_DATA_SIZE)
    throw new TransferRejectedError('invalid', `close step of ${accounts.length} would be ${size} bytes (max ${PACKET_DATA_SIZE})`);
  const needed = closeMaxFee(shape);
  const lamports = BigInt(await ctx.connection.getBalance(payer, 'confirmed'));
  if (lamports < needed)
    throw new TransferRejectedError(
      'insufficient_gas',
      `gas station ${payer.toBase58()} has ${lamports} lamports, needs ${needed} for the fee`,
    );
  const { blockhash, lastValidBlockHeight } = await ctx.connection.getLatestBlockhash('confirmed');
  const signers: SolanaUnsignedBody['signers'] = { [payer.toBase58()]: request.gasStation.key };
  for (const a of accounts) signers[a.owner.toBase58()] = keys.get(a.owner.toBase58())!;
  return {
    network: ctx.network,
    request: { from: request.gasStation, to: request.gasStation.address, token: request.token, amount: 0n, feeBumpPercent },
    body: {
      message: Buffer.from(compileClose(shape, blockhash).serialize()).toString('base64'),
      lastValidBlockHeight: String(lastValidBlockHeight),
      signers,
    },
  };
}
