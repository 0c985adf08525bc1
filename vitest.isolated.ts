// Test files that read the process-wide metrics registry (src/metrics/registry.ts: series counts, caps, values): they
// need a process of their own per file, so `npm test` runs them in a second pass with isolation on
// (vitest.isolated.config.ts). Every other file shares its worker's module cache (isolate: false in vitest.config.ts),
// which saves each file the import of the whole service (docs/testing.md, "Speed").
export const ISOLATED_FILES = [
  'test/integration/metrics.test.ts',
  'test/integration/metrics-prometheus.test.ts',
  'test/unit/metrics-healthz.test.ts',
  'test/integration/prometheus-rules.test.ts',
  'test/unit/metrics-registry.test.ts',
  'test/unit/metrics-rpc-observer.test.ts',
  'test/unit/metrics-unsupported-deposits.test.ts',
];
