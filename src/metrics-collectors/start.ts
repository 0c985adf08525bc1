import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Redis } from 'ioredis';
import type { ChainAdapter, KeyDeriver } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { startHotWalletReader } from './hot-wallets.js';
import { registerLedgerCollectors } from './ledger-collectors.js';
import { registerQueueCollector } from './queues.js';
import { metrics } from '../metrics/registry.js';
import { startMetricsServer } from '../metrics/server.js';
import { startHeadSampler } from '../metrics/watcher.js';
// Declared in every process that serves metrics; set by the worker's scheduled reconcile (src/reconcile/).
import '../metrics/reconcile.js';

// Metrics of one service process. Every role serves /metrics on METRICS_HOST:METRICS_PORT with its own metrics
// (HTTP in the API role, watcher progress in the watcher role); the ledger, queue and hot-wallet gauges, which
// describe the whole deployment, come from processes running the worker role (alert rules take the max over them).

export interface ProcessMetricsOptions {
  host: string;
  /** null: no listener (METRICS_PORT=0 or off). */
  port: number | null;
  roles: readonly string[];
  db: Db;
  redis: Redis;
  redisPrefix: string;
  adapters: ChainRegistry;
  keys: KeyDeriver | null;
  headIntervalMs: number;
  balanceIntervalMs: number;
  log: { warn(obj: Record<string, unknown>, msg: string): void; error(obj: Record<string, unknown>, msg: string): void };
}

export interface ProcessMetrics {
  /** The port it listens on; undefined when disabled or when the port could not be bound. */
  port?: number;
  stop(): Promise<void>;
}

export async function startProcessMetrics(o: ProcessMetricsOptions): Promise<ProcessMetrics> {
  if (o.port === null) return { stop: async () => {} };
  let server;
  try {
    server = await startMetricsServer({ host: o.host, port: o.port });
  } catch (err) {
    // Monitoring never stops payments: the process runs on, and Prometheus sees this target down.
    o.log.error(
      { err: (err as Error).message, host: o.host, port: o.port },
      'metrics listener could not start (METRICS_PORT); this process exports no metrics',
    );
    return { stop: async () => {} };
  }
  metrics.enableProcessMetrics();
  const stops: Array<() => Promise<void> | void> = [];
  if (o.roles.includes('watcher') && o.adapters.size > 0) {
    const heads = startHeadSampler(o.adapters, o.headIntervalMs);
    stops.push(() => heads.stop());
  }
  if (o.roles.includes('worker')) {
    stops.push(registerLedgerCollectors(o.db), registerQueueCollector(o.redis, o.redisPrefix));
    if (o.keys && o.adapters.size > 0) {
      const reader = startHotWalletReader({
        db: o.db,
        adapters: o.adapters,
        keys: o.keys,
        intervalMs: o.balanceIntervalMs,
        onError: (err) => o.log.warn({ err: (err as Error).message }, 'hot-wallet balance read failed'),
      });
      stops.push(() => reader.stop());
    }
  }
  return {
    port: server.port,
    async stop() {
      for (const s of stops.reverse()) await s();
      await server.close();
    },
  };
}
