import type { LiveStatus } from './live-status.js';

// One status reader per session for all of this process's live streams: the session's status is read once per tick
// and fanned out to every subscriber, whatever their number (plus one read when streams are admitted). Streams are capped per session, per client IP and
// in all (0 = no cap); a slot is held from the moment a stream is admitted until it leaves, so a cap frees up as clients go.
// A session's entry (and its timer) exists exactly while it has subscribers or one being admitted.

export type StatusReader = (sessionId: string) => Promise<LiveStatus | undefined>;

export interface LiveHubOptions {
  read: StatusReader;
  intervalMs: number;
  perSession: number;
  perIp: number;
  /** Streams of this process in all (0 = no cap): many addresses together cannot hold an unbounded number of sockets. */
  total?: number;
  onReadError: (err: unknown, sessionId: string) => void;
}

export type Listener = (status: LiveStatus) => void;

export type Admission =
  | { kind: 'joined'; status: LiveStatus; leave(): void }
  | { kind: 'full'; scope: 'session' | 'ip' | 'total' }
  | { kind: 'not_found' };

interface Entry {
  listeners: Set<Listener>;
  admitting: number;
  current?: { status: LiveStatus; json: string };
  loading?: Promise<LiveStatus | undefined>;
  timer?: NodeJS.Timeout;
}

export class LiveHub {
  private readonly entries = new Map<string, Entry>();
  private readonly perIp = new Map<string, number>();
  private held = 0;
  private closed = false;

  constructor(private readonly o: LiveHubOptions) {}

  /** Streams currently held (admitted or being admitted) in this process. */
  get streams(): number {
    return this.held;
  }

  /** Streams currently held (admitted or being admitted) by this IP bucket. */
  streamsOf(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  async join(sessionId: string, ip: string, listener: Listener): Promise<Admission> {
    const existing = this.entries.get(sessionId);
    if (this.o.perSession > 0 && existing && existing.listeners.size + existing.admitting >= this.o.perSession)
      return { kind: 'full', scope: 'session' };
    if (this.o.perIp > 0 && this.streamsOf(ip) >= this.o.perIp) return { kind: 'full', scope: 'ip' };
    if ((this.o.total ?? 0) > 0 && this.held >= this.o.total!) return { kind: 'full', scope: 'total' };
    const entry = existing ?? { listeners: new Set<Listener>(), admitting: 0 };
    if (!existing) this.entries.set(sessionId, entry);
    entry.admitting++;
    this.perIp.set(ip, this.streamsOf(ip) + 1);
    this.held++;
    let admitted = false;
    const release = () => {
      this.held--;
      const n = this.streamsOf(ip) - 1;
      if (n > 0) this.perIp.set(ip, n);
      else this.perIp.delete(ip);
      if (entry.listeners.size + entry.admitting === 0) this.drop(sessionId, entry);
    };
    try {
      // A new stream starts from a read of its own or one in flight, never from the last tick's (it may predate
      // what the payer just did); admissions arriving together share that read.
      const status = await this.load(sessionId, entry);
      if (!status || this.closed) return { kind: 'not_found' };
      entry.listeners.add(listener);
      admitted = true;
      if (!entry.timer) this.schedule(sessionId, entry);
      let left = false;
      return {
        kind: 'joined',
        status,
        leave: () => {
          if (left) return;
          left = true;
          entry.listeners.delete(listener);
          release();
        },
      };
    } finally {
      entry.admitting--;
      if (!admitted) release();
    }
  }

  close(): void {
    this.closed = true;
    for (const [id, entry] of this.entries) this.drop(id, entry);
  }

  private load(sessionId: string, entry: Entry): Promise<LiveStatus | undefined> {
    entry.loading ??= this.o.read(sessionId).then(
      (status) => {
        entry.loading = undefined;
        if (status) entry.current = { status, json: JSON.stringify(status) };
        return status;
      },
      (err: unknown) => {
        entry.loading = undefined;
        throw err;
      },
    );
    return entry.loading;
  }

  private schedule(sessionId: string, entry: Entry): void {
    entry.timer = setTimeout(() => void this.tick(sessionId, entry), this.o.intervalMs);
  }

  private async tick(sessionId: string, entry: Entry): Promise<void> {
    const before = entry.current?.json;
    try {
      const status = await this.load(sessionId, entry);
      if (status && entry.current && entry.current.json !== before) {
        for (const listener of [...entry.listeners]) listener(status);
      }
    } catch (err) {
      this.o.onReadError(err, sessionId);
    }
    if (this.entries.get(sessionId) === entry && entry.listeners.size > 0) this.schedule(sessionId, entry);
    else entry.timer = undefined;
  }

  private drop(sessionId: string, entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (this.entries.get(sessionId) === entry) this.entries.delete(sessionId);
  }
}
