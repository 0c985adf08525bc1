import type { Kysely } from 'kysely';
import type { ChainAdapter, ObservedTransfer, PollResult, UnsupportedTransfer } from '../../chains/types.js';
import type { Database } from '../db/schema.js';
import {
  confirmFinalDeposits,
  orphanProvisionalDepositsAbove,
  recordObservedDepositRows,
  recordUnsupportedDepositRows,
} from '../ledger/payments/deposits.js';
import { CursorFencedError, initCursor, loadCursor, saveCursor } from '../ledger/core/chain-cursors.js';
import { killAtWatcherFailpoint } from './failpoints.js';
import { chainKey, type ChainRef } from '../ledger/core/chain-ref.js';
import { journalObservedMovements } from '../ledger/journal/observed-movements.js';
import type { ObservedDeposit } from '../ledger/core/observed-deposit.js';
import { AddressWatchSet } from './watch-set.js';
import { Backoff, sleep } from './backoff.js';

export interface WatcherLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export interface NetworkWatcherOptions {
  db: Kysely<Database>;
  adapter: ChainAdapter;
  /** A full step (poll and commit) starts at least this often while caught up, counted from the previous step's start. */
  pollIntervalMs: number;
  /**
   * While caught up, the chain's head is also read this often between full steps (one `getHead`; EVM: one
   * eth_blockNumber): a new head starts the next step at once instead of at the end of the interval, so a confirming
   * block waits at most this long to be seen (docs/watcher.md "Polling"). Default: half the poll interval; a value
   * at or above the interval turns the checks off.
   */
  headPollMs?: number;
  addressRetentionDays?: number;
  /** Where a watcher that has never run starts (block height); default: the adapter's current final height. */
  startHeight?: bigint;
  log?: WatcherLogger;
  backoff?: Backoff;
  /** Called after each committed poll (metrics, tests). */
  onCommitted?: (r: {
    poll: PollResult;
    credited: number;
    paidSessionIds: string[];
    confirmed?: number;
    /** Directions of the unexplained movements journaled by this step. */
    unexplained?: Array<'in' | 'out'>;
    /** Look-alike deposits confirmed (unmatched, unsupported_token) by this step; included in `confirmed`. */
    unsupportedConfirmed?: number;
  }) => void;
  /** False only in the watcher benchmark's comparison run: deposits are then not journaled. Default true. */
  journal?: boolean;
  /** Called when a head check between steps saw a new block and starts the next step early (tests, benchmark). */
  onHeadMoved?: () => void;
  /** Called when a step fails and will be retried (metrics). */
  onStepFailed?: (err: unknown) => void;
}

export interface StepResult {
  caughtUp: boolean;
  /** Height of the last block processed (the cursor tip). */
  tip: bigint;
  observed: number;
  credited: number;
  paidSessionIds: string[];
}

const observed = (t: ObservedTransfer | UnsupportedTransfer): ObservedDeposit => ({
  txHash: t.txHash,
  logIndex: t.logIndex,
  blockHeight: t.block.height,
  blockHash: t.block.hash,
  blockTime: t.block.time,
  token: t.token,
  tokenContract: t.tokenContract,
  from: t.from,
  to: t.to,
  amount: t.amount,
});

const silent: WatcherLogger = { info() {}, warn() {}, error() {} };

/**
 * One chain's watcher. Each step is: poll the adapter from the stored cursor, then in ONE transaction orphan what a
 * reorg removed, record new provisional deposits, confirm and credit what became final, and move the cursor
 * (fenced by version). A crash anywhere before commit leaves the previous cursor and nothing applied, so the next
 * step repeats the same range: the cursor never passes a block whose effects are not committed.
 */
export class NetworkWatcher {
  readonly chain: ChainRef;
  readonly key: string;
  readonly watch: AddressWatchSet;
  readonly #o: NetworkWatcherOptions;
  readonly #log: WatcherLogger;
  readonly #decimals: Map<string, number>;
  #stored: { cursor: object; version: bigint } | null = null;

  constructor(o: NetworkWatcherOptions) {
    this.#o = o;
    this.chain = { network: o.adapter.network, mode: o.adapter.mode };
    this.key = chainKey(this.chain);
    this.watch = new AddressWatchSet(o.db, this.chain, o.addressRetentionDays ?? 30);
    this.#log = o.log ?? silent;
    this.#decimals = new Map(o.adapter.tokens.map((t) => [t.symbol, t.decimals]));
  }

  async step(): Promise<StepResult> {
    const { db, adapter } = this.#o;
    if (!this.#stored) {
      let stored = await loadCursor(db, this.key);
      if (!stored) {
        const cursor = await adapter.initialCursor(this.#o.startHeight);
        const head = await adapter.getHead();
        stored = await initCursor(db, this.key, cursor, { height: head.final, time: new Date(0) });
      }
      this.#stored = { cursor: stored.cursor, version: stored.version };
    }
    const poll = await adapter.pollTransfers(this.#stored.cursor, this.watch);
    const decimals = (token: string) => {
      const d = this.#decimals.get(token);
      if (d === undefined) throw new Error(`${this.key}: no decimals for ${token}`);
      return d;
    };
    const expected = this.#stored.version;
    const outcome = await db.transaction().execute(async (trx) => {
      if (poll.rollbackAbove !== null) {
        const n = await orphanProvisionalDepositsAbove(trx, this.chain, poll.rollbackAbove);
        this.#log.warn(
          { chain: this.key, network: this.chain.network, mode: this.chain.mode, above: poll.rollbackAbove.toString(), orphaned: n },
          'reorg: provisional deposits rolled back',
        );
      }
      // A transfer to a registered wallet (hot wallet, charger) is never a deposit: it is journaled as a movement.
      const toDeposit = poll.transfers.filter((t) => !this.watch.isWallet(t.to));
      const toWallet = poll.transfers.filter((t) => this.watch.isWallet(t.to));
      const recorded = await recordObservedDepositRows(trx, this.chain, toDeposit.map(observed), { journal: this.#o.journal !== false });
      // A look-alike (USDbC, USDC.e) to a deposit address: recorded for the operator, never credited nor journaled. One
      // to a registered wallet is no deposit and no asset of the books: logged below, nothing written.
      const lookalikes = poll.unsupported ?? [];
      const unsupported = await recordUnsupportedDepositRows(
        trx,
        this.chain,
        lookalikes.filter((t) => !this.watch.isWallet(t.to)).map(observed),
      );
      const unexplained = await journalObservedMovements(trx, this.chain, {
        walletIncoming: toWallet.map(observed),
        outgoing: (poll.outgoing ?? []).map(observed),
      });
      const confirmed = await confirmFinalDeposits(trx, this.chain, poll.finalHeight, decimals, (c) => adapter.displayAddress(c));
      const version = await saveCursor(trx, this.key, expected, {
        cursor: poll.cursor,
        tip: poll.processedTip,
        finalHeight: poll.finalHeight,
      });
      // A crash here must leave nothing applied: the step's deposits and its cursor commit together or not at all.
      if (toDeposit.length > 0) killAtWatcherFailpoint('watcher:before_commit');
      return { ...confirmed, recorded, unsupported, unexplained, version };
    });
    poll.committed?.(); // only now may the adapter keep what this poll learned (a failed commit leaves it unlearned)
    // Logged after the commit: a line says what the ledger holds. Ids as in docs/operations.md ("Logs").
    const ids = { network: this.chain.network, mode: this.chain.mode };
    for (const d of outcome.recorded) {
      this.#log.info(
        {
          ...ids,
          session_id: d.session_id ?? undefined,
          deposit_id: d.id,
          tx_hash: d.tx_hash,
          log_index: d.log_index,
          block: d.block_number.toString(),
          token: d.token,
          amount_base: d.amount_base.toString(),
        },
        d.session_id ? 'deposit seen' : 'deposit seen to an address of no session',
      );
    }
    const notes = new Map((poll.unsupported ?? []).map((t) => [`${t.txHash}:${t.logIndex}`, t]));
    for (const d of outcome.unsupported) {
      const t = notes.get(`${d.tx_hash}:${d.log_index}`);
      this.#log.warn(
        {
          ...ids,
          session_id: d.session_id ?? undefined,
          deposit_id: d.id,
          tx_hash: d.tx_hash,
          log_index: d.log_index,
          block: d.block_number.toString(),
          token: d.token,
          token_contract: t?.tokenContract,
          amount_base: d.amount_base.toString(),
          note: t?.note,
        },
        'unsupported token deposit seen: a look-alike, never credited',
      );
    }
    for (const t of poll.unsupported ?? []) {
      if (!this.watch.isWallet(t.to)) continue;
      this.#log.warn(
        {
          ...ids,
          tx_hash: t.txHash,
          log_index: t.logIndex,
          address: t.to,
          token: t.token,
          token_contract: t.tokenContract,
          amount_base: t.amount.toString(),
        },
        'look-alike token sent to a wallet we control: not recorded',
      );
    }
    for (const u of outcome.unexplained) {
      // Flagged, never absorbed: docs/journal.md says what the operator does (journal unexplained, acknowledge).
      this.#log.error(
        {
          ...ids,
          journal_entry_id: u.entryId.toString(),
          direction: u.direction,
          address: u.address,
          counterparty: u.counterparty ?? undefined,
          merchant_id: u.merchantId ?? undefined,
          session_id: u.sessionId ?? undefined,
          tx_hash: u.txHash,
          log_index: u.logIndex,
          block: u.blockHeight.toString(),
          token: u.token,
          amount_base: u.amount.toString(),
        },
        u.direction === 'out' ? 'unexplained movement out of an address we control' : 'unexplained movement into a wallet we control',
      );
    }
    for (const d of outcome.decisions) {
      const line = {
        ...ids,
        session_id: d.sessionId ?? undefined,
        deposit_id: d.depositId,
        tx_hash: d.txHash,
        disposition: d.disposition,
        reason: d.reason ?? undefined,
      };
      if (d.disposition === 'credited') this.#log.info(line, 'deposit credited');
      else if (d.reason === 'unsupported_token') this.#log.warn(line, 'unsupported token deposit confirmed: not credited');
      else this.#log.warn(line, 'deposit confirmed unmatched');
      if (d.paidSession) this.#log.info({ ...ids, session_id: d.sessionId ?? undefined, tx_hash: d.txHash }, 'session paid');
    }
    this.#stored = { cursor: poll.cursor, version: outcome.version };
    this.#o.onCommitted?.({
      poll,
      credited: outcome.credited,
      paidSessionIds: outcome.paidSessionIds,
      confirmed: outcome.confirmed,
      unexplained: outcome.unexplained.map((u) => u.direction),
      unsupportedConfirmed: outcome.decisions.filter((d) => d.reason === 'unsupported_token').length,
    });
    return {
      caughtUp: poll.caughtUp,
      tip: poll.processedTip.height,
      observed: poll.transfers.length,
      credited: outcome.credited,
      paidSessionIds: outcome.paidSessionIds,
    };
  }

  /**
   * Steps until `signal` aborts: immediately while behind; when caught up, one poll interval after the previous step
   * started, or as soon as a head check between steps sees a new block; backoff on errors.
   */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = this.#o.backoff ?? new Backoff();
    while (!signal.aborted) {
      const started = Date.now();
      try {
        const r = await this.step();
        backoff.reset();
        if (r.caughtUp) await this.#untilNextStep(started, r.tip, signal);
      } catch (e) {
        this.#stored = null; // re-read the cursor: after a fence or failed commit the stored one is the truth
        if (e instanceof CursorFencedError) {
          this.#log.error({ chain: this.key }, 'cursor moved by another watcher; stepping down');
          throw e;
        }
        this.#o.onStepFailed?.(e);
        const delay = backoff.next();
        this.#log.warn({ chain: this.key, err: (e as Error).message, retryInMs: delay, attempt: backoff.attempt }, 'watcher step failed');
        await sleep(delay, signal);
      }
    }
  }

  /**
   * Waits until `pollIntervalMs` after `started`, reading the head every `headPollMs` (on a grid from `started`)
   * meanwhile; returns early when the head is above `tip`. A failed head read also returns: the step that follows
   * reports the failure and backs off.
   */
  async #untilNextStep(started: number, tip: bigint, signal: AbortSignal): Promise<void> {
    const interval = this.#o.pollIntervalMs;
    const every = this.#o.headPollMs ?? interval / 2;
    const due = started + interval;
    while (!signal.aborted) {
      const now = Date.now();
      if (now >= due) return;
      const check = every > 0 && every < interval ? started + Math.ceil((now - started + 1) / every) * every : due;
      await sleep(Math.min(check, due) - now, signal);
      if (signal.aborted || check >= due || Date.now() >= due) return;
      try {
        if ((await this.#o.adapter.getHead()).latest > tip) {
          this.#o.onHeadMoved?.();
          return;
        }
      } catch {
        return;
      }
    }
  }
}
