// FAKE of a Solana validator's ledger, for tests and the local devnet: the real SVM (LiteSVM, with the SPL Token,
// Token-2022 and Associated Token Account programs) executes every transaction, and this class adds what LiteSVM
// lacks and an RPC node has: slots and block heights, a blockhash per slot that stays valid for
// `blockhashValidity` block heights, a history of every landed transaction (signature, slot, block time, account
// keys, pre/post lamport and token balances, err), and commitment levels simulated by slot distance
// (processed = the newest slot, confirmed = `confirmedDepth` slots behind, finalized = `finalizedDepth` behind).
//
// Invariants:
// - a transaction lands at most once (by its first signature) and only while its blockhash is valid, i.e. while
//   the block height of the slot it would land in is <= the blockhash's lastValidBlockHeight;
// - slots and block heights only grow, one block per slot (this fake never skips a slot); height = slot - heightLag;
// - account state read at `processed` or `confirmed` is the newest state (LiteSVM keeps one state); at `finalized` it
//   is the state as of the finalized slot, replayed from the post-states of landed transactions (each writable
//   account's state is recorded before its first landed write and after every one). Test-control writes
//   (setAccount, setTokenAccount, createMint, airdrop) act at every commitment. History is per commitment.
// - a transaction that fails while executing its instructions lands as a validator lands it: in its slot, with its
//   `err`, having paid its fee (LiteSVM debits the fee payer and rolls back everything else), which `meta.fee` and
//   the pre/post balances report, and which finalized reads of the fee payer see once its slot is finalized.
// Known gaps: no forks (nothing that reached `processed` is ever rolled back), airdrops have a status but no
// `getTransaction` body.
import { randomBytes } from 'node:crypto';
import { Clock, LiteSVM, type FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import { AddressLookupTableAccount, ComputeBudgetProgram, PublicKey, VersionedTransaction, type MessageAccountKeys } from '@solana/web3.js';
import bs58 from './base58.js';
import { getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { decodeMint, decodeTokenAccount, encodeMint, encodeTokenAccount, uiTokenAmount } from './token-layouts.js';
import { describeTransactionError, landsOnChain, transactionErrorJson, type TransactionErrorJson } from './svm-errors.js';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface FakeValidatorOptions {
  /** Slots between the newest slot and the confirmed one (default 1). */
  confirmedDepth?: number;
  /** Slots between the newest slot and the finalized one (default 32). */
  finalizedDepth?: number;
  /** Block heights a blockhash stays valid for (validators: 150). */
  blockhashValidity?: number;
  /** When set, a new slot every this many ms and transactions share slots; otherwise each landed transaction opens
   * a new slot (deterministic, the default for tests). */
  slotIntervalMs?: number;
  /** First slot (default 1000); block height lags the slot by `heightLag` (default 100) so that a client that
   * compares a slot with a lastValidBlockHeight is caught. */
  startSlot?: number;
  heightLag?: number;
  /** Lamports per signature (validators: 5000). */
  lamportsPerSignature?: number;
}

export interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: ReturnType<typeof uiTokenAmount>;
}

export interface CompiledInstructionJson {
  programIdIndex: number;
  accounts: number[];
  data: string;
  stackHeight: number | null;
}

export interface LandedTransaction {
  signature: string;
  slot: number;
  blockTime: number;
  /** Order of landing across the whole ledger; newest-first listings sort on it. */
  seq: number;
  wire: Uint8Array;
  tx: VersionedTransaction;
  /** Static keys, then writable and readonly keys loaded from address lookup tables (the RPC's index space). */
  accountKeys: string[];
  loadedAddresses: { writable: string[]; readonly: string[] };
  err: TransactionErrorJson | null;
  fee: number;
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalanceJson[];
  postTokenBalances: TokenBalanceJson[];
  logMessages: string[];
  computeUnitsConsumed: number;
  innerInstructions: { index: number; instructions: CompiledInstructionJson[] }[];
  computeUnitPrice: bigint;
}

interface AirdropRecord {
  signature: string;
  slot: number;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface AccountState {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable: boolean;
}

interface SlotInfo {
  blockhash: string;
  blockHeight: number;
  blockTime: number;
}

export type LandingMode = 'land' | 'drop' | 'hold';

export class FakeSolanaValidator {
  readonly svm: LiteSVM;
  readonly confirmedDepth: number;
  readonly finalizedDepth: number;
  readonly blockhashValidity: number;
  readonly lamportsPerSignature: number;
  readonly genesisHash = bs58.encode(randomBytes(32));
  private readonly heightLag: number;
  private readonly perTransactionSlots: boolean;
  private slotNow: number;
  private readonly slots = new Map<number, SlotInfo>();
  /** Blockhash and time of the newest `blockHistory` slots, for getBlock (the `slots` window is much shorter). */
  private readonly blocks = new Map<number, SlotInfo>();
  private readonly blockHistory = 100_000;
  /** address -> its states written by landed transactions, oldest first (slot -1: before the first landed write);
   * pruned to the newest entry at or below the finalized slot. Absent: no landed write since the last test write. */
  private readonly accountVersions = new Map<string, { slot: number; state: AccountState | null }[]>();
  /** blockhash -> last valid block height; pruned once expired. */
  private readonly blockhashes = new Map<string, number>();
  private readonly bySignature = new Map<string, LandedTransaction>();
  private readonly airdrops = new Map<string, AirdropRecord>();
  /** address -> landed transactions touching it, in landing order (oldest first). */
  private readonly byAddress = new Map<string, LandedTransaction[]>();
  private seq = 0;
  private timeOffsetSec = 0;
  private landing: LandingMode = 'land';
  private readonly held: Uint8Array[] = [];
  /** Transactions still to lose, whatever the landing mode (`dropNext`: the simulator's dropped-transaction fault). */
  private dropCount = 0;
  private priorityFeeFloor = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: FakeValidatorOptions = {}) {
    this.confirmedDepth = options.confirmedDepth ?? 1;
    this.finalizedDepth = options.finalizedDepth ?? 32;
    this.blockhashValidity = options.blockhashValidity ?? 150;
    this.lamportsPerSignature = options.lamportsPerSignature ?? 5000;
    this.heightLag = options.heightLag ?? 100;
    this.perTransactionSlots = options.slotIntervalMs === undefined;
    // Blockhash ages are enforced here (per block height), so LiteSVM's single-blockhash check is off.
    this.svm = new LiteSVM().withBlockhashCheck(false);
    this.slotNow = (options.startSlot ?? 1000) - 1;
    this.advanceSlots(1);
    if (options.slotIntervalMs !== undefined) {
      this.timer = setInterval(() => this.advanceSlots(1), options.slotIntervalMs);
      this.timer.unref();
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  // ---- slots, heights, commitment -------------------------------------------------------------------------------

  slot(commitment: Commitment = 'finalized'): number {
    const depth = commitment === 'processed' ? 0 : commitment === 'confirmed' ? this.confirmedDepth : this.finalizedDepth;
    return Math.max(this.firstSlot(), this.slotNow - depth);
  }

  blockHeight(commitment: Commitment = 'finalized'): number {
    return this.slot(commitment) - this.heightLag;
  }

  private firstSlot(): number {
    return this.slots.keys().next().value ?? this.slotNow;
  }

  commitmentOf(slot: number): Commitment {
    if (slot <= this.slot('finalized')) return 'finalized';
    if (slot <= this.slot('confirmed')) return 'confirmed';
    return 'processed';
  }

  isVisible(slot: number, commitment: Commitment): boolean {
    return slot <= this.slot(commitment);
  }

  blockTime(slot: number): number | null {
    return this.slots.get(slot)?.blockTime ?? null;
  }

  /** A produced block (one per slot here) visible at `commitment`, as getBlock describes it; null when unknown. */
  block(
    slot: number,
    commitment: Commitment,
  ): {
    blockhash: string;
    previousBlockhash: string;
    parentSlot: number;
    blockHeight: number;
    blockTime: number;
    signatures: string[];
  } | null {
    const info = this.blocks.get(slot);
    if (!info || !this.isVisible(slot, commitment)) return null;
    const parent = this.blocks.get(slot - 1);
    const signatures = [...this.bySignature.values()]
      .filter((r) => r.slot === slot)
      .sort((a, b) => a.seq - b.seq)
      .map((r) => r.signature);
    return {
      blockhash: info.blockhash,
      // The parent fell out of the kept history (or is before the first slot): the default hash, as for genesis.
      previousBlockhash: parent?.blockhash ?? '11111111111111111111111111111111',
      parentSlot: slot - 1,
      blockHeight: info.blockHeight,
      blockTime: info.blockTime,
      signatures,
    };
  }

  advanceSlots(n = 1): number {
    for (let i = 0; i < n; i++) this.openSlot();
    return this.slotNow;
  }

  warpToSlot(slot: number): number {
    if (slot > this.slotNow) this.advanceSlots(slot - this.slotNow);
    return this.slotNow;
  }

  /** Ages every blockhash handed out so far past its lastValidBlockHeight, at every commitment level (advances
   * the block height by the validity window plus the finalized depth). */
  expireBlockhashes(): number {
    return this.advanceSlots(this.blockhashValidity + this.finalizedDepth + 1);
  }

  advanceTime(seconds: number): void {
    this.timeOffsetSec += seconds;
  }

  now(): number {
    return Math.floor(Date.now() / 1000) + this.timeOffsetSec;
  }

  private openSlot(): void {
    this.slotNow += 1;
    const blockHeight = this.slotNow - this.heightLag;
    const info: SlotInfo = { blockhash: bs58.encode(randomBytes(32)), blockHeight, blockTime: this.now() };
    this.slots.set(this.slotNow, info);
    this.blocks.set(this.slotNow, info);
    this.blocks.delete(this.slotNow - this.blockHistory);
    this.blockhashes.set(info.blockhash, blockHeight + this.blockhashValidity);
    const keep = this.blockhashValidity + this.finalizedDepth + 2;
    const old = this.slotNow - keep;
    const oldInfo = this.slots.get(old);
    if (oldInfo) this.slots.delete(old);
    for (const [hash, lastValid] of this.blockhashes) {
      if (lastValid >= blockHeight) break; // insertion order is slot order, so the rest are younger
      this.blockhashes.delete(hash);
    }
    const epochSlots = 432_000n;
    const s = BigInt(this.slotNow);
    this.svm.setClock(new Clock(s, BigInt(info.blockTime), s / epochSlots, s / epochSlots + 1n, BigInt(info.blockTime)));
  }

  latestBlockhash(commitment: Commitment = 'finalized'): { blockhash: string; lastValidBlockHeight: number } {
    const slot = this.slot(commitment);
    const info = this.slots.get(slot) ?? this.slots.get(this.slotNow)!;
    return { blockhash: info.blockhash, lastValidBlockHeight: info.blockHeight + this.blockhashValidity };
  }

  isBlockhashValid(blockhash: string): boolean {
    const lastValid = this.blockhashes.get(blockhash);
    return lastValid !== undefined && lastValid >= this.blockHeight('processed');
  }

  // ---- landing transactions -------------------------------------------------------------------------------------

  /** Test control: 'drop' loses every transaction sent from now on (as a congested leader would), 'hold' keeps
   * them until `resumeLanding()`, which lands the held ones whose blockhash is still valid. */
  pauseLanding(mode: Exclude<LandingMode, 'land'> = 'hold'): void {
    this.landing = mode;
  }

  /** Test control: loses the next `n` transactions sent (accepted, signature returned, never landed), as a leader
   * that forwards them nowhere; later ones land as the landing mode says. Returns how many are still to lose. */
  dropNext(n: number): number {
    if (!Number.isInteger(n) || n < 0) throw new RangeError('dropNext: n must be a non-negative integer');
    this.dropCount += n;
    return this.dropCount;
  }

  resumeLanding(): string[] {
    this.landing = 'land';
    const landed: string[] = [];
    for (const wire of this.held.splice(0)) {
      const rec = this.land(wire);
      if (rec) landed.push(rec.signature);
    }
    return landed;
  }

  /** Test control: lands `wire` now, ahead of the held transactions (a leader that orders another transaction before
   * ours), whatever the landing mode. Answers its signature (it may land with an error, as any transaction). */
  landAhead(wire: Uint8Array): string {
    const tx = deserialize(wire);
    this.land(wire);
    return bs58.encode(tx.signatures[0]!);
  }

  setPriorityFeeFloor(microLamportsPerCu: number): void {
    this.priorityFeeFloor = microLamportsPerCu;
  }

  /** sendTransaction: preflight (unless skipped) then land. Returns the signature even when the transaction is
   * dropped, as an RPC node does. */
  submit(wire: Uint8Array, opts: { skipPreflight?: boolean } = {}): string {
    const tx = deserialize(wire);
    const signature = bs58.encode(tx.signatures[0]!);
    const known = this.bySignature.has(signature);
    if (!opts.skipPreflight) {
      if (known) throw preflightError('AlreadyProcessed', []);
      if (!this.isBlockhashValid(tx.message.recentBlockhash)) throw preflightError('BlockhashNotFound', []);
      const sim = this.simulate(wire, { sigVerify: true });
      if (sim.err !== null) throw preflightError(sim.err, sim.logs, sim.unitsConsumed);
    }
    if (known) return signature;
    if (this.dropCount > 0) {
      this.dropCount--;
      return signature;
    }
    if (this.landing === 'drop') return signature;
    if (this.landing === 'hold') {
      this.held.push(wire);
      return signature;
    }
    this.land(wire);
    return signature;
  }

  simulate(
    wire: Uint8Array,
    opts: { sigVerify?: boolean; replaceRecentBlockhash?: boolean } = {},
  ): { err: TransactionErrorJson | null; logs: string[]; unitsConsumed: number } {
    const tx = deserialize(wire);
    if (!opts.replaceRecentBlockhash && !this.isBlockhashValid(tx.message.recentBlockhash)) {
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0 };
    }
    const sigVerify = opts.sigVerify ?? false;
    this.svm.withSigverify(sigVerify);
    try {
      const res = this.svm.simulateTransaction(toKitTransaction(tx, sigVerify));
      if (isFailed(res)) {
        const meta = res.meta();
        return { err: transactionErrorJson(res.err()), logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()) };
      }
      const meta = res.meta();
      return { err: null, logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()) };
    } finally {
      this.svm.withSigverify(true);
    }
  }

  private land(wire: Uint8Array): LandedTransaction | null {
    const tx = deserialize(wire);
    const signature = bs58.encode(tx.signatures[0]!);
    if (this.bySignature.has(signature)) return null;
    if (this.perTransactionSlots) this.advanceSlots(1);
    if (!this.isBlockhashValid(tx.message.recentBlockhash)) return null;
    let keys: MessageAccountKeys;
    try {
      keys = tx.message.getAccountKeys({ addressLookupTableAccounts: this.lookupTables(tx) });
    } catch {
      return null;
    }
    const accountKeys = [
      ...keys.staticAccountKeys,
      ...(keys.accountKeysFromLookups?.writable ?? []),
      ...(keys.accountKeysFromLookups?.readonly ?? []),
    ].map((k) => k.toBase58());
    const preBalances = accountKeys.map((k) => Number(this.svm.getBalance(k as never) ?? 0n));
    const preTokenBalances = this.tokenBalances(accountKeys);
    const writable = [...new Set(accountKeys.filter((_k, i) => tx.message.isAccountWritable(i)))];
    for (const k of writable) if (!this.accountVersions.has(k)) this.accountVersions.set(k, [{ slot: -1, state: this.account(k) }]);
    const res = this.svm.sendTransaction(toKitTransaction(tx, true));
    let err: TransactionErrorJson | null = null;
    let meta: TransactionMetadata;
    if (isFailed(res)) {
      err = transactionErrorJson(res.err());
      if (!landsOnChain(err)) return null;
      meta = res.meta();
    } else {
      meta = res;
    }
    const slot = this.slotNow;
    const computeUnitPrice = readComputeUnitPrice(tx, keys);
    const fee = this.feeOf(tx, keys, computeUnitPrice);
    const rec: LandedTransaction = {
      signature,
      slot,
      blockTime: this.slots.get(slot)!.blockTime,
      seq: ++this.seq,
      wire,
      tx,
      accountKeys,
      loadedAddresses: {
        writable: (keys.accountKeysFromLookups?.writable ?? []).map((k) => k.toBase58()),
        readonly: (keys.accountKeysFromLookups?.readonly ?? []).map((k) => k.toBase58()),
      },
      err,
      fee,
      preBalances,
      postBalances: accountKeys.map((k) => Number(this.svm.getBalance(k as never) ?? 0n)),
      preTokenBalances,
      postTokenBalances: this.tokenBalances(accountKeys),
      logMessages: meta.logs(),
      computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
      innerInstructions: meta
        .innerInstructions()
        .map((list, index) => ({
          index,
          instructions: list.map((ii) => {
            const ci = ii.instruction();
            return {
              programIdIndex: ci.programIdIndex(),
              accounts: [...ci.accounts()],
              data: bs58.encode(ci.data()),
              stackHeight: ii.stackHeight(),
            };
          }),
        }))
        .filter((x) => x.instructions.length > 0),
      computeUnitPrice,
    };
    this.bySignature.set(signature, rec);
    // A failed transaction changed only its fee payer's lamports.
    this.recordAccountVersions(err === null ? writable : [accountKeys[0]!], slot);
    for (const key of new Set(accountKeys)) {
      let list = this.byAddress.get(key);
      if (!list) this.byAddress.set(key, (list = []));
      list.push(rec);
    }
    return rec;
  }

  private lookupTables(tx: VersionedTransaction): AddressLookupTableAccount[] {
    return tx.message.addressTableLookups.map((l) => {
      const acc = this.svm.getAccount(l.accountKey.toBase58() as never);
      if (!acc.exists) throw new Error('AddressLookupTableNotFound');
      return new AddressLookupTableAccount({ key: l.accountKey, state: AddressLookupTableAccount.deserialize(Uint8Array.from(acc.data)) });
    });
  }

  private feeOf(tx: VersionedTransaction, keys: MessageAccountKeys, microLamportsPerCu: bigint): number {
    const budget = ComputeBudgetProgram.programId.toBase58();
    let limit: number | undefined;
    let others = 0;
    for (const ix of tx.message.compiledInstructions) {
      const program = keys.get(ix.programIdIndex)?.toBase58();
      if (program === budget && ix.data[0] === 2) limit = Buffer.from(ix.data).readUInt32LE(1);
      else if (program !== budget) others++;
    }
    const cuLimit = BigInt(limit ?? Math.min(1_400_000, 200_000 * others));
    const priority = (microLamportsPerCu * cuLimit + 999_999n) / 1_000_000n;
    return tx.message.header.numRequiredSignatures * this.lamportsPerSignature + Number(priority);
  }

  private tokenBalances(accountKeys: string[]): TokenBalanceJson[] {
    const out: TokenBalanceJson[] = [];
    accountKeys.forEach((key, accountIndex) => {
      const acc = this.svm.getAccount(key as never);
      if (!acc.exists) return;
      const programId = acc.programAddress as string;
      const token = decodeTokenAccount(programId, Uint8Array.from(acc.data));
      if (!token) return;
      const decimals = this.mintDecimals(token.mint) ?? 0;
      out.push({ accountIndex, mint: token.mint, owner: token.owner, programId, uiTokenAmount: uiTokenAmount(token.amount, decimals) });
    });
    return out;
  }

  /** After a landed write: the new states, and history no finalized read can reach any more dropped. */
  private recordAccountVersions(addresses: string[], slot: number): void {
    const finalized = this.slot('finalized');
    for (const address of addresses) {
      const list = this.accountVersions.get(address)!;
      list.push({ slot, state: this.account(address) });
      let keepFrom = 0;
      for (let i = 0; i < list.length; i++) if (list[i]!.slot <= finalized) keepFrom = i;
      if (keepFrom > 0) list.splice(0, keepFrom);
    }
  }

  mintDecimals(mint: string): number | null {
    const acc = this.svm.getAccount(mint as never);
    if (!acc.exists) return null;
    return decodeMint(acc.programAddress as string, acc.data)?.decimals ?? null;
  }

  // ---- history ----------------------------------------------------------------------------------------------------

  transaction(signature: string, commitment: Commitment): LandedTransaction | null {
    const rec = this.bySignature.get(signature);
    return rec && this.isVisible(rec.slot, commitment) ? rec : null;
  }

  signatureStatus(signature: string): { slot: number; err: TransactionErrorJson | null } | null {
    const rec = this.bySignature.get(signature);
    if (rec) return { slot: rec.slot, err: rec.err };
    const air = this.airdrops.get(signature);
    return air ? { slot: air.slot, err: null } : null;
  }

  /** Newest first; `before` and `until` are exclusive bounds named by signature, as in the RPC. */
  signaturesForAddress(
    address: string,
    opts: { before?: string; until?: string; limit?: number; commitment: Commitment },
  ): LandedTransaction[] {
    const list = this.byAddress.get(address) ?? [];
    const limit = Math.min(opts.limit ?? 1000, 1000);
    let i = list.length - 1;
    if (opts.before !== undefined) {
      const b = this.bySignature.get(opts.before);
      if (!b) return [];
      while (i >= 0 && list[i]!.seq >= b.seq) i--;
    }
    const untilSeq = opts.until !== undefined ? (this.bySignature.get(opts.until)?.seq ?? 0) : 0;
    const out: LandedTransaction[] = [];
    for (; i >= 0 && out.length < limit; i--) {
      const rec = list[i]!;
      if (rec.seq <= untilSeq) break;
      if (this.isVisible(rec.slot, opts.commitment)) out.push(rec);
    }
    return out;
  }

  /** Per-slot minimum compute-unit price of landed transactions that write-lock any of `addresses` (all
   * transactions when empty), floored by the configured fee; the last 150 slots, as the RPC answers. */
  recentPrioritizationFees(addresses: string[]): { slot: number; prioritizationFee: number }[] {
    const from = Math.max(this.firstSlot(), this.slotNow - 149);
    const perSlot = new Map<number, bigint>();
    const wanted = new Set(addresses);
    for (const rec of this.bySignature.values()) {
      if (rec.slot < from) continue;
      const touches = wanted.size === 0 || rec.accountKeys.some((k, i) => wanted.has(k) && rec.tx.message.isAccountWritable(i));
      if (!touches) continue;
      const prev = perSlot.get(rec.slot);
      if (prev === undefined || rec.computeUnitPrice < prev) perSlot.set(rec.slot, rec.computeUnitPrice);
    }
    const out: { slot: number; prioritizationFee: number }[] = [];
    for (let s = from; s <= this.slotNow; s++) {
      out.push({ slot: s, prioritizationFee: Math.max(this.priorityFeeFloor, Number(perSlot.get(s) ?? 0n)) });
    }
    return out;
  }

  transactionCount(): number {
    return this.bySignature.size;
  }

  // ---- accounts and test controls ---------------------------------------------------------------------------------

  airdrop(address: string, lamports: bigint): string {
    if (this.perTransactionSlots) this.advanceSlots(1);
    this.accountVersions.delete(address); // a test write: holds at every commitment
    const res = this.svm.airdrop(address as never, lamports as never);
    if (!res || isFailed(res)) throw new RpcError(-32603, 'airdrop failed');
    const signature = bs58.encode(res.signature());
    this.airdrops.set(signature, { signature, slot: this.slotNow });
    return signature;
  }

  setAccount(a: { address: string; lamports: bigint; data: Uint8Array; owner: string; executable?: boolean }): void {
    this.accountVersions.delete(a.address); // a test write: holds at every commitment
    this.svm.setAccount({
      address: a.address,
      lamports: a.lamports,
      data: a.data,
      programAddress: a.owner,
      executable: a.executable ?? false,
      space: BigInt(a.data.length),
    } as never);
  }

  /** A mint at any address (the real USDC/USDT addresses included), owned by the token program. */
  createMint(m: {
    address?: string;
    decimals: number;
    mintAuthority?: string | null;
    freezeAuthority?: string | null;
    supply?: bigint;
    programId?: string;
  }): string {
    const address = m.address ?? new PublicKey(randomBytes(32)).toBase58();
    const data = encodeMint(m);
    this.setAccount({
      address,
      lamports: this.svm.minimumBalanceForRentExemption(BigInt(data.length)),
      data,
      owner: m.programId ?? TOKEN_PROGRAM_ID.toBase58(),
    });
    return address;
  }

  /** Writes an initialized token account (the owner's ATA unless `address` is given) holding `amount` base units, with
   * its delegate and delegated amount if given (an approval survives a freeze written over it). */
  setTokenAccount(t: {
    mint: string;
    owner: string;
    amount: bigint;
    address?: string;
    programId?: string;
    frozen?: boolean;
    delegate?: string | null;
    delegatedAmount?: bigint;
  }): string {
    const programId = t.programId ?? TOKEN_PROGRAM_ID.toBase58();
    const address =
      t.address ?? getAssociatedTokenAddressSync(new PublicKey(t.mint), new PublicKey(t.owner), true, new PublicKey(programId)).toBase58();
    const data = encodeTokenAccount(t);
    this.setAccount({ address, lamports: this.svm.minimumBalanceForRentExemption(BigInt(data.length)), data, owner: programId });
    return address;
  }

  /** The account at `commitment` (see the header: `finalized` replays landed writes, the others read the newest). */
  account(address: string, commitment: Commitment = 'processed'): AccountState | null {
    if (commitment === 'finalized') {
      const list = this.accountVersions.get(address);
      if (list) {
        const finalized = this.slot('finalized');
        let found: { slot: number; state: AccountState | null } | undefined;
        for (const v of list) if (v.slot <= finalized) found = v;
        if (found) return found.state;
      }
    }
    const acc = this.svm.getAccount(address as never);
    if (!acc.exists) return null;
    return { lamports: BigInt(acc.lamports), data: acc.data, owner: acc.programAddress as string, executable: acc.executable };
  }

  tokenAccountsByOwner(owner: string, filter: { mint?: string; programId?: string }): { address: string; programId: string }[] {
    const programs = filter.programId ? [filter.programId] : [TOKEN_PROGRAM_ID.toBase58(), 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'];
    const out: { address: string; programId: string }[] = [];
    for (const programId of programs) {
      for (const acc of this.svm.getProgramAccounts(programId as never)) {
        const token = decodeTokenAccount(programId, Uint8Array.from(acc.data));
        if (!token || token.owner !== owner) continue;
        if (filter.mint && token.mint !== filter.mint) continue;
        out.push({ address: acc.address as string, programId });
      }
    }
    return out;
  }
}

function deserialize(wire: Uint8Array): VersionedTransaction {
  try {
    return VersionedTransaction.deserialize(wire);
  } catch (e) {
    throw new RpcError(-32602, `invalid transaction: failed to deserialize: ${(e as Error).message}`);
  }
}

function isFailed(res: unknown): res is FailedTransactionMetadata {
  return (res as { constructor: { name: string } }).constructor.name === 'FailedTransactionMetadata';
}

/** @solana/kit's Transaction shape, which LiteSVM 1.x takes: message bytes and signatures keyed by signer. */
function toKitTransaction(tx: VersionedTransaction, requireSignatures: boolean): never {
  const signatures: Record<string, Uint8Array | null> = {};
  const n = tx.message.header.numRequiredSignatures;
  tx.message.staticAccountKeys.slice(0, n).forEach((k, i) => {
    const sig = tx.signatures[i] ?? new Uint8Array(64);
    // An all-zero signature is "absent": allowed when simulating without sigVerify, a SignatureFailure otherwise.
    signatures[k.toBase58()] = requireSignatures || sig.some((b) => b !== 0) ? sig : null;
  });
  return { messageBytes: tx.message.serialize(), signatures } as never;
}

function readComputeUnitPrice(tx: VersionedTransaction, keys: MessageAccountKeys): bigint {
  const budget = ComputeBudgetProgram.programId.toBase58();
  for (const ix of tx.message.compiledInstructions) {
    if (keys.get(ix.programIdIndex)?.toBase58() === budget && ix.data[0] === 3) {
      return Buffer.from(ix.data).readBigUInt64LE(1);
    }
  }
  return 0n;
}

function preflightError(err: TransactionErrorJson, logs: string[], unitsConsumed = 0): RpcError {
  return new RpcError(-32002, `Transaction simulation failed: ${describeTransactionError(err)}`, {
    err,
    logs,
    accounts: null,
    unitsConsumed,
    returnData: null,
  });
}
