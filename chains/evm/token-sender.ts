import { isAddress, Signature, Transaction } from 'ethers';
import {
  TransferRejectedError,
  type BroadcastResult,
  type Delivery,
  type TokenRefusal,
  type TokenSymbol,
  type SendFailureReason,
  type SignedTransfer,
  type TokenContract,
  type TokenTransferRequest,
  type TxOutcome,
  type TxSigner,
  type UnsignedTransfer,
  type NetworkId,
} from '../types.js';
import { ERC20 } from './erc20-abi.js';
import { RpcError } from './rpc-errors.js';
import type { RpcCaller } from './rpc-client.js';
import { fetchHeader, toHex, type RpcReceipt } from './rpc-types.js';
import { decodeTransferLog } from './transfer-log.js';
import { evmViewReader } from './token-state.js';
import { readTokenRefusal, readTransferFee } from '../tokens/token-views.js';
import { grossForNet } from '../tokens/transfer-fee.js';
import { signAuthorizations, type UnsignedAuthorization } from './authorization.js';
import { EvmFees } from './fee-model.js';

// Token transfers out of a hot wallet. Success is judged from the receipt status and the Transfer log, never from
// return data (chains/evm/erc20-abi.ts).

export interface FeeQuote {
  /** null on chains without EIP-1559 (legacy gasPrice). */
  baseFee: bigint | null;
  tip: bigint;
  gasPrice: bigint;
}

export interface EvmTxBody {
  chainId: string;
  nonce: string;
  to: string;
  data: string;
  gasLimit: string;
  type: number;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  gasPrice?: string;
  /** Native value in wei (gas top-ups and reclaims of sweeps); absent: 0. */
  value?: string;
  /** Type 4 (EIP-7702): authorizations the deposit keys sign in `sign` (chains/evm/sweep-7702.ts). */
  authorizations?: UnsignedAuthorization[];
}

/** The fee fields of a body: EIP-1559 (type 2) or legacy gasPrice (type 0). */
export type EvmFeeFields = { type: 2; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 0; gasPrice: bigint };

/** The most a body may pay per gas (the fee cap). */
export function feeCap(f: EvmFeeFields): bigint {
  return f.type === 2 ? f.maxFeePerGas : f.gasPrice;
}

/** Puts fee fields into a body's string form. */
export function withFees(body: Omit<EvmTxBody, 'type'>, f: EvmFeeFields): EvmTxBody {
  return f.type === 2
    ? { ...body, type: 2, maxFeePerGas: f.maxFeePerGas.toString(), maxPriorityFeePerGas: f.maxPriorityFeePerGas.toString() }
    : { ...body, type: 0, gasPrice: f.gasPrice.toString() };
}

export class EvmTokenSender {
  constructor(
    private readonly network: NetworkId,
    private readonly rpc: RpcCaller,
    private readonly tokens: readonly TokenContract[],
    private readonly finalHeight: () => Promise<{ latest: bigint; final: bigint }>,
    /** The network's fee model (chains/evm/fee-model.ts): L1 data fee, Arbitrum's L1 gas, the tip floor. */
    readonly fees: EvmFees = new EvmFees(rpc, undefined),
  ) {}

  async build(request: TokenTransferRequest): Promise<UnsignedTransfer<EvmTxBody>> {
    const token = this.tokens.find((t) => t.symbol === request.token);
    if (!token) throw new TransferRejectedError('invalid', `${request.token} is not configured on ${this.network}`);
    refuseMalformedAddress(request.to);
    const data = ERC20.encodeFunctionData('transfer', [request.to, request.amount]);
    return this.buildCall(request, token.address, data, { sender: request.from.address, recipient: request.to });
  }

  /** transferFrom(owner → request.to) sent and paid for by request.from (a charger holding the owner's allowance). */
  async buildTransferFrom(request: TokenTransferRequest, owner: string): Promise<UnsignedTransfer<EvmTxBody>> {
    const token = this.tokens.find((t) => t.symbol === request.token);
    if (!token) throw new TransferRejectedError('invalid', `${request.token} is not configured on ${this.network}`);
    refuseMalformedAddress(request.to);
    refuseMalformedAddress(owner);
    const data = ERC20.encodeFunctionData('transferFrom', [owner, request.to, request.amount]);
    return this.buildCall(request, token.address, data, { sender: owner, recipient: request.to, spender: request.from.address });
  }

  private async buildCall(
    request: TokenTransferRequest,
    contract: string,
    data: string,
    parties: { sender: string; recipient: string; spender?: string },
  ): Promise<UnsignedTransfer<EvmTxBody>> {
    if (request.nonce === undefined) throw new TransferRejectedError('invalid', 'EVM transfers need an explicit nonce');
    const from = request.from.address;
    let estimate: bigint;
    try {
      // Against 'latest', never 'pending': a pending block holding our own earlier attempt at this nonce would
      // under-estimate a replacement (the recipient's balance slot already written) and the replacement would run out of gas.
      estimate = BigInt(await this.rpc.call<string>('eth_estimateGas', [{ from, to: contract, data }, 'latest']));
    } catch (e) {
      if (!(e instanceof RpcError) || e.kind !== 'rpc_error') throw e;
      let reason = simulationReason(e.message);
      // A refused simulation says only "execution reverted": the token's own state says which refusal it was.
      const refusal =
        reason === 'simulation_reverted' ? await readTokenRefusal(evmViewReader(this.rpc, contract, 'latest'), parties) : null;
      // Tether-style tokens revert without a reason on a short balance: read the balance rather than guess.
      const balance = reason === 'simulation_reverted' && !refusal ? await this.balanceOf(contract, parties.sender) : null;
      if (balance !== null && balance < request.amount) {
        reason = 'insufficient_token_balance';
      }
      throw new TransferRejectedError(reason, e.message, refusal ?? undefined);
    }
    const chainId = await this.chainId();
    const fees = await this.feeFields(request.feeBumpPercent ?? 0);
    const draft = { chainId: chainId.toString(), nonce: request.nonce.toString(), to: contract, data };
    // The L1 part (chains/evm/fee-model.ts): Arbitrum's L1 gas when the node's estimate omits it, op-stack's data fee.
    const l1 = await this.fees.l1Part(from, withFees({ ...draft, gasLimit: ((estimate * 12n) / 10n).toString() }, fees));
    const gas = this.fees.gas(estimate, l1);
    const body = withFees({ ...draft, gasLimit: ((gas * 12n) / 10n).toString() }, fees);
    const balance = BigInt(await this.rpc.call<string>('eth_getBalance', [from, 'latest']));
    const l1Held = this.fees.l1Allowance(l1);
    const maxCost = BigInt(body.gasLimit) * BigInt(body.maxFeePerGas ?? body.gasPrice ?? '0') + l1Held;
    if (balance < maxCost)
      throw new TransferRejectedError(
        'insufficient_gas',
        `hot wallet ${from} holds ${balance} wei, needs up to ${maxCost}${l1Held > 0n ? ` (${l1Held} of it for the L1 data fee)` : ''}`,
      );
    return { network: this.network, request, body };
  }

  /** The owner's token balance at the latest block; null when the token does not answer (then nothing is inferred). */
  private async balanceOf(contract: string, owner: string): Promise<bigint | null> {
    try {
      const data = ERC20.encodeFunctionData('balanceOf', [owner]);
      return BigInt(await this.rpc.call<string>('eth_call', [{ to: contract, data }, 'latest']));
    } catch {
      return null;
    }
  }

  /** The same unsigned transaction at another nonce (built before the nonce was assigned). */
  withNonce(unsigned: UnsignedTransfer<EvmTxBody>, nonce: bigint): UnsignedTransfer<EvmTxBody> {
    return { ...unsigned, request: { ...unsigned.request, nonce }, body: { ...unsigned.body, nonce: nonce.toString() } };
  }

  #chainId: bigint | undefined;
  #fees: { at: number; quote: FeeQuote } | undefined;

  async chainId(): Promise<bigint> {
    this.#chainId ??= BigInt(await this.rpc.call<string>('eth_chainId', []));
    return this.#chainId;
  }

  /**
   * Current fee levels, reused for up to a second across payouts (a payout burst would otherwise ask the node the
   * same thing hundreds of times a second). A replacement always asks afresh: it must outbid the mempool now.
   */
  async feeQuote(fresh: boolean): Promise<FeeQuote> {
    if (!fresh && this.#fees && Date.now() - this.#fees.at < 1000) return this.#fees.quote;
    const latest = await this.rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
    const quote: FeeQuote =
      latest.baseFeePerGas !== undefined
        ? {
            baseFee: BigInt(latest.baseFeePerGas),
            // Raised to the network's floor (Polygon PoS: 25 gwei), whatever the node suggests.
            // Arbitrum: 0 without asking (its nodes answer 0; a dev chain's 1 gwei suggestion would be paid in full).
            tip: this.fees.collectsTips
              ? this.fees.tip(BigInt(await this.rpc.call<string>('eth_maxPriorityFeePerGas', []).catch(() => '0x3b9aca00')))
              : 0n,
            gasPrice: 0n,
          }
        : { baseFee: null, tip: 0n, gasPrice: BigInt(await this.rpc.call<string>('eth_gasPrice', [])) };
    this.#fees = { at: Date.now(), quote };
    return quote;
  }

  /**
   * Fee fields for a transaction sent now, `feeBumpPercent` above the current levels (a replacement asks afresh):
   * EIP-1559 cap = 2 x base fee + tip (room for six full blocks of base-fee rises), legacy gasPrice otherwise.
   */
  async feeFields(feeBumpPercent: number): Promise<EvmFeeFields> {
    const bump = BigInt(100 + feeBumpPercent);
    const fees = await this.feeQuote(feeBumpPercent > 0);
    if (fees.baseFee === null) return { type: 0, gasPrice: (fees.gasPrice * bump) / 100n };
    const priority = (fees.tip * bump) / 100n;
    return { type: 2, maxPriorityFeePerGas: priority, maxFeePerGas: (fees.baseFee * 2n * bump) / 100n + priority };
  }

  async sign(unsigned: UnsignedTransfer<EvmTxBody>, signer: TxSigner): Promise<SignedTransfer> {
    const b = unsigned.body;
    const tx = Transaction.from({
      type: b.type,
      chainId: BigInt(b.chainId),
      nonce: Number(b.nonce),
      to: b.to,
      data: b.data,
      value: BigInt(b.value ?? '0'),
      gasLimit: BigInt(b.gasLimit),
      ...(b.type === 2 || b.type === 4
        ? { maxFeePerGas: BigInt(b.maxFeePerGas!), maxPriorityFeePerGas: BigInt(b.maxPriorityFeePerGas!) }
        : { gasPrice: BigInt(b.gasPrice!) }),
      ...(b.type === 4 ? { authorizationList: await signAuthorizations(BigInt(b.chainId), b.authorizations ?? [], signer) } : {}),
    });
    const sig = await signer.signSecp256k1Digest(unsigned.request.from.key, Uint8Array.from(Buffer.from(tx.unsignedHash.slice(2), 'hex')), {
      kind: 'evm-transaction',
      unsignedSerialized: tx.unsignedSerialized,
    });
    tx.signature = Signature.from(sig);
    // The key path must be the hot wallet the request names: a mismatch would spend from another account. `from`
    // recovers the public key from the signature (the costliest step of signing, and this runs under the wallet's
    // nonce lock): read once.
    const sender = tx.from?.toLowerCase();
    if (sender !== unsigned.request.from.address.toLowerCase()) throw new Error('signer key does not match the sending address');
    return {
      network: this.network,
      hash: tx.hash!,
      raw: tx.serialized,
      sender,
      nonce: b.nonce,
      validUntilHeight: null,
      validUntilTimeMs: null,
    };
  }

  async broadcast(signed: SignedTransfer): Promise<BroadcastResult> {
    try {
      await this.rpc.call<string>('eth_sendRawTransaction', [signed.raw]);
      return { status: 'accepted' };
    } catch (e) {
      if (!(e instanceof RpcError) || e.kind !== 'rpc_error') throw e;
      if (/already known|known transaction|already imported|AlreadyKnown/i.test(e.message)) return { status: 'already_known' };
      const outcome = await this.outcome(signed.hash);
      if (outcome.status !== 'unknown') return { status: 'already_known' };
      return { status: 'rejected', reason: broadcastReason(e.message), detail: e.message };
    }
  }

  /** `transferFrom` set: success needs a Transfer log from that owner (a charge), not from the transaction's sender. */
  async outcome(hash: string, transferFrom?: string): Promise<TxOutcome> {
    const receipt = await this.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (!receipt) {
      const tx = await this.rpc.call<unknown>('eth_getTransactionByHash', [hash]);
      return tx ? { status: 'pending' } : { status: 'unknown' };
    }
    const header = await fetchHeader(this.rpc, BigInt(receipt.blockNumber));
    const { latest, final } = await this.finalHeight();
    const block = { height: header.height, hash: header.hash, time: header.time };
    const confirmations = latest - header.height + 1n;
    const isFinal = header.height <= final;
    if (header.hash !== receipt.blockHash.toLowerCase()) return { status: 'pending' };
    // gasUsed x price, plus the L1 data fee on op-stack chains: exactly what left the sender (docs/chains.md, "Fees").
    const fee = await this.fees.paidFee(receipt);
    if (BigInt(receipt.status) !== 1n) {
      // Explained from the token's state at that block, once final (the only time a failure is acted on).
      const refusal = isFinal ? await this.refusalOf(hash, receipt.blockNumber) : null;
      if (refusal)
        return { status: 'failed', block, confirmations, final: isFinal, reason: 'reverted', detail: 'receipt status 0', refusal, fee };
      return { status: 'failed', block, confirmations, final: isFinal, reason: 'reverted', detail: 'receipt status 0', fee };
    }
    const contracts = new Set(this.tokens.map((t) => t.address.toLowerCase()));
    // A transaction that called no registry token (a sweep's gas top-up or reclaim: plain native value) succeeds on its
    // status; what it moved is read by whoever sent it (SweepMethodImpl.read). A token call must show its Transfer log.
    if (transferFrom === undefined && (receipt.to === null || !contracts.has(receipt.to.toLowerCase())))
      return { status: 'succeeded', block, confirmations, final: isFinal, fee };
    const sender = (transferFrom ?? receipt.from).toLowerCase();
    const moved = receipt.logs.map(decodeTransferLog).some((d) => d !== null && contracts.has(d.token) && d.from === sender);
    if (!moved)
      return {
        status: 'failed',
        block,
        confirmations,
        final: isFinal,
        reason: 'no_transfer_event',
        detail: 'no Transfer log from the hot wallet',
        fee,
      };
    return { status: 'succeeded', block, confirmations, final: isFinal, fee };
  }

  /** The token's reason for refusing the transfer or transferFrom that `hash` called, from its state at `blockNumber`. */
  private async refusalOf(hash: string, blockNumber: string): Promise<TokenRefusal | null> {
    const tx = await this.rpc.call<{ from: string; to: string | null; input: string } | null>('eth_getTransactionByHash', [hash]);
    const contract = tx?.to?.toLowerCase();
    if (!tx || !contract || !this.tokens.some((t) => t.address.toLowerCase() === contract)) return null;
    const call = ERC20.parseTransaction({ data: tx.input });
    const read = evmViewReader(this.rpc, contract, blockNumber);
    if (call?.name === 'transfer') return readTokenRefusal(read, { sender: tx.from, recipient: String(call.args[0]) });
    if (call?.name === 'transferFrom')
      return readTokenRefusal(read, { sender: String(call.args[0]), recipient: String(call.args[1]), spender: tx.from });
    return null;
  }

  /** Sum of `token`'s Transfer logs from `from` in a succeeded receipt: to `to`, and to anyone else. */
  async delivery(hash: string, token: TokenSymbol, from: string, to: string): Promise<Delivery | null> {
    const contract = this.tokens.find((t) => t.symbol === token)?.address.toLowerCase();
    const receipt = await this.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (!contract || !receipt || BigInt(receipt.status) !== 1n) return null;
    const d: Delivery = { delivered: 0n, elsewhere: 0n };
    for (const t of receipt.logs.map(decodeTransferLog)) {
      if (t === null || t.token !== contract || t.from !== from.toLowerCase()) continue;
      if (t.to === to.toLowerCase()) d.delivered += t.amount;
      else d.elsewhere += t.amount;
    }
    return d;
  }

  /** Gross amount so that the recipient gets `net` under the token's announced fee (Tether's views); `net` without. */
  async grossForNet(token: TokenSymbol, net: bigint): Promise<bigint> {
    const contract = this.tokens.find((t) => t.symbol === token)?.address;
    if (!contract) throw new TransferRejectedError('invalid', `${token} is not configured on ${this.network}`);
    const fee = await readTransferFee(evmViewReader(this.rpc, contract, 'latest'));
    if (!fee) return net;
    const gross = grossForNet(net, fee);
    if (gross === null)
      throw new TransferRejectedError('invalid', `${token} takes a fee of ${fee.basisPoints} basis points: no amount delivers ${net}`);
    return gross;
  }
}

function refuseMalformedAddress(address: string): void {
  if (!isAddress(address)) throw new TransferRejectedError('invalid', `${address} is not an EVM address`);
}

function simulationReason(message: string): SendFailureReason {
  if (/insufficient funds/i.test(message)) return 'insufficient_gas';
  if (/exceeds balance|insufficient balance|balance too low/i.test(message)) return 'insufficient_token_balance';
  return 'simulation_reverted';
}

function broadcastReason(message: string): SendFailureReason {
  if (/insufficient funds/i.test(message)) return 'insufficient_gas';
  if (/nonce too low/i.test(message)) return 'nonce_too_low';
  if (/underpriced|fee too low/i.test(message)) return 'underpriced';
  return 'other';
}

export { toHex };
