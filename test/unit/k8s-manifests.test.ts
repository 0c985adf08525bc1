import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadTronExtraSettings } from '../../chains/tron/config.js';
import { type ManifestDoc, parseManifests } from '../../scripts/tools/k8s/documents.js';
import { checkDocuments, validateManifests } from '../../scripts/tools/k8s/validate.js';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { configSchema, loadConfig } from '../../src/config.js';
import '../../src/metrics-collectors/queues.js';
import { metrics } from '../../src/metrics/registry.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { loadWatcherSettings } from '../../src/watcher/config.js';
import { byKindAndName, type ContainerView, containerViews, keysOf } from '../support/k8s-env.js';

// deploy/kubernetes/ (docs/deploy.md, "Kubernetes"): (a) the manifests pass the validator of `npm run k8s:validate`;
// (b) broken manifests fail it, each with its reason; (c) the manifests cannot drift from the service's configuration:
// every variable they set is one the service reads, every required one reaches every pod, and each pod's resolved
// environment (placeholders filled) is a configuration the service accepts, with the role, networks and keys the
// manifests promise. Also: probes on the real health endpoints, the Dockerfile's user, the worker HPA's metric.

const ROOT = 'deploy/kubernetes';
const report = validateManifests(ROOT);
const docs = report.docs;
const views = containerViews(docs);
const view = (workload: string): ContainerView => {
  const v = views.find((x) => x.workload === workload);
  if (!v) throw new Error(`no ${workload} in ${ROOT}`);
  return v;
};
const NETWORKS = ['ethereum', 'bsc', 'tron', 'solana'] as const;
const MNEMONIC = 'test test test test test test test test test test test junk';
// biome-ignore lint/suspicious/noExplicitAny: the tests below break arbitrary fields of parsed manifests
type Editable = Record<string, any>;
const tmp = mkdtempSync(join(tmpdir(), 'sp-k8s-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Variables of README.md's configuration table, `<NET>`/`<MODE>` and `_SUFFIX` continuations expanded. */
function readmeVariables(): Set<string> {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf('\n## Configuration');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cell = [...line.split(' | ')[0]!.matchAll(/`([A-Z0-9_<>]+)`/g)].map((m) => m[1]!);
    const head = cell[0]!;
    const stem = head.includes('>_') ? head.slice(0, head.lastIndexOf('>_') + 2) : '';
    for (const n of cell.map((c, i) => (i > 0 && c.startsWith('_') && stem ? `${stem}${c.slice(1)}` : c))) {
      for (const net of n.includes('<NET>') ? NETWORKS.map((x) => x.toUpperCase()) : ['']) {
        for (const mode of n.includes('<MODE>') ? ['LIVE', 'TEST'] : ['']) names.add(n.replace('<NET>', net).replace('<MODE>', mode));
      }
    }
  }
  return names;
}

/** The template's `<...>` placeholders replaced by values of the right shape, as an operator fills them. */
function filled(env: Record<string, string>): Record<string, string> {
  const samples: Array<[RegExp, string]> = [
    [/^MASTER_KEY$/, '5a'.repeat(32)],
    [/^DATABASE_URL$/, 'postgres://stablepay:pw@postgres.db.svc:5432/stablepay'],
    [/^READ_DATABASE_URL$/, 'postgres://stablepay:pw@postgres-replica.db.svc:5432/stablepay'],
    [/^REDIS_URL$/, 'redis://:pw@redis.db.svc:6379'],
    [/^HD_MNEMONIC$/, MNEMONIC],
    [/^HD_ACCOUNT_XPUBS$/, `60/0=${new MnemonicSigner(MNEMONIC).accountXpub(60, 0)}`],
    [/^CHAIN_[A-Z]+_(LIVE|TEST)_RPC_URL$/, 'https://rpc.provider.example/key'],
    [/^CHAIN_TRON_(LIVE|TEST)_API_KEY$/, 'trongrid-key'],
  ];
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => {
      if (!/<[^>]+>/.test(v)) return [k, v];
      const sample = samples.find(([re]) => re.test(k));
      if (!sample) throw new Error(`no sample value for the placeholder of ${k}`);
      return [k, sample[1]];
    }),
  );
}

/** A mounted Secret's placeholder filled as an operator fills it: the mnemonic, or a PEM file. */
function filledFile(path: string, content: string): string {
  if (!/^<[^>]+>$/.test(content)) return content;
  if (path.endsWith('/HD_MNEMONIC')) return MNEMONIC;
  if (/\.(crt|key)$/.test(path)) return `-----BEGIN ${path.endsWith('.key') ? 'PRIVATE KEY' : 'CERTIFICATE'}-----\nMA==\n-----END-----\n`;
  throw new Error(`no sample content for the placeholder file ${path}`);
}

/** The environment a process of this container starts with; mounted files are written under tmp and remapped. */
function processEnv(v: ContainerView): Record<string, string> {
  const env = filled(v.env);
  for (const [path, content] of Object.entries(v.files)) {
    const local = join(tmp, path.replaceAll('/', '_'));
    writeFileSync(local, filledFile(path, content));
    for (const [k, value] of Object.entries(env)) if (value === path) env[k] = local;
  }
  return env;
}

describe('deploy/kubernetes: the validator (npm run k8s:validate)', () => {
  it('passes the manifests: YAML, the Kubernetes schema of each kind, unknown fields, references, kustomizations', () => {
    expect(report.issues).toEqual([]);
    const count = (kind: string) => docs.filter((d) => d.body.kind === kind).length;
    expect(count('Deployment')).toBe(8); // api, worker, one watcher per network, console, signer
    expect(count('Service')).toBe(3); // api, console, signer
    expect(count('HorizontalPodAutoscaler')).toBe(2);
    expect(count('PodDisruptionBudget')).toBe(8);
    expect(count('NetworkPolicy')).toBe(2); // who may reach the console, who may reach the signer
    expect(count('Job')).toBe(1);
    expect(count('Kustomization')).toBe(3);
    expect(count('ConfigMap')).toBeGreaterThanOrEqual(6);
    expect(count('Secret')).toBeGreaterThanOrEqual(3);
    // Two watcher pods per network; the API and the workers are sized by their autoscalers alone.
    for (const n of NETWORKS) expect(byKindAndName(docs, 'Deployment', `stablepay-watcher-${n}`)).toMatchObject({ spec: { replicas: 2 } });
    for (const name of ['stablepay-api', 'stablepay-worker']) {
      expect(Object.keys(byKindAndName(docs, 'Deployment', name)?.spec ?? {})).toEqual(expect.arrayContaining(['selector', 'template']));
      expect(Object.keys(byKindAndName(docs, 'Deployment', name)?.spec ?? {})).not.toContain('replicas');
      expect(byKindAndName(docs, 'HorizontalPodAutoscaler', name)).toMatchObject({ spec: { minReplicas: 2 } });
    }
  });

  it('gives the seed to the signer pods alone, as a file, and lets only the worker pods reach the signer', () => {
    const deployments = docs.filter((d) => d.body.kind === 'Deployment').map((d) => d.body as Editable);
    const usesSeed = (d: Editable) => JSON.stringify(d).includes('"stablepay-signer"');
    expect(deployments.filter(usesSeed).map((d) => d.metadata.name)).toEqual(['stablepay-signer']);
    for (const d of deployments) expect(JSON.stringify(d)).not.toMatch(/"name":"HD_MNEMONIC"/);
    const signer = deployments.find((d) => d.metadata.name === 'stablepay-signer')!;
    const env = (d: Editable) =>
      Object.fromEntries((d.spec.template.spec.containers[0].env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    expect(env(signer)).toMatchObject({ ROLES: 'signer', HD_MNEMONIC_FILE: '/etc/stablepay/seed/HD_MNEMONIC' });
    const worker = deployments.find((d) => d.metadata.name === 'stablepay-worker')!;
    expect(env(worker).SIGNER_TLS_URL).toBe(env(signer).SIGNER_TLS_URL);
    expect(JSON.stringify(worker)).toContain('stablepay-signer-client-tls');
    expect(JSON.stringify(worker)).not.toContain('"stablepay-signer-tls"');
    const policy = byKindAndName(docs, 'NetworkPolicy', 'stablepay-signer') as Editable;
    expect(policy.spec.podSelector.matchLabels).toEqual(signer.spec.selector.matchLabels);
    expect(policy.spec.ingress).toEqual([
      { from: [{ podSelector: { matchLabels: worker.spec.selector.matchLabels } }], ports: [{ port: 'signer' }] },
      { ports: [{ port: 'metrics' }] },
    ]);
  });

  it('fails broken manifests, each with its reason', { timeout: 240_000 }, () => {
    const broken = (file: string, kind: string, name: string, change: (b: Editable) => void): ManifestDoc[] =>
      docs.map((d) => {
        if (d.file !== file || d.body.kind !== kind || (d.body.metadata as { name?: string })?.name !== name) return d;
        const body = structuredClone(d.body) as Editable;
        change(body);
        return { ...d, body };
      });
    const issuesOf = (changed: ManifestDoc[]) => checkDocuments(changed, ROOT).map((i) => `${i.where}: ${i.message}`);

    const replicas = issuesOf(broken('app/api.yaml', 'Deployment', 'stablepay-api', (b) => (b.spec.replicas = '2')));
    expect(replicas).toEqual(['app/api.yaml #1 (Deployment/stablepay-api): /spec/replicas must be integer {"type":"integer"}']);

    const unknown = issuesOf(
      broken('app/worker.yaml', 'Deployment', 'stablepay-worker', (b) => {
        b.spec.template.spec.containers[0].readinesProbe = b.spec.template.spec.containers[0].livenessProbe;
      }),
    );
    expect(unknown).toEqual([
      'app/worker.yaml #1 (Deployment/stablepay-worker): /spec/template/spec/containers/0/readinesProbe: unknown field (IContainer has no "readinesProbe")',
    ]);

    const required = issuesOf(
      broken('app/api.yaml', 'HorizontalPodAutoscaler', 'stablepay-api', (b) => {
        b.spec.metrics[0].resource.target.averageUtilization = '70%';
        delete b.spec.scaleTargetRef.kind;
      }),
    );
    const hpa = 'app/api.yaml #3 (HorizontalPodAutoscaler/stablepay-api)';
    expect(required).toEqual([
      `${hpa}: /spec/metrics/0/resource/target/averageUtilization must be integer {"type":"integer"}`,
      `${hpa}: /spec/scaleTargetRef must have required property kind {"missingProperty":"kind"}`,
      `${hpa}: scaleTargetRef undefined/stablepay-api is not defined`,
    ]);

    const missingRef = issuesOf(
      broken('app/watchers.yaml', 'Deployment', 'stablepay-watcher-tron', (b) => {
        b.spec.template.spec.containers[0].envFrom[1].configMapRef.name = 'stablepay-chain-tronn';
      }),
    );
    expect(missingRef).toEqual([
      'app/watchers.yaml #5 (Deployment/stablepay-watcher-tron): container watcher envFrom: ConfigMap "stablepay-chain-tronn" is not defined',
    ]);

    const selector = issuesOf(
      broken('app/api.yaml', 'Service', 'stablepay-api', (b) => (b.spec.selector['app.kubernetes.io/component'] = 'apii')),
    );
    expect(selector).toEqual(['app/api.yaml #2 (Service/stablepay-api): spec.selector matches no pod template']);

    const crd: ManifestDoc = {
      file: 'app/api.yaml',
      index: 9,
      body: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'x' }, spec: {} },
    };
    expect(issuesOf([...docs, crd])).toEqual([
      'app/api.yaml #10 (ServiceMonitor/x): no Kubernetes schema for monitoring.coreos.com/v1 ServiceMonitor',
    ]);
  });

  it('fails YAML errors and a kustomization that leaves a manifest out or lists a missing one', { timeout: 240_000 }, () => {
    expect(
      parseManifests('a: 1\na: 2\n', 'x.yaml')
        .issues.map((i) => i.message)
        .join(),
    ).toMatch(/unique/i);
    expect(parseManifests('- 1\n- 2\n', 'x.yaml').issues).toEqual([{ where: 'x.yaml #1', message: 'a manifest must be a mapping' }]);

    const copy = join(tmp, 'kustomize');
    cpSync(ROOT, copy, { recursive: true });
    writeFileSync(join(copy, 'app/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n');
    const k = join(copy, 'migrate/kustomization.yaml');
    writeFileSync(
      k,
      readFileSync(k, 'utf8').replace('  - job.yaml', '  - job.yaml\n  - gone.yaml').replace('newTag: "0.1.0"', 'newTag: "0.0.9"'),
    );
    const messages = validateManifests(copy).issues.map((i) => i.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'app/extra.yaml is not listed in resources',
        'resource gone.yaml is not a file in migrate/',
        expect.stringMatching(/^the image differs between kustomizations/),
      ]),
    );
    expect(messages).toHaveLength(3);
  });

  it('exits 1 naming every issue, run as npm run k8s:validate runs it', { timeout: 240_000 }, () => {
    const copy = join(tmp, 'cli');
    cpSync(ROOT, copy, { recursive: true });
    const api = join(copy, 'app/api.yaml');
    writeFileSync(api, readFileSync(api, 'utf8').replace('readinessProbe:', 'readinesProbe:'));
    const watchers = join(copy, 'app/watchers.yaml');
    writeFileSync(watchers, readFileSync(watchers, 'utf8').replace('  replicas: 2\n', '  replicas: "2"\n'));
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/tools/validate-k8s.ts', copy], {
      encoding: 'utf8',
      timeout: 230_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('k8s:validate FAILED: 2 issue(s)');
    expect(run.stderr).toContain('app/watchers.yaml #1 (Deployment/stablepay-watcher-ethereum): /spec/replicas must be integer');
    expect(run.stderr).toContain(
      'app/api.yaml #1 (Deployment/stablepay-api): /spec/template/spec/containers/0/readinesProbe: unknown field',
    );
  });
});

describe('deploy/kubernetes: configuration cannot drift from src/config.ts', () => {
  it("sets only variables the service reads: src/config.ts's schema or README's configuration table", () => {
    const known = new Set([...Object.keys(configSchema.shape), ...readmeVariables()]);
    expect(known.has('HD_ACCOUNT_XPUBS') && known.has('CHAIN_TRON_LIVE_FULL_HOST')).toBe(true);
    const unknown = views.flatMap((v) => v.sources.filter((s) => !known.has(s.name)).map((s) => `${v.workload}: ${s.name} (${s.from})`));
    expect(unknown).toEqual([]);
    expect(views.length).toBe(9);
  });

  it('gives every pod each required variable, and each one whose default points at this machine', () => {
    const shape = configSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>;
    const required = Object.keys(shape).filter((k) => !shape[k]!.safeParse(undefined).success);
    const local = Object.keys(shape).filter((k) => /127\.0\.0\.1|localhost/.test(String(shape[k]!.safeParse(undefined).data ?? '')));
    expect(required).toEqual(['MASTER_KEY']);
    expect(local.sort()).toEqual(['CONSOLE_HOST', 'DATABASE_URL', 'METRICS_HOST', 'PUBLIC_BASE_URL', 'REDIS_URL']);
    // The console's listen address matters only in a pod that runs the console role.
    const runs = (v: (typeof views)[number], k: string) => k !== 'CONSOLE_HOST' || String(v.env.ROLES ?? '').includes('console');
    const missing = views.flatMap((v) =>
      [...required, ...local].filter((k) => runs(v, k) && !(k in v.env)).map((k) => `${v.workload}: ${k}`),
    );
    expect(missing).toEqual([]);
  });

  it("resolves, placeholders filled, to a configuration the service accepts with each pod's role, networks and keys", () => {
    const expectations: Array<[string, string[], string[], string]> = [
      ['Deployment/stablepay-api', ['api'], [...NETWORKS], 'watch-only'],
      // The workers hold no key: they ask the signer (mutual TLS), the only pods given the seed (as a file).
      ['Deployment/stablepay-worker', ['worker'], [...NETWORKS], 'remote'],
      ['Deployment/stablepay-signer', ['signer'], [...NETWORKS], 'signer'],
      ...NETWORKS.map((n): [string, string[], string[], string] => [`Deployment/stablepay-watcher-${n}`, ['watcher'], [n], 'none']),
      // The console plans sweeps (public keys); the workers send them.
      ['Deployment/stablepay-console', ['console'], [...NETWORKS], 'watch-only'],
    ];
    for (const [workload, roles, networks, keys] of expectations) {
      const env = processEnv(view(workload));
      const config = loadConfig(env);
      expect({ workload, roles: config.ROLES, migrate: config.MIGRATE_ON_START }).toEqual({ workload, roles, migrate: false });
      expect(config.METRICS_HOST).toBe('0.0.0.0');
      expect(config.DATABASE_URL).toMatch(/^postgres:\/\/.+@postgres\.db\.svc/);
      const chains = loadWatcherSettings(env).chains;
      expect({ workload, networks: chains.map((c) => c.network).sort() }).toEqual({ workload, networks: [...networks].sort() });
      const signerRole = config.ROLES.includes('signer');
      expect({ workload, keys: keyMaterialFromEnv(env, { signerRole }).kind }).toEqual({ workload, keys });
      if (networks.includes('tron')) expect(loadTronExtraSettings(env, 'live').fullHost).toBe('https://api.trongrid.io');
    }
    // No pod has the mnemonic in its environment; only the signer mounts it. The migration Job has what the compiled
    // CLI's loadConfig needs.
    expect(views.filter((v) => 'HD_MNEMONIC' in v.env || 'HD_MNEMONIC_FILE' in v.env).map((v) => v.workload)).toEqual([
      'Deployment/stablepay-signer',
    ]);
    expect(Object.keys(view('Deployment/stablepay-signer').files)).toContain(view('Deployment/stablepay-signer').env.HD_MNEMONIC_FILE);
    // The signer reads the ledger through its read-only role (stablepay-signer-db wins over stablepay-secrets).
    expect(
      view('Deployment/stablepay-signer')
        .sources.filter((x) => x.name === 'DATABASE_URL')
        .map((x) => x.from),
    ).toEqual(['Secret/stablepay-secrets', 'Secret/stablepay-signer-db']);
    expect(view('Deployment/stablepay-signer').env.DATABASE_URL).toMatch(/^<postgres:\/\/stablepay_signer:/);
    // The read replica (issue 38): the API and the console read it for reports; nothing else is given it.
    expect(views.filter((v) => 'READ_DATABASE_URL' in v.env).map((v) => v.workload)).toEqual([
      'Deployment/stablepay-api',
      'Deployment/stablepay-console',
    ]);
    const job = view('Job/stablepay-migrate');
    expect(job.container.command).toEqual(['node', 'dist/src/cli/index.js', 'migrate']);
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts['cli:dist']).toBe('node dist/src/cli/index.js');
    expect(() => loadConfig(processEnv(job))).not.toThrow();
  });

  it('ships Secrets with placeholders only, and unfilled they stop every process, naming the variable', () => {
    const secrets = docs.filter((d) => d.body.kind === 'Secret');
    for (const s of secrets) {
      expect(s.body.data).toBeUndefined();
      for (const [k, v] of Object.entries(keysOf(s.body))) expect({ k, v }).toEqual({ k, v: expect.stringMatching(/^<[^>]+>$/) });
    }
    for (const v of views) {
      expect(() => loadConfig(v.env)).toThrow(/^ {2}MASTER_KEY: must be 64 hex characters/m);
      expect(() => loadConfig(v.env)).toThrow(/^ {2}DATABASE_URL: Invalid URL/m);
      expect(() => loadConfig(v.env)).toThrow(/^ {2}REDIS_URL: Invalid URL/m);
    }
    expect(() => keyMaterialFromEnv(view('Deployment/stablepay-api').env)).toThrow(/HD_ACCOUNT_XPUBS entries must look like/);
    expect(() => loadWatcherSettings(view('Deployment/stablepay-watcher-bsc').env)).toThrow(
      /CHAIN_BSC_LIVE_RPC_URL must be an http\(s\) URL/,
    );
  });
});

describe('deploy/kubernetes: probes, ports, security, autoscaling', () => {
  it('probes the real health endpoints: the API on PORT, the others on the metrics listener', async () => {
    const openapi = buildOpenApiDocument() as { paths: Record<string, unknown> };
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0 });
    try {
      for (const v of views.filter((x) => x.workload.startsWith('Deployment/'))) {
        const env = processEnv(v);
        const config = loadConfig(env);
        const ports = Object.fromEntries(
          (v.container.ports as Array<{ name: string; containerPort: number }>).map((p) => [p.name, p.containerPort]),
        );
        expect({ w: v.workload, metrics: ports.metrics }).toEqual({ w: v.workload, metrics: config.METRICS_PORT });
        expect(v.annotations['prometheus.io/port']).toBe(String(config.METRICS_PORT));
        const probes = ['startupProbe', 'livenessProbe', 'readinessProbe']
          .map((p) => (v.container[p] as { httpGet?: { path: string; port: string } } | undefined)?.httpGet)
          .filter((g) => g !== undefined);
        expect(probes.length).toBeGreaterThanOrEqual(2);
        for (const probe of probes) {
          if (probe.port === 'http') {
            expect(config.ROLES).toContain('api');
            expect(ports.http).toBe(config.PORT);
            expect(Object.keys(openapi.paths)).toContain(probe.path);
          } else if (probe.port === 'console') {
            // The console's own listener (CONSOLE_HOST:CONSOLE_PORT, not under a path of the API's), on every interface.
            expect(config.ROLES).toEqual(['console']);
            expect(config.CONSOLE_PATH).toBeUndefined();
            expect(config.CONSOLE_HOST).toBe('0.0.0.0');
            expect(ports.console).toBe(config.CONSOLE_PORT);
            // Served by src/console/server.ts: k8s-readonly-root.test.ts asks it of the running service.
            expect(probe.path).toBe('/healthz');
          } else {
            expect(probe.port).toBe('metrics');
            const res = await fetch(`http://127.0.0.1:${server.port}${probe.path}`);
            expect({ w: v.workload, path: probe.path, status: res.status }).toEqual({ w: v.workload, path: probe.path, status: 200 });
            await res.text();
          }
        }
      }
      const api = view('Deployment/stablepay-api').container as { readinessProbe: { httpGet: { path: string } } };
      expect(api.readinessProbe.httpGet.path).toBe('/readyz');
    } finally {
      await server.close();
    }
  });

  it('lets only labelled pods reach the console port: its NetworkPolicy selects the console pods and nothing else', () => {
    const policy = byKindAndName(docs, 'NetworkPolicy', 'stablepay-console') as Editable;
    const consolePods = byKindAndName(docs, 'Deployment', 'stablepay-console') as Editable;
    expect(policy.spec.podSelector.matchLabels).toEqual(consolePods.spec.template.metadata.labels);
    for (const d of docs.filter((x) => x.body.kind === 'Deployment').map((x) => x.body as Editable)) {
      if (d.metadata.name === 'stablepay-console') continue;
      const labels = d.spec.template.metadata.labels as Record<string, string>;
      const selected = Object.entries(policy.spec.podSelector.matchLabels).every(([k, v]) => labels[k] === v);
      expect({ d: d.metadata.name, selected }).toEqual({ d: d.metadata.name, selected: false });
    }
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    const rules = policy.spec.ingress as Array<{ from?: unknown[]; ports: Array<{ port: string }> }>;
    const consoleRule = rules.filter((r) => r.ports.some((p) => p.port === 'console'));
    expect(consoleRule).toEqual([
      {
        from: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'stablepay.io/console-access': 'true' } } }],
        ports: [{ port: 'console' }],
      },
    ]);
    // Everything else open is the metrics port (Prometheus), as on every other pod.
    expect(rules.filter((r) => r !== consoleRule[0])).toEqual([{ ports: [{ port: 'metrics' }] }]);
  });

  it("runs every container as the Dockerfile's non-root user, without privileges, on a read-only root filesystem", () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    // node:20-bookworm-slim's `node` user is uid/gid 1000; runAsNonRoot needs the numeric id to verify it.
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim AS runtime$/m);
    expect([...dockerfile.matchAll(/^USER (\S+)$/gm)].map((m) => m[1])).toEqual(['node']);
    for (const v of views) {
      expect({ w: v.workload, pod: v.pod.securityContext }).toMatchObject({
        w: v.workload,
        pod: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 },
      });
      expect({ w: v.workload, c: v.container.securityContext }).toEqual({
        w: v.workload,
        c: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      });
      expect(v.pod.automountServiceAccountToken).toBe(false);
      const resources = v.container.resources as { requests?: object; limits?: { memory?: string } };
      expect(resources.requests).toBeDefined();
      expect(resources.limits?.memory).toBeDefined();
    }
  });

  it("scales workers on the prometheus-adapter rule's metric, over the queue gauge the service declares; promtool evaluates it", () => {
    const hpa = byKindAndName(docs, 'HorizontalPodAutoscaler', 'stablepay-worker') as {
      spec: { metrics: Array<{ type: string; external?: { metric: { name: string } } }> };
    };
    const external = hpa.spec.metrics.find((m) => m.type === 'External')!.external!.metric.name;
    const rule = (
      parse(readFileSync('deploy/prometheus-adapter/rules.yaml', 'utf8')) as {
        externalRules: Array<{ seriesQuery: string; name: { matches: string; as: string }; metricsQuery: string }>;
      }
    ).externalRules[0]!;
    expect(rule.name.as).toBe(external);
    const series = /^\^(\w+)\$$/.exec(rule.name.matches)![1]!;
    expect(rule.seriesQuery.startsWith(`${series}{`)).toBe(true);
    const gauge = metrics.prom.getSingleMetric(series) as unknown as { labelNames: string[] } | undefined;
    expect(gauge?.labelNames).toEqual(['queue', 'state']);

    // The adapter's template as it renders for the HPA's namespace, recorded and unit-tested by promtool: two worker
    // pods report the same depths; only ready jobs (waiting, prioritized) of this namespace count, once.
    const query = rule.metricsQuery.replaceAll('<<.Series>>', series).replaceAll('<<.LabelMatchers>>', 'namespace="stablepay"');
    expect(query).not.toContain('<<');
    const dir = mkdtempSync(join(tmp, 'adapter-'));
    writeFileSync(join(dir, 'rules.yml'), JSON.stringify({ groups: [{ name: 'adapter', rules: [{ record: external, expr: query }] }] }));
    const input = (pod: string, ns: string, queue: string, state: string, value: number) => ({
      series: `${series}{namespace="${ns}",pod="${pod}",queue="${queue}",state="${state}"}`,
      values: `${value}x2`,
    });
    const inputs = ['w1', 'w2'].flatMap((pod) => [
      input(pod, 'stablepay', 'payouts', 'waiting', 5),
      input(pod, 'stablepay', 'payouts', 'prioritized', 2),
      input(pod, 'stablepay', 'webhook-deliveries', 'waiting', 30),
      input(pod, 'stablepay', 'webhook-deliveries', 'delayed', 100),
      input(pod, 'stablepay', 'webhook-deliveries', 'active', 7),
      input(pod, 'other', 'payouts', 'waiting', 1000),
    ]);
    const tests = {
      rule_files: ['rules.yml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: inputs,
          promql_expr_test: [{ expr: external, eval_time: '1m', exp_samples: [{ labels: external, value: 37 }] }],
        },
      ],
    };
    writeFileSync(join(dir, 'test.yml'), JSON.stringify(tests));
    const out = execFileSync('promtool', ['test', 'rules', join(dir, 'test.yml')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toContain('SUCCESS');
  });
});
