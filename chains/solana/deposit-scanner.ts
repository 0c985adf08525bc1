import { AccountLayout, ACCOUNT_SIZE, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey, type Connection, type Finality, type VersionedTransactionResponse } from '@solana/web3.js';
import pLimit from 'p-limit';
import type { BlockRef, CursorState, ObservedTransfer, PollResult, TokenContract, WatchSet } from '../types.js';
import { paymentReference } from './solana-pay.js';

// Solana deposit detection. Token transfers name the recipient's token account (its ATA), so a watcher polls per
// account: Solana leaves no cheaper way to see transfers into N arbitrary accounts (no log filter over a program).
//
// One poll:
//  1. confirmed slot C and final slot F (the configured commitment, `finalized` by default);
//  2. getMultipleAccounts over every watched owner's ATA of every registry mint (100 per call);
//  3. getSignaturesForAddress (at `confirmed`) only for ATAs whose balance differs from the balance explained by
//     the history seen so far, plus, every `referenceScanEveryPolls` polls, each owner's Solana Pay reference;
//  4. getTransaction for signatures not already delivered below the persisted cursor;
//  5. a credit per (signature, account index) whose post-minus-pre raw balance of a registry mint, in an account
//     owned by a watched owner, is positive. Other mints (look-alikes) are never credited.
// Invariants: the cursor is C measured before any listing, so a transaction not yet confirmed at that moment lands
// above the cursor and is listed again next poll; a balance is "explained" only by the post balance of the newest
// confirmed transaction touching the account, so a transfer visible at `processed` but not yet at `confirmed`
// keeps the account in the scan set until it is seen. Credits above F are provisional (the watcher holds them);
// confirmed Solana slots are not rolled back in practice, so rollbackAbove is always null.

export interface SolanaScannerOptions {
  connection: Connection;
  /** With several endpoints: the connection of one endpoint for a whole poll (chains/solana/failover-connection.ts). */
  pin?: () => Promise<{ connection: Connection }>;
  /** With a quorum: the final slot agreed by it, from the pinned endpoint's own (chains/solana/failover-connection.ts). */
  agreeFinal?: (pinned: { connection: Connection }, slot: number) => Promise<number>;
  tokens: readonly TokenContract[];
  finality: Finality;
  tokenProgramId: PublicKey;
  /** Slots below the cursor listed again on each poll, against RPC nodes that lag each other (default 150). */
  rescanSlots: number;
  /** Reference scans cost one call per watched owner: on the first poll of a process, then every N polls (0: never again). */
  referenceScanEveryPolls: number;
  concurrency: number;
}

interface SolanaCursor {
  v: 1;
  /** Confirmed slot through which every transfer has been delivered. */
  scannedThrough: string;
}

export function encodeSolanaCursor(slot: bigint): CursorState {
  const c: SolanaCursor = { v: 1, scannedThrough: slot.toString() };
  return c;
}

function decodeSolanaCursor(state: CursorState): bigint {
  const c = state as Partial<SolanaCursor>;
  if (c.v !== 1 || typeof c.scannedThrough !== 'string' || !/^\d+$/.test(c.scannedThrough)) {
    throw new Error('not a Solana cursor');
  }
  return BigInt(c.scannedThrough);
}

interface Listed {
  signature: string;
  slot: number;
}

export class SolanaDepositScanner {
  readonly #o: SolanaScannerOptions;
  readonly #mints: Map<string, TokenContract>;
  readonly #ataOf = new Map<string, { ata: string; owner: string; mint: string }[]>();
  /** ATA -> {newest signature touching it, its post balance}: what history explains. */
  readonly #explained = new Map<string, { signature: string; amount: bigint }>();
  /** Signatures already delivered (by slot) in this process; only skipped when at or below the persisted cursor. */
  readonly #delivered = new Map<string, number>();
  #polls = 0;
  /** RPC calls of the last poll, by method (for benchmarks and docs). */
  lastPollCalls: Record<string, number> = {};

  constructor(o: SolanaScannerOptions) {
    this.#o = o;
    this.#mints = new Map(o.tokens.map((t) => [t.address, t]));
  }

  async initialCursor(startHeight?: bigint): Promise<CursorState> {
    if (startHeight !== undefined) return encodeSolanaCursor(startHeight);
    const conn = this.#o.pin ? (await this.#o.pin()).connection : this.#o.connection;
    const start = await conn.getSlot(this.#o.finality);
    // As in poll: with several endpoints, the start slot must hold a block on the endpoint that named it.
    if (this.#o.pin) await conn.getBlockTime(start);
    return encodeSolanaCursor(BigInt(start));
  }

  async head(): Promise<{ latest: bigint; final: bigint }> {
    const [latest, final] = await Promise.all([this.#o.connection.getSlot('processed'), this.#o.connection.getSlot(this.#o.finality)]);
    return { latest: BigInt(latest), final: BigInt(final) };
  }

  async poll(cursor: CursorState, watch: WatchSet): Promise<PollResult> {
    const calls: Record<string, number> = {};
    const count = (m: string, n = 1) => (calls[m] = (calls[m] ?? 0) + n);
    // One endpoint answers the whole poll: the cursor slot and every listing come from the same node.
    const pinned = this.#o.pin ? await this.#o.pin() : { connection: this.#o.connection };
    const conn = pinned.connection;
    const limit = pLimit(this.#o.concurrency);
    const persisted = decodeSolanaCursor(cursor);
    const fromSlot = Number(persisted) - this.#o.rescanSlots;

    const [confirmed, ownFinal] = await Promise.all([conn.getSlot('confirmed'), conn.getSlot(this.#o.finality)]);
    count('getSlot', 2);
    const final = this.#o.agreeFinal ? await this.#o.agreeFinal(pinned, ownFinal) : ownFinal;
    // With several endpoints, the pinned one must hold a block at the slot it calls confirmed before that slot becomes
    // the cursor: a node inventing slots would otherwise move the cursor past transfers it never listed.
    const provenTime = this.#o.pin ? await conn.getBlockTime(confirmed) : undefined;
    if (provenTime === null) throw new Error(`solana: no block time at the pinned endpoint's confirmed slot ${confirmed}`);
    // Every address shown to a payer before the confirmed slot was read is in the set from here on.
    await watch.sync();

    // 2. balances of every watched ATA
    const atas: { ata: string; owner: string; mint: string }[] = [];
    for (const owner of watch.addresses()) atas.push(...this.#atasOf(owner));
    const toScan = new Set<string>();
    const chunks: (typeof atas)[] = [];
    for (let i = 0; i < atas.length; i += 100) chunks.push(atas.slice(i, i + 100));
    await Promise.all(
      chunks.map((chunk) =>
        limit(async () => {
          count('getMultipleAccounts');
          const infos = await conn.getMultipleAccountsInfo(
            chunk.map((a) => new PublicKey(a.ata)),
            'confirmed',
          );
          infos.forEach((info, i) => {
            const a = chunk[i]!;
            if (!info || !info.owner.equals(this.#o.tokenProgramId) || info.data.length < ACCOUNT_SIZE) return;
            const amount = AccountLayout.decode(info.data.subarray(0, ACCOUNT_SIZE)).amount;
            if (this.#explained.get(a.ata)?.amount !== amount) toScan.add(a.ata);
          });
        }),
      ),
    );
    const every = this.#o.referenceScanEveryPolls;
    const scanReferences = this.#polls === 0 || (every > 0 && this.#polls % every === 0);
    const references = scanReferences ? [...watch.addresses()].map(paymentReference) : [];

    // 3. list signatures above fromSlot (and the newest one of each scanned ATA, whatever its slot)
    const newestOf = new Map<string, Listed>();
    const listed = new Map<string, Listed>();
    await Promise.all(
      [...toScan, ...references].map((address) =>
        limit(async () => {
          let before: string | undefined;
          for (;;) {
            count('getSignaturesForAddress');
            const page = await conn.getSignaturesForAddress(new PublicKey(address), { before, limit: 1000 }, 'confirmed');
            if (before === undefined && page[0] && toScan.has(address)) newestOf.set(address, page[0]);
            let reachedOld = page.length < 1000;
            for (const s of page) {
              if (s.slot <= fromSlot) {
                reachedOld = true;
                break;
              }
              listed.set(s.signature, { signature: s.signature, slot: s.slot });
            }
            if (reachedOld) break;
            before = page[page.length - 1]!.signature;
          }
        }),
      ),
    );

    // 4. fetch what was not delivered below the persisted cursor, plus newest transactions needed for balances
    const fetch = new Map<string, boolean>(); // signature -> reportable
    for (const s of listed.values()) {
      if (s.slot <= persisted && this.#delivered.has(s.signature)) continue;
      fetch.set(s.signature, true);
    }
    for (const [ata, newest] of newestOf) {
      if (this.#explained.get(ata)?.signature !== newest.signature && !fetch.has(newest.signature)) fetch.set(newest.signature, false);
    }
    const txs = new Map<string, VersionedTransactionResponse>();
    await Promise.all(
      [...fetch.keys()].map((sig) =>
        limit(async () => {
          count('getTransaction');
          const tx = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
          if (tx) txs.set(sig, tx);
        }),
      ),
    );

    // 5. credits and explained balances. What this poll learned (delivered signatures, explained balances, that the
    // reference scan ran) is kept only once its result is committed (`committed`): a poll whose commit failed (the
    // database down, a fenced cursor, a crash in a test) must leave the caches as they were, or the next poll in this
    // process would take an account as explained and never list the transfer the lost commit held.
    const transfers: { t: ObservedTransfer; order: number }[] = [];
    const outgoing: { t: ObservedTransfer; order: number }[] = [];
    const delivered: Array<[string, number]> = [];
    for (const [sig, tx] of txs) {
      if (fetch.get(sig)) {
        for (const t of this.#creditsOf(sig, tx, watch)) transfers.push({ t, order: tx.slot });
        for (const t of this.#debitsOf(sig, tx, watch)) outgoing.push({ t, order: tx.slot });
        delivered.push([sig, tx.slot]);
      }
    }
    const explained: Array<[string, { signature: string; amount: bigint }]> = [];
    for (const [ata, newest] of newestOf) {
      const tx = txs.get(newest.signature);
      if (!tx) continue;
      const amount = postAmountOf(tx, ata);
      if (amount !== null) explained.push([ata, { signature: newest.signature, amount }]);
    }
    // An account with no history at all (only possible on a test ledger) has nothing to credit.
    const unexplained = [...toScan].filter((ata) => !newestOf.has(ata));
    const committed = () => {
      this.#polls++;
      for (const [sig, slot] of delivered) this.#delivered.set(sig, slot);
      for (const [ata, e] of explained) this.#explained.set(ata, e);
      for (const ata of unexplained) this.#explained.delete(ata);
      for (const [sig, slot] of this.#delivered) if (slot < fromSlot) this.#delivered.delete(sig);
    };

    count('getBlockTime');
    const tipTime = provenTime ?? (await conn.getBlockTime(confirmed).catch(() => null));
    transfers.sort((a, b) => a.order - b.order);
    outgoing.sort((a, b) => a.order - b.order);
    this.lastPollCalls = calls;
    return {
      rollbackAbove: null,
      transfers: transfers.map((x) => x.t),
      outgoing: outgoing.map((x) => x.t),
      finalHeight: BigInt(final),
      processedTip: {
        height: BigInt(confirmed),
        hash: String(confirmed),
        time: new Date((tipTime ?? Math.floor(Date.now() / 1000)) * 1000),
      },
      cursor: encodeSolanaCursor(BigInt(Math.max(confirmed, Number(persisted)))),
      caughtUp: true,
      committed,
    };
  }

  /** Transfers credited by one transaction: every account owned by a watched owner whose registry-mint balance grew. */
  #creditsOf(signature: string, tx: VersionedTransactionResponse, watch: WatchSet): ObservedTransfer[] {
    const meta = tx.meta;
    if (!meta || meta.err !== null) return [];
    const pre = new Map((meta.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
    const block: BlockRef = { height: BigInt(tx.slot), hash: String(tx.slot), time: new Date((tx.blockTime ?? 0) * 1000) };
    const out: ObservedTransfer[] = [];
    for (const post of meta.postTokenBalances ?? []) {
      const token = this.#mints.get(post.mint);
      if (!token || !post.owner || !watch.has(post.owner)) continue;
      if (post.programId !== undefined && post.programId !== this.#o.tokenProgramId.toBase58()) continue;
      const before = pre.get(post.accountIndex);
      const amount = BigInt(post.uiTokenAmount.amount) - (before && before.mint === post.mint ? BigInt(before.uiTokenAmount.amount) : 0n);
      if (amount <= 0n) continue;
      out.push({
        txHash: signature,
        logIndex: post.accountIndex,
        block,
        token: token.symbol,
        tokenContract: token.address,
        from: senderOf(tx, post.mint),
        to: post.owner,
        amount,
      });
    }
    return out;
  }

  /**
   * Transfers out of watched owners in one transaction (the journal's unexplained movements): every account owned by a
   * watched owner whose registry-mint balance shrank; `to` is the owner of the account of that mint that gained most.
   */
  #debitsOf(signature: string, tx: VersionedTransactionResponse, watch: WatchSet): ObservedTransfer[] {
    const meta = tx.meta;
    if (!meta || meta.err !== null) return [];
    const post = new Map((meta.postTokenBalances ?? []).map((b) => [b.accountIndex, b]));
    const block: BlockRef = { height: BigInt(tx.slot), hash: String(tx.slot), time: new Date((tx.blockTime ?? 0) * 1000) };
    const out: ObservedTransfer[] = [];
    for (const pre of meta.preTokenBalances ?? []) {
      const token = this.#mints.get(pre.mint);
      if (!token || !pre.owner || !watch.has(pre.owner)) continue;
      if (pre.programId !== undefined && pre.programId !== this.#o.tokenProgramId.toBase58()) continue;
      const after = post.get(pre.accountIndex);
      const loss = BigInt(pre.uiTokenAmount.amount) - (after && after.mint === pre.mint ? BigInt(after.uiTokenAmount.amount) : 0n);
      if (loss <= 0n) continue;
      out.push({
        txHash: signature,
        logIndex: pre.accountIndex,
        block,
        token: token.symbol,
        tokenContract: token.address,
        from: pre.owner,
        to: receiverOf(tx, pre.mint) ?? pre.owner,
        amount: loss,
      });
    }
    return out;
  }

  #atasOf(owner: string): { ata: string; owner: string; mint: string }[] {
    let list = this.#ataOf.get(owner);
    if (!list) {
      const ownerKey = new PublicKey(owner);
      list = this.#o.tokens.map((t) => ({
        ata: getAssociatedTokenAddressSync(new PublicKey(t.address), ownerKey, true, this.#o.tokenProgramId).toBase58(),
        owner,
        mint: t.address,
      }));
      this.#ataOf.set(owner, list);
    }
    return list;
  }
}

/** Static keys, then keys loaded from lookup tables: the index space of instructions and token balances. */
export function accountKeysOf(tx: VersionedTransactionResponse): string[] {
  const loaded = tx.meta?.loadedAddresses;
  return tx.transaction.message
    .getAccountKeys({ accountKeysFromLookups: loaded ?? undefined })
    .keySegments()
    .flat()
    .map((k) => k.toBase58());
}

function postAmountOf(tx: VersionedTransactionResponse, account: string): bigint | null {
  const index = accountKeysOf(tx).indexOf(account);
  if (index < 0) return null;
  const post = (tx.meta?.postTokenBalances ?? []).find((b) => b.accountIndex === index);
  return post ? BigInt(post.uiTokenAmount.amount) : 0n;
}

/** The owner of the account of the same mint that lost the most in this transaction (the payer's wallet). */
function senderOf(tx: VersionedTransactionResponse, mint: string): string | null {
  const post = new Map((tx.meta?.postTokenBalances ?? []).map((b) => [b.accountIndex, b]));
  let best: { owner: string; loss: bigint } | null = null;
  for (const pre of tx.meta?.preTokenBalances ?? []) {
    if (pre.mint !== mint || !pre.owner) continue;
    const after = post.get(pre.accountIndex);
    const loss = BigInt(pre.uiTokenAmount.amount) - (after ? BigInt(after.uiTokenAmount.amount) : 0n);
    if (loss > 0n && (!best || loss > best.loss)) best = { owner: pre.owner, loss };
  }
  return best?.owner ?? null;
}

/** The owner of the account of the same mint that gained the most in this transaction (the recipient). */
function receiverOf(tx: VersionedTransactionResponse, mint: string): string | null {
  const pre = new Map((tx.meta?.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
  let best: { owner: string; gain: bigint } | null = null;
  for (const post of tx.meta?.postTokenBalances ?? []) {
    if (post.mint !== mint || !post.owner) continue;
    const before = pre.get(post.accountIndex);
    const gain = BigInt(post.uiTokenAmount.amount) - (before && before.mint === mint ? BigInt(before.uiTokenAmount.amount) : 0n);
    if (gain > 0n && (!best || gain > best.gain)) best = { owner: post.owner, gain };
  }
  return best?.owner ?? null;
}
