import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWatcherSettings } from '../../src/watcher/config.js';
import { startChainWatchers, type RunningWatchers } from '../../src/watcher/start.js';
import { freePort } from '../support/anvil.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';

// A real Prometheus (Debian's package; .ci/run installs it) scrapes the service every second and evaluates the
// shipped alert rules, with WatcherStalled's threshold cut from 120 s to 4 s (and `for` from 1m to 2s) so the test
// stays short; promtool's unit tests (deploy/prometheus/alerts.test.yml) cover the real thresholds.
let h: ServiceHarness;
let watchers: RunningWatchers | undefined;
let prometheus: ChildProcess | undefined;
let promUrl = '';
let dir = '';

interface PromAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}
const alerts = async (): Promise<PromAlert[]> =>
  ((await (await fetch(`${promUrl}/api/v1/alerts`)).json()) as { data: { alerts: PromAlert[] } }).data.alerts;
const query = async (q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> =>
  (
    (await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as {
      data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    }
  ).data.result;
const stalled = async () => (await alerts()).filter((a) => a.labels.alertname === 'WatcherStalled');

beforeAll(async () => {
  const metricsPort = await freePort();
  // The watcher runs beside the service (same process, same registry) so that it can be stopped on its own.
  h = await startServiceHarness({ extraEnv: { ROLES: 'api,worker', METRICS_PORT: String(metricsPort) } });
  watchers = await startChainWatchers({
    db: h.t.db,
    settings: loadWatcherSettings(h.env),
    log: { info() {}, warn() {}, error() {} },
    adapters: h.service.adapters,
  });

  dir = mkdtempSync(join(tmpdir(), 'sp-prometheus-'));
  const rules = readFileSync('deploy/prometheus/alerts.yml', 'utf8');
  const shipped = 'stablepay_watcher_last_commit_timestamp_seconds) > 120\n        for: 1m';
  if (!rules.includes(shipped)) throw new Error('WatcherStalled no longer reads as the test expects: update the test');
  writeFileSync(join(dir, 'alerts.yml'), rules.replace(shipped, 'stablepay_watcher_last_commit_timestamp_seconds) > 4\n        for: 2s'));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      'rule_files: [alerts.yml]',
      'scrape_configs:',
      `  - { job_name: stablepay, scrape_timeout: 1s, static_configs: [{ targets: ['127.0.0.1:${metricsPort}'] }] }`,
      '',
    ].join('\n'),
  );
  const promPort = await freePort();
  promUrl = `http://127.0.0.1:${promPort}`;
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await h.until(async () => ((await fetch(`${promUrl}/-/ready`).catch(() => null))?.status === 200 ? true : undefined), 30_000);
}, 90_000);

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  if (prometheus && prometheus.exitCode === null) await new Promise((r) => prometheus!.once('exit', r));
  await watchers?.stop();
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a real Prometheus with the shipped rules', () => {
  it('sees the watcher healthy, then fires WatcherStalled for its chain once the watcher is stopped', async () => {
    // Scraped, and the watcher commits: the series is fresh and the alert stays quiet across several evaluations.
    await h.until(async () => ((await query('up{job="stablepay"}'))[0]?.value[1] === '1' ? true : undefined), 20_000);
    await h.until(
      async () =>
        (await query('time() - stablepay_watcher_last_commit_timestamp_seconds{network="ethereum",mode="test"} < 3')).length === 1
          ? true
          : undefined,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 4000));
    expect(await stalled()).toEqual([]);

    await watchers!.stop();
    watchers = undefined;
    const stoppedAt = Date.now();
    const firing = await h.until(async () => {
      const a = (await stalled()).find((x) => x.state === 'firing');
      return a;
    }, 30_000);
    expect(firing.labels).toMatchObject({ alertname: 'WatcherStalled', network: 'ethereum', mode: 'test', severity: 'critical' });
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(4000); // not before the threshold
    // The process still answers: this is the stalled watcher, not a dead target.
    expect((await query('up{job="stablepay"}'))[0]?.value[1]).toBe('1');
  });
});
