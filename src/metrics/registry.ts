import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// The process's Prometheus registry (one per process: a process is one scrape target). Metrics are declared once by
// the module that owns them (declaring the same name again returns the same handle) and every label set is bounded:
// a label may list its allowed values (anything else is recorded as "other"), and each metric holds at most
// `maxSeries` label combinations (any further combination is recorded with every label "other"). Never put a
// merchant id, session id, address or raw URL into a label.

export type LabelValues<K extends string> = { readonly [P in K]: string };

export interface MetricDefinition<K extends string> {
  /** `stablepay_` + snake_case; counters end in `_total`, durations in `_seconds`. */
  name: string;
  help: string;
  labels: readonly K[];
  /** Closed label vocabularies: a value outside its list is recorded as "other". */
  values?: { readonly [P in K]?: readonly string[] };
  /** Distinct label combinations this metric may hold (default 500). */
  maxSeries?: number;
}

export interface CounterHandle<K extends string> {
  inc(labels: LabelValues<K>, by?: number): void;
  /** The series of `labels`, resolved once: for hot paths (cache it; no label lookup per call). */
  child(labels: LabelValues<K>): { inc(by?: number): void };
}

export interface GaugeHandle<K extends string> {
  set(labels: LabelValues<K>, value: number): void;
  inc(labels: LabelValues<K>, by?: number): void;
  dec(labels: LabelValues<K>, by?: number): void;
  /** Drops every series (a scrape-time collector resets before it sets what it just read). */
  reset(): void;
}

export interface HistogramHandle<K extends string> {
  observe(labels: LabelValues<K>, seconds: number): void;
  /** Starts a timer; calling the result records the elapsed seconds (labels may be completed at the end). */
  startTimer(labels?: Partial<LabelValues<K>>): (labels?: Partial<LabelValues<K>>) => number;
  /** The series of `labels`, resolved once: for hot paths (cache it; no label lookup per call). */
  child(labels: LabelValues<K>): { observe(seconds: number): void };
}

/** Runs on every scrape before the text is rendered; it sets gauges from what it reads (keep it cheap and indexed). */
export type ScrapeCollector = () => Promise<void>;

export const OTHER = 'other';
/** Seconds buckets for request and delivery latencies: 5 ms .. 30 s. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

type Kind = 'counter' | 'gauge' | 'histogram';

export class MetricsRegistry {
  readonly prom = new Registry();
  readonly #declared = new Map<string, { kind: Kind; labels: string; handle: unknown }>();
  readonly #collectors = new Map<string, ScrapeCollector>();
  readonly #collectorErrors: CounterHandle<'collector'>;
  #defaults = false;

  constructor() {
    this.#collectorErrors = this.counter({
      name: 'stablepay_metrics_collector_errors_total',
      help: 'Scrape-time collectors that failed or timed out (their gauges keep the previous value).',
      labels: ['collector'],
    });
  }

  counter<K extends string>(d: MetricDefinition<K>): CounterHandle<K> {
    return this.#declare(d, 'counter', () => {
      const c = new Counter<string>({ name: d.name, help: d.help, labelNames: [...d.labels], registers: [this.prom] });
      const bound = bounder(d);
      return { inc: (l: LabelValues<K>, by = 1) => c.inc(bound(l), by), child: (l: LabelValues<K>) => c.labels(bound(l)) };
    });
  }

  gauge<K extends string>(d: MetricDefinition<K>): GaugeHandle<K> {
    return this.#declare(d, 'gauge', () => {
      const g = new Gauge<string>({ name: d.name, help: d.help, labelNames: [...d.labels], registers: [this.prom] });
      const bound = bounder(d);
      return {
        set: (l: LabelValues<K>, v: number) => g.set(bound(l), v),
        inc: (l: LabelValues<K>, by = 1) => g.inc(bound(l), by),
        dec: (l: LabelValues<K>, by = 1) => g.dec(bound(l), by),
        reset: () => {
          g.reset();
          bound.forget();
        },
      };
    });
  }

  histogram<K extends string>(d: MetricDefinition<K> & { buckets?: readonly number[] }): HistogramHandle<K> {
    return this.#declare(d, 'histogram', () => {
      const h = new Histogram<string>({
        name: d.name,
        help: d.help,
        labelNames: [...d.labels],
        buckets: [...(d.buckets ?? LATENCY_BUCKETS)],
        registers: [this.prom],
      });
      const bound = bounder(d);
      return {
        observe: (l: LabelValues<K>, s: number) => h.observe(bound(l), s),
        child: (l: LabelValues<K>) => h.labels(bound(l)),
        startTimer: (start?: Partial<LabelValues<K>>) => {
          const t0 = process.hrtime.bigint();
          return (end?: Partial<LabelValues<K>>) => {
            const s = Number(process.hrtime.bigint() - t0) / 1e9;
            h.observe(bound({ ...start, ...end } as LabelValues<K>), s);
            return s;
          };
        },
      };
    });
  }

  /** Registers a scrape-time collector under a unique name; the returned function unregisters it. */
  onScrape(name: string, collect: ScrapeCollector): () => void {
    this.#collectors.set(name, collect);
    return () => {
      if (this.#collectors.get(name) === collect) this.#collectors.delete(name);
    };
  }

  /** Node.js process metrics (CPU, memory, event-loop lag, GC), once per process. */
  enableProcessMetrics(): void {
    if (this.#defaults) return;
    this.#defaults = true;
    collectDefaultMetrics({ register: this.prom, prefix: 'stablepay_' });
  }

  /** Runs the collectors (each bounded by `timeoutMs`) and renders the exposition text. */
  async render(timeoutMs = 5000): Promise<string> {
    await Promise.all(
      [...this.#collectors].map(async ([name, collect]) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            collect(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
            }),
          ]);
        } catch {
          this.#collectorErrors.inc({ collector: name });
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return this.prom.metrics();
  }

  get contentType(): string {
    return this.prom.contentType;
  }

  #declare<H>(d: MetricDefinition<string>, kind: Kind, make: () => H): H {
    if (!/^stablepay_[a-z0-9_]+$/.test(d.name)) throw new Error(`metric name ${d.name}: must be stablepay_ + snake_case`);
    const labels = d.labels.join(',');
    const seen = this.#declared.get(d.name);
    if (seen) {
      if (seen.kind !== kind || seen.labels !== labels) throw new Error(`metric ${d.name} declared twice with different kinds or labels`);
      return seen.handle as H;
    }
    const handle = make();
    this.#declared.set(d.name, { kind, labels, handle });
    return handle;
  }
}

/** Maps label values into the metric's bounded vocabulary (see the file comment). */
function bounder<K extends string>(d: MetricDefinition<K>): ((l: LabelValues<K>) => Record<string, string>) & { forget(): void } {
  const allowed = new Map<string, Set<string>>();
  for (const k of d.labels) {
    const v = d.values?.[k];
    if (v) allowed.set(k, new Set(v));
  }
  const max = d.maxSeries ?? 500;
  let seen = new Set<string>();
  const f = (l: LabelValues<K>): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const k of d.labels) {
      const v = String(l[k] ?? '');
      const set = allowed.get(k);
      out[k] = set && !set.has(v) ? OTHER : v;
    }
    if (d.labels.length === 0) return out;
    const key = d.labels.map((k) => out[k]).join('\u0000');
    if (seen.has(key)) return out;
    if (seen.size >= max) return Object.fromEntries(d.labels.map((k) => [k, OTHER]));
    seen.add(key);
    return out;
  };
  return Object.assign(f, {
    forget: () => {
      seen = new Set();
    },
  });
}

/** The process's registry. */
export const metrics = new MetricsRegistry();
