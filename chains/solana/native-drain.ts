import { ComputeBudgetProgram, PublicKey, SystemProgram, TransactionMessage, type Connection } from '@solana/web3.js';
import { TransferRejectedError, type NetworkId, type UnsignedTransfer, type Wallet } from '../types.js';
import { accountKeysOf } from './deposit-scanner.js';
import type { SolanaUnsignedBody } from './token-sender.js';

// The drain of a retired Solana gas station (docs/treasury.md, "Rotating the gas station"): one v0 transaction, paid
// and signed by the retired station alone, holding the compute budget and one SystemProgram transfer of every lamport
// it has minus this transaction's exact fee (5000 lamports for its one signature plus the priority fee at the unit
// limit) to the current gas station. The account is left at 0 lamports: a system account with no data may be emptied,
// so no rent-exempt minimum stays behind (a retired station never pays again; a late deposit of SOL to it is drained
// by `--drain-only`). The fee payer must stay rent-exempt once the fee is taken, before the transfer empties it: a
// balance under fee + that minimum is not worth a drain (null). No fee bump: the engine re-signs only once the
// blockhash expired.

/** Compute units budgeted for one SystemProgram transfer (it uses 150) and the two budget instructions. */
export const DRAIN_COMPUTE_UNITS = 1_000;

/** Rent-exempt minimum of an account with no data, the fee payer's floor once the fee is taken. */
const EMPTY_ACCOUNT_BYTES = 0;

export interface SolanaDrainOptions {
  network: NetworkId;
  connection: Connection;
  /** The sender's compute-unit price (median of recent fees on the accounts, bumped and clamped). */
  computeUnitPrice(writable: PublicKey[], bumpPercent: number): Promise<bigint>;
}

/** Lamports the drain's one-signature transaction costs at `price` micro-lamports per unit. */
export function drainFee(price: bigint): bigint {
  return 5_000n + (price * BigInt(DRAIN_COMPUTE_UNITS) + 999_999n) / 1_000_000n;
}

export function createSolanaNativeDrain(o: SolanaDrainOptions) {
  return {
    async build(
      from: Wallet,
      to: string,
      _nonce: bigint | null,
      feeBumpPercent: number,
    ): Promise<UnsignedTransfer<SolanaUnsignedBody> | null> {
      const payer = new PublicKey(from.address);
      let recipient: PublicKey;
      try {
        recipient = new PublicKey(to);
      } catch {
        throw new TransferRejectedError('invalid', 'the drain recipient is not a Solana address');
      }
      const [lamports, floor, price] = await Promise.all([
        o.connection.getBalance(payer, 'confirmed'),
        o.connection.getMinimumBalanceForRentExemption(EMPTY_ACCOUNT_BYTES),
        o.computeUnitPrice([payer, recipient], feeBumpPercent),
      ]);
      const fee = drainFee(price);
      const value = BigInt(lamports) - fee;
      // Not worth a transaction: less would arrive than it burns, or the payer would fall under rent once charged.
      if (value <= fee || value < BigInt(floor)) return null;
      const { blockhash, lastValidBlockHeight } = await o.connection.getLatestBlockhash('confirmed');
      const message = new TransactionMessage({
        payerKey: payer,
        recentBlockhash: blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitLimit({ units: DRAIN_COMPUTE_UNITS }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }),
          SystemProgram.transfer({ fromPubkey: payer, toPubkey: recipient, lamports: value }),
        ],
      }).compileToV0Message();
      return {
        network: o.network,
        // A native transfer: `token` only fills the request's shape (signTransfer reads the body's signers).
        request: { from, to, token: 'USDC', amount: value, feeBumpPercent },
        body: {
          message: Buffer.from(message.serialize()).toString('base64'),
          lastValidBlockHeight: String(lastValidBlockHeight),
          signers: { [payer.toBase58()]: from.key },
        },
      };
    },

    /** Lamports `to` gained in the succeeded transaction `hash` (its balance before and after); 0 when it is not in it. */
    async read(hash: string, to: string): Promise<bigint | null> {
      const tx = await o.connection.getTransaction(hash, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      if (!tx?.meta || tx.meta.err !== null) return null;
      const i = accountKeysOf(tx).indexOf(to);
      if (i < 0) return 0n;
      const gained = BigInt(tx.meta.postBalances[i] ?? 0) - BigInt(tx.meta.preBalances[i] ?? 0);
      return gained > 0n ? gained : 0n;
    },
  };
}
