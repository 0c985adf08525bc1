// Exponential backoff with full jitter: delay = random(0, min(max, base * 2^attempt)), at least `floor`.
export class Backoff {
  #attempt = 0;
  constructor(
    private readonly baseMs = 250,
    private readonly maxMs = 30_000,
    private readonly floorMs = 50,
    private readonly random: () => number = Math.random,
  ) {}

  get attempt(): number {
    return this.#attempt;
  }

  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt++;
    return Math.max(this.floorMs, Math.floor(this.random() * ceiling));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
