import { ERC20 } from './erc20-abi.js';
import { APPROVAL_TOPIC, addressTopic, decodeApprovalLog } from './approval-log.js';
import { decodeTransferLog } from './transfer-log.js';
import { fetchHeader, toHex, type RpcLog, type RpcReceipt } from './rpc-types.js';
import {
  OPERATOR_ACCOUNT,
  TokenRegistryMismatchError,
  type ChainAdapter,
  type ChainFamily,
  type ChainHead,
  type CursorState,
  type AddressBalances,
  type BalanceQuery,
  type BalanceReader,
  type AllowanceCharger,
  type ChargeTransfer,
  type ObservedApproval,
  type Sweeper,
  type SweepMethodImpl,
  type Wallet,
  type TokenSymbol,
  type KeyDeriver,
  type KeyPath,
  type Mode,
  type NetworkId,
  type PaymentLinkRequest,
  type PollResult,
  type SignedTransfer,
  type TokenContract,
  type TokenTransferRequest,
  type TxSigner,
  type UnsignedTransfer,
  type WalletLink,
  type WatchSet,
} from '../types.js';
import { networkEntry } from '../registry.js';
import type { EvmFeeModel } from '../networks/entry.js';
import type { LookalikeContract } from '../contract/objects.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, CHANGE_HOT_WALLET, addressPath } from '../hd/bip44.js';
import { checksumEvmAddress, evmAddressFromPublicKey, normalizeEvmAddress } from './address.js';
import { BlockScanner, type ConfirmationPolicy } from './block-scanner.js';
import { encodeCursor } from './cursor.js';
import { FailoverJsonRpc } from './failover-rpc.js';
import type { RpcLogger, RpcObserver } from '../rpc/observer.js';
import { EvmTokenSender, type EvmTxBody } from './token-sender.js';
import type { EvmSweepContext } from './sweep-context.js';
import { createEip7702Sweep } from './sweep-7702.js';
import { createGasTopUpSweep } from './sweep-topup.js';
import { createEvmNativeDrain } from './native-drain.js';
import { EvmFees } from './fee-model.js';

export interface EvmAdapterOptions {
  network: NetworkId;
  mode: Mode;
  /** What a transaction costs on this chain (L1 data fee, minimum tip): the network registry's `fees`. Absent: gas x price. */
  fees?: EvmFeeModel;
  /** Bridged copies of the settlement tokens (the registry's look-alikes): observed and reported, never credited. */
  lookalikes?: readonly LookalikeContract[];
  rpcUrl: string;
  /** Further endpoints of the same chain, tried in this order after `rpcUrl` (failover, chains/rpc/endpoint-pool.ts). */
  rpcUrls?: readonly string[];
  rpcTimeoutMs?: number;
  /** Endpoints that must agree on the final block (default 1). */
  finalityQuorum?: number;
  /** Blocks an endpoint may trail the best head before it leaves the rotation (default 10). */
  maxLagBlocks?: bigint;
  rpcObserver?: RpcObserver;
  rpcLog?: RpcLogger;
  /** Expected eth_chainId; checked by verifyTokens when set. */
  chainId?: bigint;
  tokens: readonly TokenContract[];
  confirmation: ConfirmationPolicy;
  maxBlockRange?: number;
}

/** Addresses per JSON-RPC batch when reading balances (one HTTP request each). */
export const BALANCE_BATCH_SIZE = 200;
/** Balance reads per JSON-RPC batch (reconciliation): one HTTP request each. */
const BALANCE_BATCH = 500;

/** The registry's live chain id, for EIP-681 links when none is configured. */
/** EIP-681's URI scheme: a protocol's name, whichever EVM network the link is for. */
const EIP681_SCHEME = 'ethereum:';

const knownLiveChainId = (network: NetworkId): bigint | undefined => {
  const id = networkEntry(network)?.live.chainId;
  return id === undefined ? undefined : BigInt(id);
};

/** Ethereum and BSC (and any EVM chain): one class, per-chain numbers from configuration. */
export class EvmChainAdapter implements ChainAdapter<EvmTxBody>, AllowanceCharger<EvmTxBody>, Sweeper<EvmTxBody>, BalanceReader {
  readonly family: ChainFamily = 'evm';
  readonly network: NetworkId;
  readonly mode: Mode;
  readonly tokens: readonly TokenContract[];
  readonly lookalikes: readonly LookalikeContract[];
  readonly rpc: FailoverJsonRpc;
  readonly scanner: BlockScanner;
  readonly #sender: EvmTokenSender;
  readonly #chainId: bigint | undefined;
  #askedChainId: Promise<bigint> | undefined;
  #sweepMethods: ReadonlyArray<SweepMethodImpl<EvmTxBody>> | undefined;

  constructor(o: EvmAdapterOptions) {
    this.network = o.network;
    this.mode = o.mode;
    this.tokens = o.tokens.map((t) => {
      const address = normalizeEvmAddress(t.address);
      if (!address) throw new Error(`${o.network}: bad ${t.symbol} contract address ${t.address}`);
      return { ...t, address };
    });
    this.lookalikes = (o.lookalikes ?? []).map((l) => {
      const address = normalizeEvmAddress(l.address);
      if (!address) throw new Error(`${o.network}: bad look-alike ${l.symbol} contract address ${l.address}`);
      return { ...l, address };
    });
    this.rpc = new FailoverJsonRpc({
      network: o.network,
      mode: o.mode,
      urls: [o.rpcUrl, ...(o.rpcUrls ?? []).filter((u) => u !== o.rpcUrl)],
      timeoutMs: o.rpcTimeoutMs ?? 10_000,
      maxLagBlocks: o.maxLagBlocks,
      observer: o.rpcObserver,
      log: o.rpcLog,
    });
    this.scanner = new BlockScanner({
      rpc: this.rpc,
      finalityQuorum: o.finalityQuorum,
      tokens: this.tokens,
      lookalikes: this.lookalikes,
      confirmation: o.confirmation,
      maxBlockRange: o.maxBlockRange ?? 1000,
    });
    this.#sender = new EvmTokenSender(o.network, this.rpc, this.tokens, () => this.scanner.head(), new EvmFees(this.rpc, o.fees));
    this.#chainId = o.chainId;
  }

  normalizeAddress(text: string): string | null {
    return normalizeEvmAddress(text);
  }

  displayAddress(canonical: string): string {
    return checksumEvmAddress(canonical);
  }

  async deriveDepositAddress(keys: KeyDeriver, account: number, index: bigint): Promise<string> {
    const pub = await keys.publicKey({ curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, account, CHANGE_DEPOSIT, index) });
    return evmAddressFromPublicKey(pub);
  }

  /**
   * EIP-681: `ethereum:<token>@<chainId>/transfer?address=<deposit>&uint256=<base units>` on every EVM network: the
   * scheme is the protocol's name, the chain id (the registry's, for a live network) says which chain.
   */
  async paymentLink(request: PaymentLinkRequest): Promise<WalletLink> {
    const chainId = await this.paymentChainId();
    const href = `${EIP681_SCHEME}${this.displayAddress(request.token.address)}@${chainId}/transfer?address=${this.displayAddress(request.depositAddress)}&uint256=${request.amountBase}`;
    return { href, qr: href };
  }

  /** The configured chain id, else the mainnet id in live mode, else asked from the node once (again after a failure). */
  paymentChainId(): Promise<bigint> {
    const fixed = this.#chainId ?? (this.mode === 'live' ? knownLiveChainId(this.network) : undefined);
    if (fixed !== undefined) return Promise.resolve(fixed);
    if (!this.#askedChainId) {
      const asked = this.rpc.call<string>('eth_chainId', []).then(BigInt);
      asked.catch(() => {
        if (this.#askedChainId === asked) this.#askedChainId = undefined;
      });
      this.#askedChainId = asked;
    }
    return this.#askedChainId;
  }

  async deriveHotWallet(keys: KeyDeriver, account: number, slot: number): Promise<{ key: KeyPath; address: string }> {
    const key: KeyPath = { curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, account, CHANGE_HOT_WALLET, slot) };
    return { key, address: evmAddressFromPublicKey(await keys.publicKey(key)) };
  }

  async getAccountNonce(address: string): Promise<bigint> {
    return BigInt(await this.rpc.call<string>('eth_getTransactionCount', [address, 'pending']));
  }

  /** EVM transactions never expire: a signed transaction stays valid until its nonce is used. */
  async isExpired(): Promise<boolean> {
    return false;
  }

  async getBalances(address: string): Promise<AddressBalances> {
    const native = BigInt(await this.rpc.call<string>('eth_getBalance', [address, 'latest']));
    const tokens: AddressBalances['tokens'] = {};
    for (const t of this.tokens) tokens[t.symbol] = await this.getTokenBalance(t.symbol, address);
    return { native, tokens };
  }

  async getHead(): Promise<ChainHead> {
    return this.scanner.head();
  }

  async initialCursor(startHeight?: bigint): Promise<CursorState> {
    return encodeCursor(await this.scanner.initialCursor(startHeight));
  }

  pollTransfers(cursor: CursorState, watch: WatchSet): Promise<PollResult> {
    return this.scanner.poll(cursor, watch);
  }

  async verifyTokens(): Promise<void> {
    if (this.#chainId !== undefined) {
      const actual = BigInt(await this.rpc.call<string>('eth_chainId', []));
      if (actual !== this.#chainId)
        throw new TokenRegistryMismatchError(`${this.network}: RPC chain id ${actual}, expected ${this.#chainId}`);
    }
    for (const t of this.tokens) {
      const code = await this.rpc.call<string>('eth_getCode', [t.address, 'latest']);
      if (code === '0x') throw new TokenRegistryMismatchError(`${this.network} ${t.symbol}: no contract at ${t.address}`);
      const raw = await this.rpc.call<string>('eth_call', [{ to: t.address, data: ERC20.encodeFunctionData('decimals') }, 'latest']);
      const onChain = Number(ERC20.decodeFunctionResult('decimals', raw)[0]);
      if (onChain !== t.decimals) {
        throw new TokenRegistryMismatchError(
          `${this.network} ${t.symbol} at ${t.address}: decimals() is ${onChain}, registry says ${t.decimals}`,
        );
      }
    }
  }

  buildTokenTransfer(request: TokenTransferRequest): Promise<UnsignedTransfer<EvmTxBody>> {
    return this.#sender.build(request);
  }

  signTransfer(unsigned: UnsignedTransfer<EvmTxBody>, signer: TxSigner): Promise<SignedTransfer> {
    return this.#sender.sign(unsigned, signer);
  }

  broadcast(signed: SignedTransfer) {
    return this.#sender.broadcast(signed);
  }

  getTransactionOutcome(hash: string) {
    return this.#sender.outcome(hash);
  }

  readDelivery(hash: string, token: TokenSymbol, from: string, to: string) {
    return this.#sender.delivery(hash, token, from, to);
  }

  grossForNet(token: TokenSymbol, net: bigint): Promise<bigint> {
    return this.#sender.grossForNet(token, net);
  }

  // Allowance charging (subscriptions).

  #token(symbol: TokenSymbol) {
    const t = this.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new Error(`${symbol} is not configured on ${this.network}`);
    return t;
  }

  async getAllowance(token: TokenSymbol, owner: string, spender: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const block = at === 'final' ? toHex((await this.getHead()).final) : 'latest';
    const raw = await this.rpc.call<string>('eth_call', [
      { to: this.#token(token).address, data: ERC20.encodeFunctionData('allowance', [owner, spender]) },
      block,
    ]);
    return BigInt(ERC20.decodeFunctionResult('allowance', raw)[0]);
  }

  #balanceRpcCalls = 0;

  get balanceRpcCalls(): number {
    return this.#balanceRpcCalls;
  }

  /** BalanceReader: balanceOf / eth_getBalance at `height`, in JSON-RPC batches of BALANCE_BATCH, a few in flight. */
  async balancesAt(height: bigint, items: readonly BalanceQuery[]): Promise<bigint[]> {
    const tag = toHex(height);
    const requests = items.map((q) =>
      q.asset === 'native'
        ? { method: 'eth_getBalance', params: [q.address, tag] }
        : {
            method: 'eth_call',
            params: [{ to: this.#token(q.asset).address, data: ERC20.encodeFunctionData('balanceOf', [q.address]) }, tag],
          },
    );
    const out: bigint[] = new Array(items.length);
    const chunks: number[] = [];
    for (let i = 0; i < requests.length; i += BALANCE_BATCH) chunks.push(i);
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const start = chunks[next++]!;
        this.#balanceRpcCalls++;
        const answers = await this.rpc.batch<string>(requests.slice(start, start + BALANCE_BATCH));
        answers.forEach((a, j) => {
          // A balance that cannot be read fails the whole reconcile run: never a guessed zero.
          if (!a.ok) throw a.error;
          out[start + j] = BigInt(a.result === '0x' ? 0 : a.result);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, chunks.length) }, worker));
    return out;
  }

  async getTokenBalance(token: TokenSymbol, owner: string): Promise<bigint> {
    const raw = await this.rpc.call<string>('eth_call', [
      { to: this.#token(token).address, data: ERC20.encodeFunctionData('balanceOf', [owner]) },
      'latest',
    ]);
    return BigInt(ERC20.decodeFunctionResult('balanceOf', raw)[0]);
  }

  async scanApprovals(fromHeight: bigint, toHeight: bigint, spenders: readonly string[]): Promise<ObservedApproval[]> {
    if (spenders.length === 0 || toHeight < fromHeight) return [];
    const bySymbol = new Map(this.tokens.map((t) => [t.address.toLowerCase(), t]));
    const logs = await this.rpc.call<RpcLog[]>('eth_getLogs', [
      {
        fromBlock: toHex(fromHeight),
        toBlock: toHex(toHeight),
        address: this.tokens.map((t) => t.address),
        topics: [APPROVAL_TOPIC, null, spenders.map(addressTopic)],
      },
    ]);
    const wanted = new Set(spenders.map((s) => s.toLowerCase()));
    const out: ObservedApproval[] = [];
    for (const log of logs) {
      const d = decodeApprovalLog(log);
      const token = d && bySymbol.get(d.token);
      if (!d || !token || !wanted.has(d.spender)) continue;
      out.push({
        txHash: d.txHash,
        logIndex: d.logIndex,
        blockHeight: d.blockNumber,
        token: token.symbol,
        tokenContract: token.address,
        owner: d.owner,
        spender: d.spender,
        value: d.value,
      });
    }
    return out.sort((a, b) => (a.blockHeight === b.blockHeight ? a.logIndex - b.logIndex : a.blockHeight < b.blockHeight ? -1 : 1));
  }

  buildTokenTransferFrom(request: TokenTransferRequest, owner: string): Promise<UnsignedTransfer<EvmTxBody>> {
    return this.#sender.buildTransferFrom(request, owner);
  }

  withNonce(unsigned: UnsignedTransfer<EvmTxBody>, nonce: bigint): UnsignedTransfer<EvmTxBody> {
    return this.#sender.withNonce(unsigned, nonce);
  }

  getTransferFromOutcome(hash: string, owner: string) {
    return this.#sender.outcome(hash, owner);
  }

  async findChargeTransfer(hash: string, owner: string, to: string): Promise<ChargeTransfer | null> {
    const receipt = await this.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (!receipt || BigInt(receipt.status) !== 1n) return null;
    const contracts = new Set(this.tokens.map((t) => t.address.toLowerCase()));
    // Every Transfer from the owner to the destination, summed: what the merchant received after any fee the token took.
    const moved = receipt.logs
      .map(decodeTransferLog)
      .filter(
        (d): d is NonNullable<typeof d> =>
          d !== null && contracts.has(d.token) && d.from === owner.toLowerCase() && d.to === to.toLowerCase(),
      );
    const t = moved[0];
    if (!t) return null;
    const amount = moved.reduce((sum, d) => sum + (d.token === t.token ? d.amount : 0n), 0n);
    const header = await fetchHeader(this.rpc, BigInt(receipt.blockNumber));
    return { logIndex: t.logIndex, amount, tokenContract: t.token, block: { height: header.height, hash: header.hash, time: header.time } };
  }

  // Sweeping (treasury): docs/treasury-evm.md.

  /** What the EVM sweep methods use of this adapter (chains/evm/sweep-context.ts). */
  sweepContext(): EvmSweepContext {
    const sender = this.#sender;
    return {
      network: this.network,
      rpc: this.rpc,
      tokens: this.tokens,
      chainId: () => sender.chainId(),
      feeQuote: (fresh) => sender.feeQuote(fresh),
      feeFields: (bump) => sender.feeFields(bump),
      fees: sender.fees,
      readDelivery: (hash, token, from, to) => sender.delivery(hash, token, from, to),
    };
  }

  /** Preferred (cheapest) first; the treasury uses the first whose `available()` answers ok. */
  sweepMethods(): ReadonlyArray<SweepMethodImpl<EvmTxBody>> {
    if (!this.#sweepMethods) {
      const ctx = this.sweepContext();
      this.#sweepMethods = [
        // First: the sponsored EIP-7702 batch (no gas on deposit addresses); its available() probes EIP-7702 and answers
        // not-ok on older chains.
        createEip7702Sweep(ctx),
        // The fallback, on every EVM chain: top up exactly the gas, transfer, reclaim what is left.
        createGasTopUpSweep(ctx),
      ];
    }
    return this.#sweepMethods;
  }

  /** balanceOf each address at the final height, in order: one JSON-RPC batch per BALANCE_BATCH_SIZE addresses. */
  async finalTokenBalances(token: TokenSymbol, addresses: readonly string[]): Promise<bigint[]> {
    if (addresses.length === 0) return [];
    const contract = this.#token(token).address;
    const block = toHex((await this.getHead()).final);
    const out: bigint[] = [];
    for (let i = 0; i < addresses.length; i += BALANCE_BATCH_SIZE) {
      const chunk = addresses.slice(i, i + BALANCE_BATCH_SIZE);
      const answers = await this.rpc.batch<string>(
        chunk.map((a) => ({ method: 'eth_call', params: [{ to: contract, data: ERC20.encodeFunctionData('balanceOf', [a]) }, block] })),
      );
      for (const a of answers) {
        if (!a.ok) throw a.error;
        out.push(BigInt(ERC20.decodeFunctionResult('balanceOf', a.result)[0]));
      }
    }
    return out;
  }

  /** OPERATOR_ACCOUNT's hot-wallet branch, as merchants' hot wallets: m/44'/60'/0'/1/<slot>. */
  deriveOperatorWallet(keys: KeyDeriver, slot: number): Promise<Wallet> {
    return this.deriveHotWallet(keys, OPERATOR_ACCOUNT, slot);
  }

  /** A retired gas station's native coin to the new one (chains/evm/native-drain.ts). */
  buildNativeDrain(from: Wallet, to: string, nonce: bigint | null, feeBumpPercent: number): Promise<UnsignedTransfer<EvmTxBody> | null> {
    return createEvmNativeDrain(this.sweepContext()).build(from, to, nonce, feeBumpPercent);
  }

  readNativeDrain(hash: string, to: string): Promise<bigint | null> {
    return createEvmNativeDrain(this.sweepContext()).read(hash, to);
  }
}
