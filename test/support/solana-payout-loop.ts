import {
  TransferRejectedError,
  type SignedTransfer,
  type TokenTransferRequest,
  type TxOutcome,
  type TxSigner,
} from '../../chains/types.js';
import type { SolanaChainAdapter } from '../../chains/solana/adapter.js';

// For tests: the Solana payout loop, as the payout engine (src/refunds/payout-engine.ts) runs it for this network:
//   load persisted bytes, or build + sign + PERSIST; broadcast the same bytes; poll the outcome;
//   re-sign only when the adapter says the bytes expired (unknown signature and finalized height past
//   lastValidBlockHeight). A crash at any point resumes from the persisted bytes, so at most one transfer lands.

export interface PayoutStore {
  /** The signed transfer persisted for this payout, if any. */
  load(): Promise<SignedTransfer | null>;
  /** Durably replaces it (called before any broadcast of the new bytes). */
  save(signed: SignedTransfer): Promise<void>;
}

export interface PayoutLoopOptions {
  adapter: SolanaChainAdapter;
  signer: TxSigner;
  request: TokenTransferRequest;
  store: PayoutStore;
  /** Stop once the outcome is final (default) or merely confirmed. */
  until?: 'final' | 'confirmed';
  pollMs?: number;
  timeoutMs?: number;
  /** Test hook, called after each broadcast/poll round. */
  onRound?: (round: number) => Promise<void> | void;
}

export async function payUntilSettled(o: PayoutLoopOptions): Promise<{ signed: SignedTransfer; outcome: TxOutcome; signatures: number }> {
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  let signed = await o.store.load();
  let signatures = 0;
  for (let round = 0; Date.now() < deadline; round++) {
    if (!signed) {
      const unsigned = await o.adapter.buildTokenTransfer(o.request);
      signed = await o.adapter.signTransfer(unsigned, o.signer);
      await o.store.save(signed);
      signatures++;
    }
    const sent = await o.adapter.broadcast(signed);
    if (sent.status === 'rejected') {
      if (sent.reason !== 'expired') throw new TransferRejectedError(sent.reason, sent.detail);
      signed = null;
      continue;
    }
    const outcome = await o.adapter.getTransactionOutcome(signed.hash);
    if ((outcome.status === 'succeeded' || outcome.status === 'failed') && (outcome.final || o.until === 'confirmed')) {
      return { signed, outcome, signatures };
    }
    await o.onRound?.(round);
    await new Promise((r) => setTimeout(r, o.pollMs ?? 400));
  }
  throw new Error('solana payout: not settled before the timeout (the persisted bytes stay valid to resume)');
}
