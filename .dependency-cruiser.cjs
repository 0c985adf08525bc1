// The layer check (`npm run lint:layers`): the layer table of docs/architecture.md as dependency-cruiser rules.
// Invariants: imports only point down the table (or sideways inside one layer), the import graph has no cycle
// (type-only imports count: tsPreCompilationDeps), and every file under src/ belongs to exactly one layer.
// Change LAYERS and the table in docs/architecture.md together.

/** @typedef {{ name: string, path: string, may: string[] }} Layer */
/** `may` names lower layers; `db:types` allows `import type` from src/db/ (the handle and row types), never its values. */
/** @type {Layer[]} */
const LAYERS = [
  { name: 'vocabulary', path: '^chains/((vocabulary|registry)[.]ts$|networks/)', may: [] },
  { name: 'domain', path: '^src/domain/', may: ['vocabulary'] },
  { name: 'chains', path: '^chains/(?!(vocabulary|registry)[.]ts$|networks/)', may: ['vocabulary'] },
  { name: 'logger', path: '^src/(logger|log-fields)[.]ts$', may: [] },
  { name: 'db', path: '^src/db/', may: ['vocabulary', 'domain'] },
  { name: 'security', path: '^src/security/', may: ['vocabulary', 'domain', 'db:types'] },
  { name: 'rates', path: '^src/rates/', may: ['vocabulary', 'domain'] },
  { name: 'signer', path: '^src/signer/', may: ['vocabulary', 'domain', 'chains'] },
  { name: 'ledger', path: '^src/ledger/', may: ['vocabulary', 'domain', 'db', 'security'] },
  // Instruments (the registry and the metrics each service records) sit low, so services can record; the collectors
  // that read the database, queues and wallets at scrape time sit with the entry points' helpers.
  { name: 'metrics', path: '^src/metrics/', may: ['vocabulary', 'domain', 'chains'] },
  { name: 'jobs', path: '^src/jobs/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'logger'] },
  { name: 'webhooks', path: '^src/webhooks/', may: ['vocabulary', 'domain', 'db', 'security', 'logger', 'metrics'] },
  { name: 'api', path: '^src/api/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'rates', 'security', 'logger', 'metrics'] },
  { name: 'watcher', path: '^src/watcher/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'logger', 'metrics'] },
  { name: 'reconcile', path: '^src/reconcile/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'logger', 'metrics'] },
  { name: 'outbound', path: '^src/outbound/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'metrics'] },
  { name: 'refunds', path: '^src/refunds/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound'] },
  { name: 'payments', path: '^src/payments/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound'] },
  {
    name: 'subscriptions',
    path: '^src/subscriptions/(?!page/)',
    may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound'],
  },
  {
    name: 'treasury',
    path: '^src/treasury/',
    may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'signer', 'jobs', 'logger', 'outbound', 'rates', 'metrics'],
  },
  { name: 'checkout', path: '^src/checkout/', may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'logger', 'api'] },
  {
    name: 'subscription-page',
    path: '^src/subscriptions/page/',
    may: ['vocabulary', 'domain', 'db:types', 'ledger', 'chains', 'logger', 'api', 'subscriptions'],
  },
  {
    name: 'metrics-collectors',
    path: '^src/metrics-collectors/',
    may: ['vocabulary', 'domain', 'db', 'chains', 'jobs', 'webhooks', 'logger', 'metrics'],
  },
  {
    name: 'operations',
    path: '^src/operations/',
    may: [
      'vocabulary',
      'domain',
      'db:types',
      'ledger',
      'chains',
      'security',
      'rates',
      'signer',
      'jobs',
      'logger',
      'metrics',
      'webhooks',
      'outbound',
      'refunds',
      'payments',
      'subscriptions',
      'treasury',
      'reconcile',
    ],
  },
  // The signer role's server (docs/signer.md): the only process holding the seed; it reads the ledger to justify what
  // it signs and decodes each chain family's transactions itself.
  {
    name: 'signer-service',
    path: '^src/signer-service/',
    may: ['vocabulary', 'domain', 'db', 'ledger', 'chains', 'signer', 'logger', 'metrics'],
  },
  // The console's single-page app (browser code, built by Vite): it imports only the console's contract types.
  { name: 'console-ui', path: '^src/console/ui/', may: ['console'] },
  {
    name: 'console',
    path: '^src/console/(?!ui/)',
    may: ['vocabulary', 'domain', 'db:types', 'ledger', 'security', 'logger', 'metrics', 'api', 'operations'],
  },
  { name: 'entry', path: '^src/(cli/|start/|main[.]ts$|config[.]ts$)', may: ['*'] },
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

// The rooms of the ledger (docs/architecture.md, "Rooms of the ledger"): inside src/ledger/, imports only point down
// this list or stay inside one room. `may` names lower rooms.
/** @type {Layer[]} */
const LEDGER_ROOMS = [
  { name: 'core', path: '^src/ledger/core/', may: [] },
  { name: 'journal', path: '^src/ledger/journal/', may: ['core'] },
  { name: 'outbound', path: '^src/ledger/outbound/', may: ['core', 'journal'] },
  { name: 'merchants', path: '^src/ledger/merchants/', may: ['core'] },
  { name: 'payments', path: '^src/ledger/payments/', may: ['core', 'journal', 'outbound'] },
  { name: 'refunds', path: '^src/ledger/refunds/', may: ['core', 'journal', 'outbound'] },
  { name: 'treasury', path: '^src/ledger/treasury/', may: ['core', 'journal', 'outbound'] },
  { name: 'subscriptions', path: '^src/ledger/subscriptions/', may: ['core', 'journal', 'outbound', 'payments'] },
  { name: 'exports', path: '^src/ledger/exports/', may: ['core'] },
  { name: 'audit', path: '^src/ledger/audit/', may: [] },
  { name: 'console', path: '^src/ledger/console/', may: ['core'] },
  { name: 'signer', path: '^src/ledger/signer/', may: [] },
  { name: 'retention', path: '^src/ledger/retention/', may: [] },
];
const roomByName = new Map(LEDGER_ROOMS.map((r) => [r.name, r]));
const roomText = (r) => r.may.join(', ') || 'no other room';
const roomRules = [
  ...LEDGER_ROOMS.map((r) => ({
    name: `room-${r.name}`,
    severity: 'error',
    comment: `ledger room ${r.name} may import: ${roomText(r)} (docs/architecture.md, Rooms of the ledger)`,
    from: { path: r.path },
    to: { path: '^src/ledger/', pathNot: [r.path, ...r.may.map((m) => roomByName.get(m).path)] },
  })),
  {
    name: 'room-unknown',
    severity: 'error',
    comment: 'Every file of src/ledger/ lives in a room of docs/architecture.md: add its folder to LEDGER_ROOMS',
    from: { path: '^src/ledger/', pathNot: LEDGER_ROOMS.map((r) => r.path) },
    to: {},
  },
];

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
    ...roomRules,
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
        'Only chains/, the signer (and its service, which decodes what it signs), the adapter factory and the entry points name a chain family; the rest use chains/types.ts',
      from: { path: OURS, pathNot: ['^chains/', '^src/signer/', '^src/signer-service/', '^src/watcher/adapter-factory[.]ts$', pathOf('entry')] },
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
