import { getAssociatedTokenAddressSync, getMint, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { type Connection, PublicKey, type Finality } from '@solana/web3.js';
import {
  OPERATOR_ACCOUNT,
  TokenRegistryMismatchError,
  type AllowanceCharger,
  type ChainAdapter,
  type ChargeTransfer,
  type ChainFamily,
  type Delivery,
  type AddressBalances,
  type BalanceQuery,
  type BalanceReader,
  type FinalStateRead,
  type FinalStateReader,
  type ChainHead,
  type CursorState,
  type KeyDeriver,
  type OutgoingHistory,
  type KeyPath,
  type Mode,
  type NetworkId,
  type ObservedApproval,
  type PaymentLinkRequest,
  type SweepMethodImpl,
  type Sweeper,
  type PollResult,
  type SignedTransfer,
  type TokenContract,
  type TokenSymbol,
  type TokenTransferRequest,
  type TxOutcome,
  type TxSigner,
  type UnsignedTransfer,
  type WalletLink,
  type WalletTransaction,
  type Wallet,
  type WatchSet,
} from '../types.js';
import { soleNetworkOfFamily } from '../registry.js';
import { SolanaDelegation } from './delegation.js';
import { SolanaDepositScanner, accountKeysOf } from './deposit-scanner.js';
import { normalizeSolanaAddress, solanaAddressAt, solanaDepositKeyPath, solanaHotWalletKeyPath } from './keys.js';
import { paymentReference, solanaPayTransferUrl } from './solana-pay.js';
import { SolanaTokenSender, type SolanaUnsignedBody } from './token-sender.js';
import { SolanaFeePayerSweep } from './sweep.js';
import { createSolanaNativeDrain } from './native-drain.js';
import { rentLocked } from './rent.js';
import { loadSolanaExtraSettings, type SolanaExtraSettings } from './config.js';
import { solanaUnknownOutgoing } from './outgoing-history.js';
import { SolanaEndpoints, type PinnedSolana } from './failover-connection.js';
import type { RpcLogger, RpcObserver } from '../rpc/observer.js';

export interface SolanaAdapterOptions {
  /** The registry's network this adapter serves; default the Solana family's only network. */
  network?: NetworkId;
  mode: Mode;
  rpcUrl: string;
  /** Further endpoints (failover, chains/solana/failover-connection.ts). */
  rpcUrls?: readonly string[];
  /** Endpoints that must call a slot final before it is (default 1). */
  finalityQuorum?: number;
  /** Slots an endpoint may trail the best one before it leaves the rotation (default 150). */
  maxLagSlots?: bigint;
  rpcObserver?: RpcObserver;
  rpcLog?: RpcLogger;
  /** Per-request timeout of every RPC request (CHAIN_SOLANA_<MODE>_RPC_TIMEOUT_MS; default 30 s). */
  rpcTimeoutMs?: number;
  /** USDT / USDC mints (base58) with their decimals: the registry's, checked on chain by verifyTokens. */
  tokens: readonly TokenContract[];
  /** Commitment at which credits become final (default `finalized`; `confirmed` trades safety for ~12 s). */
  finality?: Finality;
  rescanSlots?: number;
  referenceScanEveryPolls?: number;
  rpcConcurrency?: number;
  computeUnitLimit?: number;
  minComputeUnitPrice?: bigint;
  maxComputeUnitPrice?: bigint;
}

/** Solana (mainnet-beta, devnet, or the local LiteSVM endpoint): SPL Token USDT and USDC; subscriptions by SPL Token
 * delegation (see "Allowance charging" below and docs/solana.md). */
export class SolanaChainAdapter
  implements
    ChainAdapter<SolanaUnsignedBody>,
    AllowanceCharger<SolanaUnsignedBody>,
    Sweeper<SolanaUnsignedBody>,
    BalanceReader,
    FinalStateReader,
    OutgoingHistory
{
  readonly family: ChainFamily = 'solana';
  readonly network: NetworkId;
  readonly mode: Mode;
  readonly tokens: readonly TokenContract[];
  readonly connection: Connection;
  /** The RPC endpoints (one or more) behind `connection`. */
  readonly endpoints: SolanaEndpoints;
  readonly scanner: SolanaDepositScanner;
  readonly sender: SolanaTokenSender;
  readonly delegation: SolanaDelegation;
  /** Sweep method 'solana-fee-payer' (chains/solana/sweep.ts, docs/treasury-solana.md). */
  readonly sweep: SolanaFeePayerSweep;
  readonly finality: Finality;
  readonly #tokenProgramId = TOKEN_PROGRAM_ID;

  constructor(o: SolanaAdapterOptions) {
    this.network = o.network ?? soleNetworkOfFamily('solana');
    this.mode = o.mode;
    this.finality = o.finality ?? 'finalized';
    this.tokens = o.tokens.map((t) => {
      const address = normalizeSolanaAddress(t.address);
      if (!address) throw new Error(`solana: bad ${t.symbol} mint address ${t.address}`);
      return { ...t, address };
    });
    const urls = [o.rpcUrl, ...(o.rpcUrls ?? []).filter((u) => u !== o.rpcUrl)];
    if ((o.finalityQuorum ?? 1) > urls.length)
      throw new Error(`solana: a finality quorum of ${o.finalityQuorum} needs as many RPC endpoints`);
    const endpoints = new SolanaEndpoints({
      network: this.network,
      mode: o.mode,
      urls,
      maxLagSlots: o.maxLagSlots ?? 150n,
      commitment: 'confirmed',
      timeoutMs: o.rpcTimeoutMs,
      observer: o.rpcObserver,
      log: o.rpcLog,
    });
    this.endpoints = endpoints;
    this.connection = endpoints.connection;
    this.scanner = new SolanaDepositScanner({
      connection: this.connection,
      // One endpoint needs no pinning (and no extra slot probe per poll).
      ...(urls.length > 1 ? { pin: () => endpoints.pin() } : {}),
      ...((o.finalityQuorum ?? 1) > 1
        ? {
            agreeFinal: (p: { connection: Connection }, slot: number) =>
              endpoints.agreedSlot(p as PinnedSolana, slot, o.finalityQuorum!, this.finality),
          }
        : {}),
      tokens: this.tokens,
      finality: this.finality,
      tokenProgramId: this.#tokenProgramId,
      rescanSlots: o.rescanSlots ?? 150,
      referenceScanEveryPolls: o.referenceScanEveryPolls ?? 150,
      concurrency: o.rpcConcurrency ?? 8,
    });
    this.sender = new SolanaTokenSender({
      network: this.network,
      connection: this.connection,
      rpcUrl: o.rpcUrl,
      rpcFetch: endpoints.fetch,
      tokens: this.tokens,
      tokenProgramId: this.#tokenProgramId,
      finality: this.finality,
      computeUnitLimit: o.computeUnitLimit ?? 80_000,
      minComputeUnitPrice: o.minComputeUnitPrice ?? 0n,
      maxComputeUnitPrice: o.maxComputeUnitPrice ?? 2_000_000n,
    });
    this.delegation = new SolanaDelegation({
      connection: this.connection,
      tokens: this.tokens,
      tokenProgramId: this.#tokenProgramId,
      finality: this.finality === 'finalized' ? 'finalized' : 'confirmed',
    });
    this.sweep = new SolanaFeePayerSweep({
      network: this.network,
      connection: this.connection,
      tokens: this.tokens,
      tokenProgramId: this.#tokenProgramId,
      computeUnitPrice: (writable, bump) => this.sender.computeUnitPrice(writable, bump),
    });
  }

  normalizeAddress(text: string): string | null {
    return normalizeSolanaAddress(text);
  }

  displayAddress(canonical: string): string {
    return canonical;
  }

  /** The deposit OWNER (a wallet address): payers send to it, their wallets credit its ATA. */
  async deriveDepositAddress(keys: KeyDeriver, account: number, index: bigint): Promise<string> {
    return solanaAddressAt(keys, solanaDepositKeyPath(account, index));
  }

  async deriveHotWallet(keys: KeyDeriver, account: number, slot: number): Promise<{ key: KeyPath; address: string }> {
    const key = solanaHotWalletKeyPath(account, slot);
    return { key, address: await solanaAddressAt(keys, key) };
  }

  /** Solana has no account nonces: a transaction is bound to a recent blockhash instead. */
  async getAccountNonce(): Promise<null> {
    return null;
  }

  /** Balances of a wallet: lamports, and the raw amount in its associated token account of each mint (0 when none). */
  async getBalances(address: string): Promise<AddressBalances> {
    const owner = new PublicKey(address);
    const atas = this.tokens.map((t) => getAssociatedTokenAddressSync(new PublicKey(t.address), owner, true, this.#tokenProgramId));
    const [native, infos] = await Promise.all([
      this.connection.getBalance(owner, 'confirmed'),
      this.connection.getMultipleAccountsInfo(atas, 'confirmed'),
    ]);
    const tokens: AddressBalances['tokens'] = {};
    this.tokens.forEach((t, i) => {
      const data = infos[i]?.data;
      // SPL token account layout: the u64 amount sits at byte offset 64, little-endian.
      tokens[t.symbol] = data && data.length >= 72 ? data.readBigUInt64LE(64) : 0n;
    });
    return { native: BigInt(native), tokens };
  }

  #balanceRpcCalls = 0;

  get balanceRpcCalls(): number {
    return this.#balanceRpcCalls;
  }

  /** BalanceReader: the state the node has finalized now, no older than `height` (see finalStateBalances). */
  async balancesAt(height: bigint, items: readonly BalanceQuery[]): Promise<bigint[]> {
    return (await this.finalStateBalances(height, items)).balances;
  }

  /**
   * FinalStateReader: lamports of the address (`native`) or the amount in its associated token account of the mint, read
   * with getMultipleAccounts (100 accounts a request, four in flight) at the adapter's finality with `minContextSlot` =
   * `minHeight`. Each answer's `context.slot` is the slot whose state it is: the height of its balances. A node whose
   * finalized slot is still below `minHeight` answers -32016 (minimum context slot not reached): the read fails.
   */
  async finalStateBalances(minHeight: bigint, items: readonly BalanceQuery[]): Promise<FinalStateRead> {
    const keys = items.map((q) => {
      const owner = new PublicKey(q.address);
      if (q.asset === 'native') return owner;
      const token = this.tokens.find((t) => t.symbol === q.asset);
      if (!token) throw new Error(`solana: no ${q.asset} in the token registry`);
      return getAssociatedTokenAddressSync(new PublicKey(token.address), owner, true, this.#tokenProgramId);
    });
    const balances: bigint[] = new Array(items.length);
    const heights: bigint[] = new Array(items.length);
    const starts: number[] = [];
    for (let i = 0; i < keys.length; i += 100) starts.push(i);
    let next = 0;
    const worker = async () => {
      while (next < starts.length) {
        const start = starts[next++]!;
        this.#balanceRpcCalls++;
        const { context, value } = await this.connection.getMultipleAccountsInfoAndContext(keys.slice(start, start + 100), {
          commitment: this.finality,
          minContextSlot: Number(minHeight),
        });
        value.forEach((acc, j) => {
          const q = items[start + j]!;
          // SPL token account layout: the u64 amount sits at byte offset 64, little-endian.
          balances[start + j] =
            q.asset === 'native' ? BigInt(acc?.lamports ?? 0) : acc && acc.data.length >= 72 ? acc.data.readBigUInt64LE(64) : 0n;
          heights[start + j] = BigInt(context.slot);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, starts.length) }, worker));
    return { balances, heights, retries: 0 };
  }

  getHead(): Promise<ChainHead> {
    return this.scanner.head();
  }

  initialCursor(startHeight?: bigint): Promise<CursorState> {
    return this.scanner.initialCursor(startHeight);
  }

  pollTransfers(cursor: CursorState, watch: WatchSet): Promise<PollResult> {
    return this.scanner.poll(cursor, watch);
  }

  /** getMint for every registry token: must exist, belong to the SPL Token program and have the registry's decimals. */
  async verifyTokens(): Promise<void> {
    for (const t of this.tokens) {
      let decimals: number;
      try {
        decimals = (await getMint(this.connection, new PublicKey(t.address), 'confirmed', this.#tokenProgramId)).decimals;
      } catch (e) {
        throw new TokenRegistryMismatchError(`solana ${t.symbol}: no SPL Token mint at ${t.address} (${(e as Error).name})`);
      }
      if (decimals !== t.decimals) {
        throw new TokenRegistryMismatchError(`solana ${t.symbol} at ${t.address}: mint decimals ${decimals}, registry says ${t.decimals}`);
      }
    }
  }

  buildTokenTransfer(request: TokenTransferRequest): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    return this.sender.build(request);
  }

  signTransfer(unsigned: UnsignedTransfer<SolanaUnsignedBody>, signer: TxSigner): Promise<SignedTransfer> {
    return this.sender.sign(unsigned, signer);
  }

  broadcast(signed: SignedTransfer) {
    return this.sender.broadcast(signed);
  }

  getTransactionOutcome(hash: string) {
    return this.sender.outcome(hash);
  }

  /**
   * From the transaction's token balances (no logs on Solana): what token accounts of `to` (owned by it, or `to` itself
   * when it is a token account) gained of the mint, and what `from`'s accounts lost beyond that.
   */
  async readDelivery(hash: string, token: TokenSymbol, from: string, to: string): Promise<Delivery | null> {
    const mint = this.tokens.find((t) => t.symbol === token)?.address;
    const tx = await this.connection.getTransaction(hash, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    if (!mint || !tx?.meta || tx.meta.err !== null) return null;
    const keys = accountKeysOf(tx);
    const change = (match: (owner: string | undefined, account: string | undefined) => boolean): bigint => {
      let sum = 0n;
      for (const post of tx.meta!.postTokenBalances ?? []) {
        if (post.mint !== mint || !match(post.owner, keys[post.accountIndex])) continue;
        const pre = (tx.meta!.preTokenBalances ?? []).find((b) => b.accountIndex === post.accountIndex && b.mint === mint);
        sum += BigInt(post.uiTokenAmount.amount) - BigInt(pre?.uiTokenAmount.amount ?? '0');
      }
      return sum;
    };
    const gained = change((owner, account) => owner === to || account === to);
    const delivered = gained > 0n ? gained : 0n;
    const lost = -change((owner) => owner === from);
    return { delivered, elsewhere: lost > delivered ? lost - delivered : 0n, rentPaid: rentLocked(tx) };
  }

  /** The wallet's recent outgoing transactions the ledger does not know (chains/solana/outgoing-history.ts). */
  unknownOutgoing(address: string, sinceMs: number, known: (hashes: string[]) => Promise<Set<string>>) {
    return solanaUnknownOutgoing(this.connection, address, sinceMs, known);
  }

  /** Lamports the transaction put into accounts it created (pre-balance zero): rent, paid by the fee payer. */
  async readRentPaid(hash: string): Promise<bigint | null> {
    const tx = await this.connection.getTransaction(hash, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    if (!tx?.meta) return null;
    return tx.meta.err === null ? rentLocked(tx) : 0n;
  }

  /** No account nonces here: a transfer is bound to a recent block instead. */
  withNonce(unsigned: UnsignedTransfer<SolanaUnsignedBody>): UnsignedTransfer<SolanaUnsignedBody> {
    return unsigned;
  }

  /** Solana-specific: true once `signed` can never land (see SolanaTokenSender.isExpired). */
  isExpired(signed: SignedTransfer): Promise<boolean> {
    return this.sender.isExpired(signed);
  }

  /** The session's deposit ATA for the chosen mint, created idempotently and paid (rent included) by `feePayer`. */
  buildDepositSetup(
    feePayer: { key: KeyPath; address: string },
    depositOwner: string,
    token: TokenContract['symbol'],
  ): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    return this.sender.buildDepositAccountSetup(feePayer, depositOwner, token);
  }

  /** False once the deposit owner's ATA for the mint exists (created by an earlier setup or by the payer's wallet). */
  async depositSetupNeeded(depositOwner: string, token: TokenContract['symbol']): Promise<boolean> {
    const mint = this.tokens.find((t) => t.symbol === token)?.address;
    if (!mint) return false;
    const ata = getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(depositOwner), true, this.#tokenProgramId);
    return (await this.connection.getAccountInfo(ata, 'confirmed')) === null;
  }

  /** Solana-specific: the service creates a session's deposit ATA (paying its rent) when the payer picks Solana. */
  buildDepositAccountSetup(feePayer: { key: KeyPath; address: string }, depositOwner: string, token: TokenContract['symbol']) {
    return this.sender.buildDepositAccountSetup(feePayer, depositOwner, token);
  }

  /** Solana Pay deep link for a session: recipient = deposit owner, reference derived from it. */
  transferRequestUrl(input: {
    depositOwner: string;
    token: TokenContract['symbol'];
    amount: bigint;
    label?: string;
    message?: string;
  }): string {
    const t = this.tokens.find((x) => x.symbol === input.token);
    if (!t) throw new Error(`solana: no ${input.token} mint configured`);
    return solanaPayTransferUrl({
      recipient: input.depositOwner,
      amount: input.amount,
      decimals: t.decimals,
      splToken: t.address,
      references: [paymentReference(input.depositOwner)],
      label: input.label,
      message: input.message,
    });
  }

  /** A Solana Pay transfer request to the deposit owner, in token units, with the owner's reference. */
  async paymentLink(request: PaymentLinkRequest): Promise<WalletLink> {
    const deposit = this.displayAddress(request.depositAddress);
    const href = solanaPayTransferUrl({
      recipient: deposit,
      amount: request.amountBase,
      decimals: request.token.decimals,
      splToken: this.displayAddress(request.token.address),
      references: [paymentReference(deposit)],
      label: request.label,
    });
    return { href, qr: href };
  }

  // Allowance charging (subscriptions) by SPL Token delegation: the customer's ATA names the charger as its delegate
  // (ApproveChecked); a charge is a TransferChecked signed by the charger as that delegate. No account nonces.

  /** The charger's delegated amount on the owner's ATA while it is the delegate; 0 otherwise or without an ATA. */
  getAllowance(token: TokenSymbol, owner: string, spender: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    return this.delegation.allowance(token, owner, spender, at);
  }

  /** The owner's ATA balance (0 without an ATA). */
  getTokenBalance(token: TokenSymbol, owner: string): Promise<bigint> {
    return this.delegation.balance(token, owner);
  }

  /** A state read at the final commitment: SPL `Approve` leaves no log to scan by delegate. */
  readAuthorizations(items: ReadonlyArray<{ token: TokenSymbol; owner: string }>) {
    return this.delegation.readAuthorizations(items);
  }

  readApproval(token: TokenSymbol, owner: string, spender: string): Promise<ObservedApproval | null> {
    return this.delegation.readApproval(token, owner, spender);
  }

  /** Unsigned legacy `ApproveChecked` for the customer's wallet (Wallet Standard `solana:signAndSendTransaction`). */
  buildApprovalForWallet(token: TokenSymbol, owner: string, spender: string, amount: bigint): Promise<WalletTransaction> {
    return this.delegation.buildApprovalForWallet(token, owner, spender, amount);
  }

  /** `request.from` (the charger, the delegate) moves `request.amount` from `owner`'s ATA to `request.to`'s ATA,
   * creating it idempotently; the charger pays the fee and that ATA's rent. */
  buildTokenTransferFrom(request: TokenTransferRequest, owner: string): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    return this.sender.buildTransferFrom(request, owner);
  }

  /** As getTransactionOutcome, and a success must have lowered the owner's token balance. */
  getTransferFromOutcome(hash: string, owner: string): Promise<TxOutcome> {
    return this.sender.outcome(hash, this.delegation.debitCheck(owner));
  }

  /** logIndex: the credited token account's index in the transaction's account keys, as every Solana transfer is named. */
  findChargeTransfer(hash: string, owner: string, to: string): Promise<ChargeTransfer | null> {
    return this.delegation.findChargeTransfer(hash, owner, to);
  }

  // Sweeping (treasury): the gas station pays the fee, each deposit owner signs its transfer and the close of its
  // emptied account (rent back to the gas station); signTransfer signs with every signer the body lists.

  sweepMethods(): ReadonlyArray<SweepMethodImpl<SolanaUnsignedBody>> {
    return [this.sweep];
  }

  /** Each owner's ATA balance of `token` at `finalized`, 100 accounts per getMultipleAccounts (0 without an ATA). */
  finalTokenBalances(token: TokenSymbol, addresses: readonly string[]): Promise<bigint[]> {
    return this.sweep.balances(token, addresses, 'finalized');
  }

  /** The operator's wallet at `slot` (OPERATOR_SLOT): m/44'/501'/0'/1'/<slot>', a path no merchant account reaches. */
  deriveOperatorWallet(keys: KeyDeriver, slot: number): Promise<Wallet> {
    return this.deriveHotWallet(keys, OPERATOR_ACCOUNT, slot);
  }

  /** A retired gas station's lamports to the current one, the account left empty (chains/solana/native-drain.ts). */
  buildNativeDrain(
    from: Wallet,
    to: string,
    nonce: bigint | null,
    feeBumpPercent: number,
  ): Promise<UnsignedTransfer<SolanaUnsignedBody> | null> {
    return this.#drain().build(from, to, nonce, feeBumpPercent);
  }

  readNativeDrain(hash: string, to: string): Promise<bigint | null> {
    return this.#drain().read(hash, to);
  }

  #drain() {
    return createSolanaNativeDrain({
      network: this.network,
      connection: this.connection,
      computeUnitPrice: (writable, bump) => this.sender.computeUnitPrice(writable, bump),
    });
  }
}

/**
 * A Solana adapter from the chain settings (src/watcher/adapter-factory.ts builds it through createSolanaAdapterFactory).
 * Solana has commitment levels, not depths: `finalized`, or a depth of 32 or more, means `finalized`; any smaller
 * depth means `confirmed` (supermajority-voted, not yet rooted).
 */
export function createSolanaAdapter(
  s: {
    network?: NetworkId;
    mode: Mode;
    rpcUrl: string;
    rpcUrls?: readonly string[];
    rpcQuorum?: number;
    rpcMaxLagBlocks?: bigint;
    rpcObserver?: RpcObserver;
    rpcLog?: RpcLogger;
    rpcTimeoutMs?: number;
    tokens: readonly TokenContract[];
    confirmation: { kind: 'finalized' | 'safe'; minDepth?: number } | { kind: 'depth'; confirmations: number };
  },
  extra: SolanaExtraSettings = {},
): SolanaChainAdapter {
  const finality: Finality = s.confirmation.kind !== 'depth' || s.confirmation.confirmations >= 32 ? 'finalized' : 'confirmed';
  return new SolanaChainAdapter({
    ...(s.network ? { network: s.network } : {}),
    mode: s.mode,
    rpcUrl: s.rpcUrl,
    rpcUrls: s.rpcUrls,
    maxLagSlots: s.rpcMaxLagBlocks,
    finalityQuorum: s.rpcQuorum,
    rpcObserver: s.rpcObserver,
    rpcLog: s.rpcLog,
    rpcTimeoutMs: s.rpcTimeoutMs,
    tokens: s.tokens,
    finality,
    ...extra,
  });
}

/** The adapter factory with the CHAIN_<NETWORK>_<MODE>_* scanning and fee settings of `env` (chains/solana/config.ts). */
export function createSolanaAdapterFactory(env: Record<string, string | undefined>) {
  return (s: Parameters<typeof createSolanaAdapter>[0]): SolanaChainAdapter =>
    createSolanaAdapter(s, loadSolanaExtraSettings(env, s.mode, s.network));
}
