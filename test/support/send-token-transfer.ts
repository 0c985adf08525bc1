import type { BroadcastResult, ChainAdapter, SignedTransfer, TokenTransferRequest, TxSigner } from '../../chains/types.js';

/**
 * Build, sign, persist, broadcast: the order that makes payouts crash-safe. `persist` must durably store the signed
 * transfer (and its hash) before it is returned; if persisting throws, nothing was broadcast. After a crash the caller
 * re-broadcasts the persisted bytes (`adapter.broadcast`) instead of signing again.
 */
export async function sendTokenTransfer(
  adapter: ChainAdapter,
  signer: TxSigner,
  request: TokenTransferRequest,
  persist: (signed: SignedTransfer) => Promise<void>,
): Promise<{ signed: SignedTransfer; broadcast: BroadcastResult }> {
  const unsigned = await adapter.buildTokenTransfer(request);
  const signed = await adapter.signTransfer(unsigned, signer);
  await persist(signed);
  return { signed, broadcast: await adapter.broadcast(signed) };
}
