import { Signature, getBytes, recoverAddress } from 'ethers';
import type { NetworkId, SignedTransfer, TokenContract, TokenTransferRequest, TxSigner, UnsignedTransfer } from '../types.js';
import { evmHexToTron, normalizeTronAddress } from './address.js';
import { decodeTriggerRawData, encodeSignedTransaction, txIdOf } from './protobuf.js';
import type { TronTxBody } from './sender-types.js';
import { decodeSystemRawData } from './system-contracts.js';
import { callMatches, transferCall, transferFromCall } from './trc20-calls.js';

// Signing checks what the node built against the request before the signer sees the txID: a node that built
// something else (another recipient, amount, fee_limit, contract) is refused, never signed.

/** Signs `unsigned` after checking its bytes; `token` resolves the request's token symbol (throws if not configured). */
export async function signTronTransfer(
  unsigned: UnsignedTransfer<TronTxBody>,
  signer: TxSigner,
  token: (symbol: string) => TokenContract,
): Promise<SignedTransfer> {
  const body = unsigned.body;
  const { request } = unsigned;
  const rawHex = body.transaction.raw_data_hex.toLowerCase();
  const txId = txIdOf(rawHex);
  if (txId !== body.transaction.txID.toLowerCase()) throw new Error('txID is not sha256(raw_data_hex): refusing to sign');
  if (body.system) return signSystem(unsigned, signer, rawHex, txId);
  // Sign only what the request asked for: one TriggerSmartContract from the hot wallet to the token, transfer(to,
  // amount), or transferFrom(owner, to, amount) for a charge.
  const raw = decodeTriggerRawData(rawHex);
  const contract = token(request.token);
  const from = normalizeTronAddress(request.from.address);
  const to = normalizeTronAddress(request.to);
  const owner = body.transferFromOwner === undefined ? null : normalizeTronAddress(body.transferFromOwner);
  if (!from || !to || (body.transferFromOwner !== undefined && !owner))
    throw new Error('unsigned transfer names an address that is not TRON: refusing to sign');
  const call = owner ? transferFromCall(owner, to, request.amount) : transferCall(to, request.amount);
  if (!callMatches(raw, from, contract, call, BigInt(body.feeLimit))) {
    throw new Error('built transaction does not match the payout request: refusing to sign');
  }
  return signDigest(unsigned.network, txId, rawHex, raw.expiration, from, request.from.key, signer);
}

/** A sweep's TRX transfer or (un)delegation: exactly one contract of the kind asked, from, to and amount as requested. */
async function signSystem(unsigned: UnsignedTransfer<TronTxBody>, signer: TxSigner, rawHex: string, txId: string): Promise<SignedTransfer> {
  const { request, body } = unsigned;
  const raw = decodeSystemRawData(rawHex);
  const from = normalizeTronAddress(request.from.address);
  const to = normalizeTronAddress(request.to);
  const ok =
    raw.contractCount === 1 &&
    raw.name === body.system!.contract &&
    raw.owner === from &&
    raw.to === to &&
    raw.amount === request.amount &&
    (raw.name === 'TransferContract' || (raw.resource === 'ENERGY' && !raw.lock));
  if (!from || !ok) throw new Error('built transaction does not match the sweep step: refusing to sign');
  return signDigest(unsigned.network, txId, rawHex, raw.expiration, from, request.from.key, signer);
}

/** The signer signs the txID; the signature must recover to the sending address (a wrong key is caught here). */
async function signDigest(
  network: NetworkId,
  txId: string,
  rawHex: string,
  expiration: bigint,
  from: string,
  key: TokenTransferRequest['from']['key'],
  signer: TxSigner,
): Promise<SignedTransfer> {
  const digest = getBytes(`0x${txId}`);
  const sig = await signer.signSecp256k1Digest(key, digest, { kind: 'tron-transaction', rawDataHex: rawHex });
  const recovered = evmHexToTron(recoverAddress(digest, Signature.from(sig)));
  if (recovered !== from) throw new Error('signer key does not match the sending address');
  const signature = `${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`;
  return {
    network,
    hash: txId,
    raw: `0x${encodeSignedTransaction(rawHex, [signature])}`,
    sender: from,
    nonce: null,
    validUntilHeight: null,
    validUntilTimeMs: expiration.toString(),
  };
}
