import {
  OPERATOR_ACCOUNT,
  OPERATOR_SLOT,
  TransferRejectedError,
  type AllowanceCharger,
  type Sweeper,
  type SweepMethodImpl,
  type Wallet,
  type BalanceQuery,
  type BalanceReader,
  type FinalStateRead,
  type FinalStateReader,
  type ChainAdapter,
  type ChargeTransfer,
  type ObservedApproval,
  type TxOutcome,
  type WalletTransaction,
  type ChainFamily,
  type ChainHead,
  type CursorState,
  type KeyDeriver,
  type OutgoingHistory,
  type KeyPath,
  type Mode,
  type NetworkId,
  type PaymentLinkRequest,
  type PollResult,
  type SignedTransfer,
  type TokenContract,
  type TokenSymbol,
  type TokenTransferRequest,
  type TxSigner,
  type UnsignedTransfer,
  type WalletLink,
  type WatchSet,
} from '../types.js';
import { APPROVAL_TOPIC, addressTopic, decodeApprovalLog } from '../evm/approval-log.js';
import type { ConfirmationPolicy } from '../evm/block-scanner.js';
import { toHex, type RpcLog, type RpcReceipt } from '../evm/rpc-types.js';
import { RpcError } from '../evm/rpc-errors.js';
import { chainEnvPrefix as envPrefix } from '../env-names.js';
import { soleNetworkOfFamily } from '../registry.js';
import { TRANSFER_TOPIC } from '../evm/transfer-log.js';
import { evmHexToTron, normalizeTronAddress, tronBase58, tronToEvmHex } from './address.js';
import { DEFAULT_ENERGY_MARGIN_PERCENT, DEFAULT_FEE_LIMIT_CEILING_SUN, loadTronExtraSettings } from './config.js';
import { FailoverJsonRpc } from '../evm/failover-rpc.js';
import type { RpcLogger, RpcObserver } from '../rpc/observer.js';
import { tronAddressAt, tronDepositKeyPath, tronHotWalletKeyPath } from './keys.js';
import { tronPaymentLinks } from './payment-uri.js';
import { formatHotWalletResources, readHotWalletResources, type HotWalletResources } from './resources.js';
import { TronTokenSender, type TronTxBody } from './token-sender.js';
import { TronEnergyDelegationSweep } from './sweep-energy.js';
import { TronTrxTopupSweep } from './sweep-topup.js';
import { createTronNativeDrain } from './native-drain.js';
import { TronTransferSource } from './transfer-source.js';
import { TronWalletApi } from './wallet-api.js';
import { tronUnknownOutgoing, type TronHistoryOptions } from './outgoing-history.js';

export interface TronAdapterOptions {
  /** The registry's network this adapter serves; default the TRON family's only network. */
  network?: NetworkId;
  mode: Mode;
  /** java-tron Ethereum-compatible JSON-RPC (detection), e.g. https://api.trongrid.io/jsonrpc. */
  jsonRpcUrl: string;
  /** Further JSON-RPC endpoints (failover); the wallet API hosts stay single. */
  jsonRpcUrls?: readonly string[];
  finalityQuorum?: number;
  maxLagBlocks?: bigint;
  rpcObserver?: RpcObserver;
  rpcLog?: RpcLogger;
  /** HTTP wallet API (sending); without it the adapter detects deposits but refuses to build transfers. */
  fullHost?: string;
  solidityHost?: string;
  /** TronGrid key, sent as TRON-PRO-API-KEY on both APIs. */
  apiKey?: string;
  /** TronGrid-compatible account history (`/v1/accounts/{address}/transactions`); default fullHost. */
  historyHost?: string;
  rpcTimeoutMs?: number;
  chainId?: bigint;
  /** Registry tokens; addresses in any TRON form (normalised to `41...`). */
  tokens: readonly TokenContract[];
  /** `finalized` = solidified block (default); a depth counts blocks instead. */
  confirmation?: ConfirmationPolicy;
  maxBlockRange?: number;
  feeLimitCeilingSun?: bigint;
  energyMarginPercent?: number;
}

/**
 * TRON mainnet / Nile / Shasta: TRC-20 USDT (and USDC when configured). Canonical addresses are `41...` hex.
 * Subscriptions (AllowanceCharger): Approval logs from the JSON-RPC, everything else through the wallet API.
 */
/**
 * Balances read between two looks at the solidified block (finalStateBalances), and the reads of a chunk (each time
 * half as large) before its balances are taken with a height range.
 */
const FINAL_READ_CHUNK = 32;
const FINAL_READ_ATTEMPTS = 3;

export class TronChainAdapter
  implements ChainAdapter<TronTxBody>, AllowanceCharger<TronTxBody>, Sweeper<TronTxBody>, BalanceReader, FinalStateReader, OutgoingHistory
{
  readonly family: ChainFamily = 'tron';
  readonly network: NetworkId;
  readonly mode: Mode;
  readonly tokens: readonly TokenContract[];
  readonly rpc: FailoverJsonRpc;
  readonly source: TronTransferSource;
  readonly #sender: TronTokenSender | null;
  readonly #history: TronHistoryOptions | null;
  #sweepMethods: ReadonlyArray<SweepMethodImpl<TronTxBody>> | null = null;
  /** The operator's resources account (OPERATOR_SLOT.resources), remembered when derived: energy delegation checks its stake. */
  #resourcesAddress: string | null = null;
  /** Subscriptions need the wallet API (reads, transferFrom); without FULL_HOST this adapter only detects deposits. */
  get chargesAvailable(): boolean {
    return this.#sender !== null;
  }

  constructor(o: TronAdapterOptions) {
    this.network = o.network ?? soleNetworkOfFamily('tron');
    this.mode = o.mode;
    this.tokens = o.tokens.map((t) => {
      const address = normalizeTronAddress(t.address);
      if (!address) throw new Error(`tron: bad ${t.symbol} contract address ${t.address}`);
      return { ...t, address };
    });
    const headers: Record<string, string> = o.apiKey ? { 'TRON-PRO-API-KEY': o.apiKey } : {};
    this.rpc = new FailoverJsonRpc({
      network: this.network,
      mode: o.mode,
      urls: [o.jsonRpcUrl, ...(o.jsonRpcUrls ?? []).filter((u) => u !== o.jsonRpcUrl)],
      timeoutMs: o.rpcTimeoutMs ?? 10_000,
      headers,
      maxLagBlocks: o.maxLagBlocks,
      observer: o.rpcObserver,
      log: o.rpcLog,
    });
    this.source = new TronTransferSource({
      rpc: this.rpc,
      finalityQuorum: o.finalityQuorum,
      tokens: this.tokens,
      confirmation: o.confirmation ?? { kind: 'finalized' },
      maxBlockRange: o.maxBlockRange ?? 1000,
      chainId: o.chainId,
    });
    this.#sender = o.fullHost
      ? new TronTokenSender({
          network: this.network,
          api: new TronWalletApi({
            fullHost: o.fullHost,
            solidityHost: o.solidityHost,
            apiKey: o.apiKey,
            timeoutMs: o.rpcTimeoutMs ?? 15_000,
          }),
          tokens: this.tokens,
          feeLimitCeilingSun: o.feeLimitCeilingSun ?? DEFAULT_FEE_LIMIT_CEILING_SUN,
          energyMarginPercent: o.energyMarginPercent ?? DEFAULT_ENERGY_MARGIN_PERCENT,
        })
      : null;
    const historyHost = o.historyHost ?? o.fullHost;
    this.#history = historyHost ? { host: historyHost, apiKey: o.apiKey, timeoutMs: o.rpcTimeoutMs ?? 15_000 } : null;
  }

  /** The wallet's recent outgoing transactions the ledger does not know (chains/tron/outgoing-history.ts). */
  async unknownOutgoing(address: string, sinceMs: number, known: (hashes: string[]) => Promise<Set<string>>) {
    if (!this.#history)
      throw new Error(`${this.network}: no account history configured (${envPrefix(this.network)}<MODE>_HISTORY_HOST or FULL_HOST)`);
    return tronUnknownOutgoing(this.#history, address, sinceMs, known);
  }

  normalizeAddress(text: string): string | null {
    return normalizeTronAddress(text);
  }

  displayAddress(canonical: string): string {
    return tronBase58(canonical);
  }

  async deriveDepositAddress(keys: KeyDeriver, account: number, index: bigint): Promise<string> {
    return tronAddressAt(keys, tronDepositKeyPath(account, index));
  }

  /** Reserved hot wallet `slot` of `account`: m/44'/195'/account'/1/slot; address canonical (`41...`). */
  async deriveHotWallet(keys: KeyDeriver, account: number, slot: number): Promise<{ key: KeyPath; address: string }> {
    const key = tronHotWalletKeyPath(account, slot);
    return { key, address: await tronAddressAt(keys, key) };
  }

  /** TRON has no account nonce: uniqueness comes from the txID (ref block + expiration + timestamp). */
  async getAccountNonce(): Promise<null> {
    return null;
  }

  /** `native` is TRX in sun; tokens by balanceOf, in base units. */
  async getBalances(address: string): Promise<{ native: bigint; tokens: Partial<Record<TokenSymbol, bigint>> }> {
    const canonical = normalizeTronAddress(address);
    if (!canonical) throw new Error(`not a TRON address: ${address}`);
    const sender = this.#send();
    const tokens: Partial<Record<TokenSymbol, bigint>> = {};
    for (const t of this.tokens) tokens[t.symbol] = await sender.tokenBalance(t, canonical);
    return { native: await sender.trxBalance(canonical), tokens };
  }

  #balanceRpcCalls = 0;

  get balanceRpcCalls(): number {
    return this.#balanceRpcCalls;
  }

  /**
   * BalanceReader, per account through the wallet API (TRX balance, TRC-20 balanceOf), eight in flight. The wallet API
   * keeps no state by height: this is the latest state. Reconcile reads with finalStateBalances instead.
   */
  async balancesAt(_height: bigint, items: readonly BalanceQuery[]): Promise<bigint[]> {
    return this.#readBalances(items, 'latest');
  }

  /**
   * FinalStateReader: the solidified state, exactly. The solidity API (walletsolidity/getaccount,
   * walletsolidity/triggerconstantcontract) answers from the latest solidified block, and TRON's JSON-RPC serves
   * `latest` only (no block parameter), so each chunk of FINAL_READ_CHUNK balances is bracketed by the solidified
   * block's height (walletsolidity/getnowblock) before and after: unchanged, every balance of the chunk is that
   * block's state; moved, the chunk is read again, half as large, and after FINAL_READ_ATTEMPTS reads its balances
   * are answered with the range of blocks they may be from (`lowHeights`). The height after one chunk is the height
   * before the next. `minHeight` is not needed: the solidified block only grows.
   */
  async finalStateBalances(_minHeight: bigint, items: readonly BalanceQuery[]): Promise<FinalStateRead> {
    const sender = this.#send();
    const balances: bigint[] = [];
    const heights: bigint[] = [];
    const lowHeights: bigint[] = [];
    let retries = 0;
    this.#balanceRpcCalls++;
    let before = await sender.solidHeight();
    for (let start = 0; start < items.length; ) {
      for (let attempt = 1, size = FINAL_READ_CHUNK; ; attempt++, size = Math.max(1, Math.floor(size / 2))) {
        const chunk = items.slice(start, start + size);
        const read = await this.#readBalances(chunk, 'final');
        this.#balanceRpcCalls++;
        const after = await sender.solidHeight();
        // Unchanged: exactly that block's state. Moved: read again, smaller; after the last attempt, each balance is
        // the state of some block in [before, after], said so by lowHeights (reconcile compares what that settles).
        if (after === before || attempt === FINAL_READ_ATTEMPTS) {
          balances.push(...read);
          heights.push(...chunk.map(() => after));
          lowHeights.push(...chunk.map(() => before));
          start += chunk.length;
          before = after;
          break;
        }
        before = after;
        retries++;
      }
    }
    return { balances, heights, lowHeights, retries };
  }

  async #readBalances(items: readonly BalanceQuery[], at: 'latest' | 'final'): Promise<bigint[]> {
    const sender = this.#send();
    const out: bigint[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        const q = items[i]!;
        const canonical = normalizeTronAddress(q.address);
        if (!canonical) throw new Error(`not a TRON address: ${q.address}`);
        this.#balanceRpcCalls++;
        if (q.asset === 'native') out[i] = await sender.trxBalance(canonical, at);
        else {
          const token = this.tokens.find((t) => t.symbol === q.asset);
          if (!token) throw new Error(`tron: no ${q.asset} in the token registry`);
          out[i] = await sender.tokenBalance(token, canonical, at);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, items.length) }, worker));
    return out;
  }

  getHead(): Promise<ChainHead> {
    return this.source.head();
  }

  initialCursor(startHeight?: bigint): Promise<CursorState> {
    return this.source.initialCursor(startHeight);
  }

  pollTransfers(cursor: CursorState, watch: WatchSet): Promise<PollResult> {
    return this.source.poll(cursor, watch);
  }

  verifyTokens(): Promise<void> {
    return this.source.verifyTokens();
  }

  buildTokenTransfer(request: TokenTransferRequest): Promise<UnsignedTransfer<TronTxBody>> {
    return this.#send().build(request);
  }

  signTransfer(unsigned: UnsignedTransfer<TronTxBody>, signer: TxSigner): Promise<SignedTransfer> {
    return this.#send().sign(unsigned, signer);
  }

  broadcast(signed: SignedTransfer) {
    return this.#send().broadcast(signed);
  }

  getTransactionOutcome(hash: string) {
    return this.#send().outcome(hash);
  }

  grossForNet(token: TokenSymbol, net: bigint): Promise<bigint> {
    return this.#send().grossForNet(token, net);
  }

  readDelivery(hash: string, token: TokenSymbol, from: string, to: string) {
    const sender = this.#send();
    return sender.delivery(hash, sender.token(token).address, from, to);
  }

  /** TRON-specific: true once `signed` has expired and is proven absent; only then may a payout re-sign. */
  /** No account nonces here: a transfer is bound to a recent block instead. */
  withNonce(unsigned: UnsignedTransfer<TronTxBody>): UnsignedTransfer<TronTxBody> {
    return unsigned;
  }

  isExpired(signed: SignedTransfer): Promise<boolean> {
    return this.#send().isExpired(signed);
  }

  // Allowance charging (subscriptions). Reads (allowance, balance) and charges go through the wallet API like payouts;
  // Approval logs come from the JSON-RPC like deposits. The charger sends every transferFrom and pays its energy.

  async getAllowance(token: TokenSymbol, owner: string, spender: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const sender = this.#send();
    return sender.tokenAllowance(sender.token(token), this.#canonical(owner), this.#canonical(spender), at);
  }

  async getTokenBalance(token: TokenSymbol, owner: string): Promise<bigint> {
    const sender = this.#send();
    return sender.tokenBalance(sender.token(token), this.#canonical(owner));
  }

  /**
   * `Approval(owner, spender, value)` logs of registry tokens whose spender is one of `spenders`, over `eth_getLogs`
   * (addresses `41...` at the edges, `0x...` on the wire; tx hashes in TRON's form, without `0x`).
   */
  async scanApprovals(fromHeight: bigint, toHeight: bigint, spenders: readonly string[]): Promise<ObservedApproval[]> {
    if (spenders.length === 0 || toHeight < fromHeight) return [];
    const byEvmHex = new Map(this.tokens.map((t) => [tronToEvmHex(t.address), t]));
    const evmSpenders = spenders.map((s) => tronToEvmHex(this.#canonical(s)));
    const logs = await this.rpc.call<RpcLog[]>('eth_getLogs', [
      {
        fromBlock: toHex(fromHeight),
        toBlock: toHex(toHeight),
        address: [...byEvmHex.keys()],
        topics: [APPROVAL_TOPIC, null, evmSpenders.map(addressTopic)],
      },
    ]);
    const wanted = new Set(evmSpenders);
    const out: ObservedApproval[] = [];
    for (const log of logs) {
      const d = decodeApprovalLog(log);
      const token = d && byEvmHex.get(d.token);
      if (!d || !token || !wanted.has(d.spender)) continue;
      out.push({
        txHash: d.txHash.replace(/^0x/, ''),
        logIndex: d.logIndex,
        blockHeight: d.blockNumber,
        token: token.symbol,
        tokenContract: token.address,
        owner: evmHexToTron(d.owner),
        spender: evmHexToTron(d.spender),
        value: d.value,
      });
    }
    return out.sort((a, b) => (a.blockHeight === b.blockHeight ? a.logIndex - b.logIndex : a.blockHeight < b.blockHeight ? -1 : 1));
  }

  /** `approve(spender, amount)` from the customer's wallet, built by the node, for TronLink's `trx.sign` + `sendRawTransaction`. */
  async buildApprovalForWallet(token: TokenSymbol, owner: string, spender: string, amount: bigint): Promise<WalletTransaction> {
    const transaction = await this.#send().buildApproval(token, owner, spender, amount);
    return { kind: 'tron', transaction: { ...transaction } };
  }

  /** `transferFrom(owner, request.to, amount)` from the charger `request.from`; no nonce (`withNonce` is the identity). */
  buildTokenTransferFrom(request: TokenTransferRequest, owner: string): Promise<UnsignedTransfer<TronTxBody>> {
    return this.#send().buildTransferFrom(request, owner);
  }

  getTransferFromOutcome(hash: string, owner: string): Promise<TxOutcome> {
    return this.#send().outcome(hash, this.#canonical(owner));
  }

  /**
   * The charge's Transfer, found and checked on the wallet API's solidified receipt, named by its log index as java-tron's
   * JSON-RPC numbers it: across the block, as detection (`scan`, `scanApprovals`) and every other TRON ledger row name
   * logs. The wallet API's `log` list numbers a transaction's logs from 0; the ledger must never name one transfer two
   * ways (docs/tron.md "Subscriptions"; found by the simulator, docs/simulation.md "What it found" 13).
   */
  async findChargeTransfer(hash: string, owner: string, to: string): Promise<ChargeTransfer | null> {
    const t = await this.#send().chargeTransfer(hash, owner, to);
    if (!t) return null;
    return { ...t, logIndex: await this.#blockLogIndex(hash, t.logIndex, t.tokenContract) };
  }

  /** The JSON-RPC (block-wide) index of the `position`-th log of transaction `hash`; throws while the node cannot tell. */
  async #blockLogIndex(hash: string, position: number, tokenContract: string): Promise<number> {
    const txHash = `0x${hash.replace(/^0x/, '').toLowerCase()}`;
    const r = await this.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [txHash]);
    const log = r?.logs[position];
    if (!log) throw new RpcError('unavailable', `the JSON-RPC has no log ${position} of ${hash} yet`);
    const contract = tronToEvmHex(normalizeTronAddress(tokenContract) ?? tokenContract).toLowerCase();
    if (log.address.toLowerCase() !== contract || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC)
      throw new RpcError(
        'bad_response',
        `log ${position} of ${hash} on the JSON-RPC is not the ${tokenContract} Transfer the wallet API names`,
      );
    return Number(BigInt(log.logIndex));
  }

  #canonical(address: string): string {
    const c = normalizeTronAddress(address);
    if (!c) throw new TransferRejectedError('invalid', `not a TRON address: ${address}`);
    return c;
  }

  /** TRON-specific: the hot wallet's TRX, energy and bandwidth (operator CLI, pre-payout checks). */
  async hotWalletResources(address: string): Promise<HotWalletResources> {
    const canonical = normalizeTronAddress(address);
    if (!canonical) throw new Error(`not a TRON address: ${address}`);
    const sender = this.#send();
    return readHotWalletResources(sender.api, canonical, await sender.prices());
  }

  /** Energy, bandwidth and TRX of a hot wallet, with the chain's prices: what the next refund will cost. */
  async describeFeeResources(address: string): Promise<Record<string, unknown>> {
    const r = await this.hotWalletResources(address);
    return {
      activated: r.activated,
      trx_balance_sun: r.trxBalanceSun,
      energy: r.energy,
      bandwidth: r.bandwidth,
      summary: formatHotWalletResources(r),
    };
  }

  async describeHotWallet(address: string): Promise<string> {
    return formatHotWalletResources(await this.hotWalletResources(address));
  }

  /** What the hosted page shows: base58 address (QR), exact amount, token contract, `tron:` link. */
  /** No TRON payment URI standard (payment-uri.ts): the QR holds the bare address, the link is `tron:<address>` without an amount. */
  async paymentLink(request: PaymentLinkRequest): Promise<WalletLink> {
    const links = tronPaymentLinks({
      address: request.depositAddress,
      tokenContract: request.token.address,
      amount: request.amountBase,
      decimals: request.token.decimals,
    });
    return { href: links.uri, qr: links.address };
  }

  // Sweeping (docs/treasury-tron.md): energy delegation from the operator's staked resources account, preferred;
  // TRX top-up as the fallback. Both build through the wallet API and sign with signTransfer.

  sweepMethods(): ReadonlyArray<SweepMethodImpl<TronTxBody>> {
    if (!this.#sender) return [];
    this.#sweepMethods ??= [new TronEnergyDelegationSweep(this.#sender, () => this.#resourcesAddress), new TronTrxTopupSweep(this.#sender)];
    return this.#sweepMethods;
  }

  /**
   * balanceOf at the solidified state (walletsolidity/triggerconstantcontract). The wallet API has no batch call: one
   * request per address, a few at a time.
   */
  async finalTokenBalances(token: TokenSymbol, addresses: readonly string[]): Promise<bigint[]> {
    const sender = this.#send();
    const t = sender.token(token);
    const out: bigint[] = [];
    for (let i = 0; i < addresses.length; i += 8) {
      const chunk = addresses.slice(i, i + 8).map((a) => this.#canonical(a));
      out.push(...(await Promise.all(chunk.map((a) => sender.tokenBalance(t, a, 'final')))));
    }
    return out;
  }

  /** m/44'/195'/0'/1/slot: the deployment's gas station (TRX funder) and resources account (staked energy). */
  async deriveOperatorWallet(keys: KeyDeriver, slot: number): Promise<Wallet> {
    const w = await this.deriveHotWallet(keys, OPERATOR_ACCOUNT, slot);
    if (slot === OPERATOR_SLOT.resources) this.#resourcesAddress = w.address;
    return w;
  }

  /** A retired gas station's TRX to the current one, minus what the transfer burns (chains/tron/native-drain.ts). */
  buildNativeDrain(from: Wallet, to: string, nonce: bigint | null, feeBumpPercent: number): Promise<UnsignedTransfer<TronTxBody> | null> {
    return createTronNativeDrain(this.#send()).build(from, to, nonce, feeBumpPercent);
  }

  readNativeDrain(hash: string, to: string): Promise<bigint | null> {
    return createTronNativeDrain(this.#send()).read(hash, to);
  }

  #send(): TronTokenSender {
    if (!this.#sender)
      throw new TransferRejectedError('invalid', `${this.network}: no wallet API configured (${envPrefix(this.network)}<MODE>_FULL_HOST)`);
    return this.#sender;
  }
}

/**
 * For the watcher's adapter factory (src/watcher/adapter-factory.ts), with the environment of the TRON-only settings.
 * Shared settings (RPC_URL = JSON-RPC, CONFIRMATIONS, tokens, ...) come from src/watcher/config.ts; the TRON-only
 * ones (FULL_HOST, API_KEY, fee_limit ceiling, energy margin) from chains/tron/config.ts.
 */
export function createTronAdapterFactory(env: Record<string, string | undefined>) {
  return (s: {
    network?: NetworkId;
    mode: Mode;
    rpcUrl: string;
    rpcUrls?: readonly string[];
    rpcQuorum?: number;
    rpcMaxLagBlocks?: bigint;
    rpcObserver?: RpcObserver;
    rpcLog?: RpcLogger;
    rpcTimeoutMs: number;
    chainId: bigint | undefined;
    tokens: readonly TokenContract[];
    confirmation: ConfirmationPolicy;
    maxBlockRange: number;
  }): TronChainAdapter => {
    const network = s.network ?? soleNetworkOfFamily('tron');
    const x = loadTronExtraSettings(env, s.mode, s.rpcUrl, network);
    return new TronChainAdapter({
      network,
      mode: s.mode,
      jsonRpcUrl: s.rpcUrl,
      jsonRpcUrls: s.rpcUrls,
      finalityQuorum: s.rpcQuorum,
      maxLagBlocks: s.rpcMaxLagBlocks,
      rpcObserver: s.rpcObserver,
      rpcLog: s.rpcLog,
      fullHost: x.fullHost,
      solidityHost: x.solidityHost,
      apiKey: x.apiKey,
      historyHost: x.historyHost,
      rpcTimeoutMs: s.rpcTimeoutMs,
      chainId: s.chainId,
      tokens: s.tokens,
      confirmation: s.confirmation,
      maxBlockRange: s.maxBlockRange,
      feeLimitCeilingSun: x.feeLimitCeilingSun,
      energyMarginPercent: x.energyMarginPercent,
    });
  };
}
