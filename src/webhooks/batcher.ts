// Group commit for the delivery worker: calls made while a batch is on its way to Postgres wait and go together in
// the next one, so N concurrent deliveries cost about one round trip (and one WAL flush) instead of N. A caller's
// promise settles only when its own batch has answered: nothing is acknowledged before it is written.
// Two items with the same key never share a batch (a later one waits for the next), so a batch statement can join
// on the key without ambiguity.

export interface Batcher<T, R> {
  run(item: T): Promise<R>;
}

export interface BatcherOptions<T, R> {
  /** Runs one batch; answers one result per item, in order. */
  execute(items: T[]): Promise<R[]>;
  key(item: T): string;
  maxBatch?: number;
  /** Batches in flight at once. */
  maxInFlight?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(r: R): void;
  reject(e: unknown): void;
}

export function createBatcher<T, R>(o: BatcherOptions<T, R>): Batcher<T, R> {
  const maxBatch = o.maxBatch ?? 200;
  const maxInFlight = o.maxInFlight ?? 2;
  let queue: Waiting<T, R>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const take = (): Waiting<T, R>[] => {
    const batch: Waiting<T, R>[] = [];
    const rest: Waiting<T, R>[] = [];
    const keys = new Set<string>();
    for (const w of queue) {
      const k = o.key(w.item);
      if (batch.length < maxBatch && !keys.has(k)) {
        keys.add(k);
        batch.push(w);
      } else rest.push(w);
    }
    queue = rest;
    return batch;
  };

  const pump = () => {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = take();
      inFlight++;
      o.execute(batch.map((w) => w.item))
        .then(
          (results) => batch.forEach((w, i) => w.resolve(results[i]!)),
          (err) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          inFlight--;
          schedule();
        });
    }
  };

  const schedule = () => {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    // setImmediate lets every job that is finishing in this turn of the event loop join the batch.
    setImmediate(pump);
  };

  return {
    run(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
