import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { outboxAfter, outboxHead } from '../../ledger/core/outbox-tail.js';
import { sessionFingerprints } from '../../ledger/payments/session-fingerprint.js';
import { sweepListFingerprint, sweepsFingerprint } from '../../ledger/treasury/sweeps.js';
import type { Logger } from '../../logger.js';
import type { ConsoleActor } from '../actor.js';
import { hears, topicsOfEvent } from './topics.js';

// One reader for every live stream of this process (like the checkout's live hub): while at least one stream is
// open, it reads once per tick what changed (the outbox's tail; the fingerprints of the sessions and sweeps some
// page watches; the sweeps list) and tells each stream the topics it subscribed to that changed. However many pages
// are open, the database sees one set of reads per tick.

export interface Stream {
  actor: Pick<ConsoleActor, 'role' | 'merchantId' | 'userId'>;
  topics: ReadonlySet<string>;
  send(topic: string): void;
}

export interface LiveHubOptions {
  db: Kysely<Database>;
  intervalMs: number;
  /** Streams of this process in all, and per console user. */
  maxStreams: number;
  maxPerUser: number;
  log: Logger;
}

export class ConsoleLiveHub {
  private readonly streams = new Set<Stream>();
  private position: bigint | undefined;
  private readonly prints = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(private readonly o: LiveHubOptions) {}

  get size(): number {
    return this.streams.size;
  }

  /**
   * Admits a stream, or says which cap refused it. Once admitted, nothing that commits afterwards is missed: the
   * outbox position and the fingerprints of the stream's objects are taken before it is added (the page then reads
   * its view once more on the stream's `ready`, for what committed between its first read and this).
   */
  async join(stream: Stream): Promise<{ leave(): void } | { full: 'user' | 'total' }> {
    if (this.streams.size >= this.o.maxStreams) return { full: 'total' };
    let mine = 0;
    for (const s of this.streams) if (s.actor.userId === stream.actor.userId) mine++;
    if (mine >= this.o.maxPerUser) return { full: 'user' };
    this.position ??= await outboxHead(this.o.db);
    await this.prime(stream.topics);
    this.streams.add(stream);
    this.timer ??= setInterval(() => void this.tick(), this.o.intervalMs);
    return {
      leave: () => {
        this.streams.delete(stream);
        if (this.streams.size === 0) this.stop();
      },
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.position = undefined;
    this.prints.clear();
  }

  /** One read of everything watched; public so tests can drive it. */
  async tick(): Promise<void> {
    if (this.ticking || this.streams.size === 0) return;
    this.ticking = true;
    try {
      const changed: Array<{ topic: string; merchantId: string | null }> = [];
      await this.readOutbox(changed);
      await this.readFingerprints(changed);
      for (const s of this.streams) {
        const told = new Set<string>();
        for (const c of changed) {
          if (!s.topics.has(c.topic) || told.has(c.topic)) continue;
          if (c.merchantId !== null && !hears(s.actor, c.merchantId)) continue;
          told.add(c.topic);
          s.send(c.topic);
        }
      }
    } catch (err) {
      this.o.log.warn({ err }, 'console live read failed; next tick retries');
    } finally {
      this.ticking = false;
    }
  }

  /** Fingerprints of the object topics not yet watched, so that their first change after the join is told. */
  private async prime(topics: ReadonlySet<string>): Promise<void> {
    const sessions: string[] = [];
    const sweeps: string[] = [];
    for (const t of topics) {
      if (this.prints.has(t)) continue;
      if (t.startsWith('payment:')) sessions.push(t.slice(8));
      else if (t.startsWith('sweep:')) sweeps.push(t.slice(6));
      else if (t === 'sweeps') this.prints.set(t, await sweepListFingerprint(this.o.db));
    }
    for (const [id, p] of await sessionFingerprints(this.o.db, sessions)) this.prints.set(`payment:${id}`, p);
    for (const [id, p] of await sweepsFingerprint(this.o.db, sweeps)) this.prints.set(`sweep:${id}`, p);
  }

  private async readOutbox(changed: Array<{ topic: string; merchantId: string | null }>): Promise<void> {
    if (this.position === undefined) {
      this.position = await outboxHead(this.o.db);
      return;
    }
    const events = await outboxAfter(this.o.db, this.position, 1000);
    for (const e of events) {
      this.position = e.seq;
      for (const topic of topicsOfEvent(e.type, e.aggregate_id)) changed.push({ topic, merchantId: e.merchant_id });
    }
  }

  private async readFingerprints(changed: Array<{ topic: string; merchantId: string | null }>): Promise<void> {
    const sessions = new Set<string>();
    const sweeps = new Set<string>();
    let list = false;
    for (const s of this.streams)
      for (const t of s.topics) {
        if (t.startsWith('payment:')) sessions.add(t.slice(8));
        else if (t.startsWith('sweep:')) sweeps.add(t.slice(6));
        else if (t === 'sweeps') list = true;
      }
    const now = new Map<string, string>();
    for (const [id, p] of await sessionFingerprints(this.o.db, [...sessions])) now.set(`payment:${id}`, p);
    for (const [id, p] of await sweepsFingerprint(this.o.db, [...sweeps])) now.set(`sweep:${id}`, p);
    if (list) now.set('sweeps', await sweepListFingerprint(this.o.db));
    for (const [topic, p] of now) {
      const before = this.prints.get(topic);
      // Object topics are checked for ownership when a stream subscribes (routes.ts); the change itself names none.
      if (before !== undefined && before !== p) changed.push({ topic, merchantId: null });
      this.prints.set(topic, p);
    }
    for (const topic of [...this.prints.keys()]) if (!now.has(topic)) this.prints.delete(topic);
  }
}
