// The layer check (`npm run lint:layers`): the layer table of docs/architecture.md as dependency-cruiser rules.
// Invariants: imports only point down the table (or sideways inside one layer), the import graph has no cycle
// (type-only imports count: tsPreCompilationDeps), and every file under src/ belongs to exactly one layer.
// Change LAYERS and the table in docs/architecture.md together.

/** @typedef {{ name: string, path: string, may: string[] }} Layer */
/** `may` names lower layers; `db:types` allows `import type` from src/db/ (the handle and row types), never its values. */
/** @type {Layer[]} */
const LAYERS = [
  { name: 'domain', path: '^src/domain/', may: [] },
  { name: 'chains', path: '^chains/', may: ['domain'] },
  { name: 'logger', path: '^src/(logger|log-fields)[.]ts$', may: [] },
  { name: 'db', path: '^src/db/', may: ['domain'] },
  { name: 'security', path: '^src/security/', may: ['domain', 'db:types'] },
  { name: 'rates', path: '^src/rates/', may: ['domain'] },
  { name: 'signer', path: '^src/signer/', may: ['chains'] },
  { name: 'ledger', path: '^src/ledger/', may: ['domain', 'db', 'security'] },
  // Instruments (the registry and the metrics each service records) sit low, so services can record; the collectors
  // that read the database, queues and wallets at scrape time sit with the entry points' helpers.
  { name: 'metrics', path: '^src/metrics/(registry|http|rpc|webhooks|watcher|server|sweeps|reconcile)[.]ts$', may: ['domain', 'chains'] },
  { name: 'jobs', path: '^src/jobs/', may: ['domain', 'db:types', 'ledger', 'logger'] },
  { name: 'webhooks', path: '^src/webhooks/', may: ['domain', 'db', 'security', 'logger', 'metrics'] },
  { name: 'api', path: '^src/api/', may: ['domain', 'db:types', 'ledger', 'rates', 'security', 'logger', 'metrics'] },
  { name: 'watcher', path: '^src/watcher/', may: ['domain', 'db:types', 'ledger', 'chains', 'logger', 'metrics'] },
  { name: 'reconcile', path: '^src/reconcile/', may: ['domain', 'db:types', 'ledger', 'chains', 'logger', 'metrics'] },
  { name: 'outbound', path: '^src/outbound/', may: ['domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger'] },
  { name: 'payouts', path: '^src/payouts/', may: ['domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound'] },
  {
    name: 'subscriptions',
    path: '^src/subscriptions/(?!page/)',
    may: ['domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound'],
  },
  {
    name: 'treasury',
    path: '^src/treasury/',
    may: ['domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound', 'rates', 'metrics'],
  },
  { name: 'checkout', path: '^src/checkout/', may: ['domain', 'db:types', 'ledger', 'chains', 'logger', 'api'] },
  {
    name: 'subscription-page',
    path: '^src/subscriptions/page/',
    may: ['domain', 'db:types', 'ledger', 'chains', 'logger', 'api', 'subscriptions'],
  },
  {
    name: 'metrics-collectors',
    path: '^src/metrics/(start|queues|ledger-collectors|hot-wallets)[.]ts$',
    may: ['domain', 'db', 'chains', 'jobs', 'webhooks', 'logger', 'metrics'],
  },
  { name: 'entry', path: '^src/(cli/|main[.]ts$|config[.]ts$)', may: ['*'] },
];

const OURS = '^(src|chains)/';
const byName = new Map(LAYERS.map((l) => [l.name, l]));
const pathOf = (name) => {
  const l = byName.get(name);
  if (!l) throw new Error(`.dependency-cruiser.cjs: unknown layer ${name}`);
  return l.path;
};

/** The "may import" column of docs/architecture.md's layer table (test/unit/layers.test.ts compares them). */
const mayText = (l) => l.may.map((m) => m.replace(/:types$/, ' (types only)')).join(', ') || 'nothing of ours';

const layerRules = LAYERS.filter((l) => !l.may.includes('*')).flatMap((l) => {
  const allowed = l.may.map((m) => pathOf(m.replace(/:types$/, '')));
  const from = { path: l.path };
  const rules = [
    {
      name: `layer-${l.name}`,
      severity: 'error',
      comment: `${l.name} may import: ${mayText(l)} (docs/architecture.md, Layers)`,
      from,
      to: { path: OURS, pathNot: [l.path, ...allowed] },
    },
  ];
  if (l.may.includes('db:types')) {
    rules.push({
      name: `layer-${l.name}-db-types-only`,
      severity: 'error',
      comment: `${l.name} may use src/db/'s types (the Kysely handle, row types) but none of its values`,
      from,
      to: { path: pathOf('db'), dependencyTypesNot: ['type-only'] },
    });
  }
  return rules;
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'The import graph has no cycle (docs/architecture.md, Layers)',
      from: { path: OURS },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'layer-unknown',
      severity: 'error',
      comment: 'Every file under src/ belongs to a layer of docs/architecture.md: add its folder to the table and to LAYERS',
      from: { path: '^src/', pathNot: LAYERS.map((l) => l.path) },
      to: {},
    },
    {
      name: 'chain-family-outside-adapters',
      severity: 'error',
      comment:
        'Only chains/, the signer, the adapter factory and the entry points name a chain family; the rest use chains/types.ts',
      from: { path: OURS, pathNot: ['^chains/', '^src/signer/', '^src/watcher/adapter-factory[.]ts$', pathOf('entry')] },
      to: { path: '^chains/(evm|tron|solana)/' },
    },
    {
      name: 'no-test-or-script-code',
      severity: 'error',
      comment: 'src/ and chains/ never import test/ or scripts/',
      from: { path: OURS },
      to: { path: '^(test|scripts)/' },
    },
  ],
  options: {
    includeOnly: '^(src|chains|test|scripts)/',
    doNotFollow: { path: ['node_modules', '^(test|scripts)/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
