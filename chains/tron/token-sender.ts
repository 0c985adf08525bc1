import {
  TransferRejectedError,
  type BroadcastResult,
  type ChargeTransfer,
  type Delivery,
  type SignedTransfer,
  type NetworkId,
  type TokenContract,
  type TokenTransferRequest,
  type TxOutcome,
  type TxSigner,
  type UnsignedTransfer,
} from '../types.js';
import { RpcError } from '../evm/rpc-errors.js';
import { soleNetworkOfFamily } from '../registry.js';
import { readTransferFee } from '../tokens/token-views.js';
import { grossForNet } from '../tokens/transfer-fee.js';
import { normalizeTronAddress, tronBase58 } from './address.js';
import { constantCall, readTokenAllowance, readTokenBalance, tokenRefusal, tokenViews } from './constant-calls.js';
import { decodeTriggerRawData, txIdOf } from './protobuf.js';
import { classifyBroadcast } from './receipt.js';
import { readChainPrices, readHotWalletResources, trxNeededFor, type ChainPrices } from './resources.js';
import type { TronSenderOptions, TronTxBody } from './sender-types.js';
import { signTronTransfer } from './signing.js';
import * as receipts from './transfer-outcome.js';
import { approveCall, callMatches, transferCall, transferFromCall, triggerCall, type TokenCall } from './trc20-calls.js';
import {
  decodeNodeMessage,
  int64,
  type AccountJson,
  type BlockJson,
  type BroadcastReply,
  type TransactionJson,
  type TronWalletApi,
} from './wallet-api.js';

export type { TronSenderOptions, TronTxBody } from './sender-types.js';

// TRC-20 transfers out of a hot wallet: build with the node (triggersmartcontract), check what was built, sign the
// txID through the signer (signing.ts), hand back bytes to persist, broadcast them (broadcasthex), judge the result
// from the receipt (transfer-outcome.ts). The transfer ABI declares no return value (Tether's TRC-20 returns one,
// look-alikes may not): success is receipt.result SUCCESS plus a Transfer log from the hot wallet, never decoded
// return data or a broadcast reply.

export class TronTokenSender {
  readonly #o: TronSenderOptions;
  #prices: { at: number; value: ChainPrices } | null = null;

  /** The network it sends on: named in every transfer it builds or signs. */
  readonly network: NetworkId;

  constructor(o: TronSenderOptions) {
    this.#o = o;
    this.network = o.network ?? soleNetworkOfFamily('tron');
  }

  get api(): TronWalletApi {
    return this.#o.api;
  }

  /** Head-room on energy estimates, in percent (CHAIN_TRON_<MODE>_ENERGY_MARGIN_PERCENT). */
  get energyMarginPercent(): number {
    return this.#o.energyMarginPercent;
  }

  /** getEnergyFee and getTransactionFee (sun per energy / per bandwidth byte), cached one minute. */
  async prices(): Promise<ChainPrices> {
    if (this.#prices && Date.now() - this.#prices.at < 60_000) return this.#prices.value;
    const value = await readChainPrices(this.#o.api);
    this.#prices = { at: Date.now(), value };
    return value;
  }

  async build(request: TokenTransferRequest): Promise<UnsignedTransfer<TronTxBody>> {
    const { token, from, to } = this.#checkRequest(request);
    // 1. Token balance of the hot wallet (then a dry run of the call, in #buildCall).
    const held = await this.tokenBalance(token, from);
    if (held < request.amount) {
      throw new TransferRejectedError(
        'insufficient_token_balance',
        `hot wallet ${tronBase58(from)} holds ${held} ${request.token} base units, the payout needs ${request.amount}`,
      );
    }
    return this.#buildCall(request, token, from, transferCall(to, request.amount), {}, { sender: from, recipient: to });
  }

  /**
   * A charge: `transferFrom(owner, request.to, amount)` sent, signed and paid for (energy, bandwidth) by the charger
   * `request.from`, with the fee_limit a payout's `transfer` gets (dry-run estimate + margin, under the ceiling).
   */
  async buildTransferFrom(request: TokenTransferRequest, ownerAddress: string): Promise<UnsignedTransfer<TronTxBody>> {
    const { token, from, to } = this.#checkRequest(request);
    const owner = normalizeTronAddress(ownerAddress);
    if (!owner) throw new TransferRejectedError('invalid', `not a TRON address: ${ownerAddress}`);
    const [held, allowed] = await Promise.all([this.tokenBalance(token, owner), this.tokenAllowance(token, owner, from)]);
    if (held < request.amount) {
      throw new TransferRejectedError(
        'insufficient_token_balance',
        `${tronBase58(owner)} holds ${held} ${request.token} base units, the charge needs ${request.amount}`,
      );
    }
    if (allowed < request.amount) {
      throw new TransferRejectedError(
        'simulation_reverted',
        `${tronBase58(owner)} allows ${tronBase58(from)} ${allowed} ${request.token} base units, the charge needs ${request.amount}`,
      );
    }
    return this.#buildCall(
      request,
      token,
      from,
      transferFromCall(owner, to, request.amount),
      { transferFromOwner: owner },
      { sender: owner, recipient: to, spender: from },
    );
  }

  /**
   * An unsigned `approve(spender, amount)` from `owner` (a customer's wallet, which signs and broadcasts it itself):
   * java-tron's transaction JSON as triggersmartcontract returns it, checked against the arguments. Its fee_limit
   * covers the dry-run energy + margin, under the ceiling; nothing about the owner's TRX is checked (the wallet shows it).
   * A dry run the token refuses is `simulation_reverted`: e.g. Tether-style approve(non-zero) while a non-zero
   * allowance stands (the page prepares approve(0) alone, and the full approve only after the reset landed).
   */
  async buildApproval(tokenSymbol: string, ownerAddress: string, spenderAddress: string, amount: bigint): Promise<TransactionJson> {
    const token = this.#token(tokenSymbol);
    const owner = normalizeTronAddress(ownerAddress);
    const spender = normalizeTronAddress(spenderAddress);
    if (!owner || !spender) throw new TransferRejectedError('invalid', `not a TRON address: ${owner ? spenderAddress : ownerAddress}`);
    if (amount < 0n) throw new TransferRejectedError('invalid', 'amount must not be negative');
    const call = approveCall(spender, amount);
    const dry = await constantCall(this.#o.api, token, owner, call.data);
    if (!dry.ok)
      throw new TransferRejectedError(
        'simulation_reverted',
        `the token refuses approve (${dry.message}): a non-zero allowance may have to be reset to 0 first`,
      );
    const feeLimit = await this.#feeLimit(dry.energy);
    const tx = await triggerCall(this.#o.api, token, owner, call, feeLimit);
    const raw = decodeTriggerRawData(tx.raw_data_hex);
    if (txIdOf(tx.raw_data_hex.toLowerCase()) !== tx.txID.toLowerCase() || !callMatches(raw, owner, token, call, feeLimit)) {
      throw new RpcError('bad_response', 'triggersmartcontract built another approve than the one asked for');
    }
    return { txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex, visible: tx.visible ?? false };
  }

  #checkRequest(request: TokenTransferRequest): { token: TokenContract; from: string; to: string } {
    const token = this.#token(request.token);
    const to = normalizeTronAddress(request.to);
    if (!to) throw new TransferRejectedError('invalid', `not a TRON address: ${request.to}`);
    const from = normalizeTronAddress(request.from.address);
    if (!from) throw new TransferRejectedError('invalid', `not a TRON hot wallet address: ${request.from.address}`);
    if (request.amount <= 0n) throw new TransferRejectedError('invalid', 'amount must be positive');
    return { token, from, to };
  }

  /** fee_limit for `energy` estimated units: margin added, priced at getEnergyFee, refused above the ceiling. */
  async #feeLimit(estimate: bigint): Promise<bigint> {
    const prices = await this.prices();
    const energy = (estimate * BigInt(100 + this.#o.energyMarginPercent) + 99n) / 100n;
    const feeLimit = energy * prices.energySun;
    if (feeLimit > this.#o.feeLimitCeilingSun) {
      throw new TransferRejectedError(
        'other',
        `fee_limit ${feeLimit} sun (${estimate} energy + ${this.#o.energyMarginPercent}% at ${prices.energySun} sun) exceeds the configured ceiling ${this.#o.feeLimitCeilingSun} sun`,
      );
    }
    return feeLimit;
  }

  async #buildCall(
    request: TokenTransferRequest,
    token: TokenContract,
    from: string,
    call: TokenCall,
    extra: Pick<TronTxBody, 'transferFromOwner'>,
    parties: { sender: string; recipient: string; spender?: string },
  ): Promise<UnsignedTransfer<TronTxBody>> {
    // 1. A dry run of the call from the sender (energy estimate, refusals; the token's state says which refusal).
    const dry = await constantCall(this.#o.api, token, from, call.data);
    if (!dry.ok) {
      const refusal = await tokenRefusal(this.#o.api, token, from, parties);
      throw new TransferRejectedError('simulation_reverted', `the token refuses the transfer (${dry.message})`, refusal ?? undefined);
    }

    // 2. fee_limit from the estimate, bounded by the ceiling; TRX for what staked resources do not cover.
    const feeLimit = await this.#feeLimit(dry.energy);
    const prices = await this.prices();
    const resources = await readHotWalletResources(this.#o.api, from, prices);
    if (!resources.activated)
      throw new TransferRejectedError(
        'insufficient_gas',
        `hot wallet ${tronBase58(from)} is not activated on chain (it never received TRX)`,
      );

    // 3. The node builds the transaction.
    const tx = await triggerCall(this.#o.api, token, from, call, feeLimit);
    const rawBytes = BigInt(tx.raw_data_hex.length / 2);
    const burn = trxNeededFor({ energy: dry.energy, bandwidthBytes: rawBytes + 67n + 64n }, resources, prices);
    if (resources.trxBalanceSun < burn) {
      throw new TransferRejectedError(
        'insufficient_gas',
        `hot wallet ${tronBase58(from)} holds ${resources.trxBalanceSun} sun TRX; energy and bandwidth it lacks cost ${burn} sun`,
      );
    }
    const body: TronTxBody = {
      transaction: { txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex },
      ...extra,
      energyEstimate: dry.energy.toString(),
      feeLimit: feeLimit.toString(),
      trxBurnEstimateSun: burn.toString(),
    };
    return { network: this.network, request, body };
  }

  sign(unsigned: UnsignedTransfer<TronTxBody>, signer: TxSigner): Promise<SignedTransfer> {
    return signTronTransfer(unsigned, signer, (symbol) => this.#token(symbol));
  }

  async broadcast(signed: SignedTransfer): Promise<BroadcastResult> {
    const reply = await this.#o.api.full<BroadcastReply>('wallet/broadcasthex', { transaction: signed.raw.replace(/^0x/, '') });
    if (reply.result === true) return { status: 'accepted' };
    const message = decodeNodeMessage(reply.message);
    const verdict = classifyBroadcast(reply.code, message);
    switch (verdict.kind) {
      case 'accepted':
        return { status: 'accepted' };
      case 'duplicate':
        return { status: 'already_known' };
      case 'retry':
        throw new RpcError('unavailable', `broadcast: ${reply.code} ${message}`);
      case 'rejected': {
        // A refusal of bytes the chain already holds (expired by now, or re-sent) is not a failure of the payout.
        if ((await this.outcome(signed.hash)).status !== 'unknown') return { status: 'already_known' };
        return { status: 'rejected', reason: verdict.reason, detail: `${reply.code ?? 'no code'}: ${message}` };
      }
      default: {
        const never: never = verdict;
        return never;
      }
    }
  }

  /**
   * Final only from the solidified receipt; an unsolidified receipt gives the same status with final=false.
   * `transferFrom` set (a charge): success needs a Transfer log from that owner, not from the transaction's sender.
   */
  outcome(hash: string, transferFrom?: string): Promise<TxOutcome> {
    return receipts.transferOutcome(this.#o, hash, transferFrom);
  }

  /** The Transfer from `owner` to `to` in a succeeded transaction, or null (transfer-outcome.ts). */
  chargeTransfer(hash: string, ownerAddress: string, toAddress: string): Promise<ChargeTransfer | null> {
    return receipts.chargeTransfer(this.#o, hash, ownerAddress, toAddress);
  }

  /** Sum of `tokenAddress`'s Transfer logs from `fromAddress` in a succeeded transaction: to `toAddress`, and elsewhere. */
  delivery(hash: string, tokenAddress: string, fromAddress: string, toAddress: string): Promise<Delivery | null> {
    return receipts.delivery(this.#o, hash, tokenAddress, fromAddress, toAddress);
  }

  /** True once `signed` can never land (solidified past its expiration, in no block): only then may a payout re-sign. */
  isExpired(signed: SignedTransfer): Promise<boolean> {
    return receipts.isExpired(this.#o, signed);
  }

  /** Gross amount so that the recipient gets `net` under the token's announced fee (Tether's views); `net` without. */
  async grossForNet(symbol: string, net: bigint): Promise<bigint> {
    const token = this.#token(symbol);
    const fee = await readTransferFee(tokenViews(this.#o.api, token, token.address));
    if (!fee) return net;
    const gross = grossForNet(net, fee);
    if (gross === null)
      throw new TransferRejectedError('invalid', `${symbol} takes a fee of ${fee.basisPoints} basis points: no amount delivers ${net}`);
    return gross;
  }

  /** allowance(owner, spender) in base units; `at: 'final'` reads solidified state, as authorizations are read. */
  tokenAllowance(token: TokenContract, owner: string, spender: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    return readTokenAllowance(this.#o.api, token, owner, spender, at);
  }

  token(symbol: string): TokenContract {
    return this.#token(symbol);
  }

  /** balanceOf(owner) in base units; `at: 'final'` reads solidified state: what a sweep plans from. */
  tokenBalance(token: TokenContract, owner: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    return readTokenBalance(this.#o.api, token, owner, at);
  }

  /** TRX balance (sun) from getaccount; 0 for an account never activated. `at: 'final'`: the solidity API's. */
  async trxBalance(owner: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const r =
      at === 'final'
        ? await this.#o.api.solidity<AccountJson>('walletsolidity/getaccount', { address: owner })
        : await this.#o.api.full<AccountJson>('wallet/getaccount', { address: owner });
    return int64(r.balance);
  }

  /** The solidified block's height (walletsolidity/getnowblock): the state the solidity API answers from. */
  async solidHeight(): Promise<bigint> {
    const solid = await this.#o.api.solidity<BlockJson>('walletsolidity/getnowblock', {});
    return int64(solid.block_header?.raw_data?.number);
  }

  #token(symbol: string): TokenContract {
    const t = this.#o.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new TransferRejectedError('invalid', `${symbol} is not configured on tron`);
    return t;
  }
}
