/**
 * TTL cache with single-flight loading. Invariants:
 * - a value is served only while now < loadStartedAt + ttlMs (the TTL counts from when the request was sent, so a
 *   value is never older than the TTL when served; a stale value is never served, not even as a fallback);
 * - at most one load per key is in flight; concurrent callers share its promise;
 * - failures are not cached.
 */
export class SingleFlightCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly inflight = new Map<string, Promise<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new RangeError('ttlMs must be a non-negative number');
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    const startedAt = this.now();
    const entry = this.entries.get(key);
    if (entry) {
      if (startedAt < entry.expiresAt) return Promise.resolve(entry.value);
      this.entries.delete(key);
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const promise = (async () => {
      try {
        const value = await load();
        if (this.ttlMs > 0) this.entries.set(key, { value, expiresAt: startedAt + this.ttlMs });
        return value;
      } finally {
        this.inflight.delete(key);
      }
    })();
    this.inflight.set(key, promise);
    return promise;
  }

  clear(): void {
    this.entries.clear();
  }
}
