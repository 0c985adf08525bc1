// Issue 37: a network is one registry entry. No file outside the registry (chains/registry.ts, chains/networks/) and the
// migrations names a network, so the next EVM network (Avalanche, Linea, ...) is a new entry plus its documentation
// (docs/chains.md, "Adding an EVM network"). The list of names comes from the registry itself: a new entry is checked
// from the day it is added. What counts as naming a network: test/unit/network-names-scan.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../../chains/registry.js';
import { type NetworkVocabulary, scanFile, scanScript, scanText } from './network-names-scan.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Where code lives (test/ is outside: tests name the networks they run). */
const SCANNED = ['src', 'chains', 'packages/client/src', 'scripts', 'deploy/prometheus'];
const EXTENSIONS = /\.(ts|tsx|js|mjs|cjs|ya?ml|json|css|html|sh)$/;

/** Where networks are named on purpose. */
const OWNERS = [
  'chains/registry.ts',
  'chains/networks/',
  // Migrations are history: they ran once, with the names of their day.
  'src/db/migrations/',
  // Generated from the OpenAPI document, whose enums follow NETWORK_IDS; test/unit/client-types.test.ts ties the two.
  'packages/client/src/types.ts',
  // promtool's unit tests of the rules: input series of a test, like test/ (test/integration/prometheus-rules.test.ts).
  'deploy/prometheus/alerts.test.yml',
];

// Test tooling, like test/ (which is not scanned): the simulator and the benchmarks drive particular networks' local
// chains and fakes by name (the TRON and Solana fakes' settings, a benchmark's sample network). Everything they
// choose among comes from the registry (scripts/sim/env/chain.ts); what they name is what they exercise.
const TEST_TOOLING = ['scripts/sim/', 'scripts/bench/'];

// Ids that are also ordinary words of code ("base units", base58, a base URL): checked as exact literals and where a
// network is compared or set, not as words inside identifiers and sentences (test/unit/network-names-scan.ts).
const ORDINARY_WORDS = ['base'];

const families = new Set<string>(NETWORKS.map((n) => n.family));
const VOCABULARY: NetworkVocabulary = {
  networkOnly: NETWORKS.map((n) => n.id).filter((id) => !families.has(id)),
  familyNamed: NETWORKS.map((n) => n.id).filter((id) => families.has(id)),
  ordinaryWords: NETWORKS.map((n) => n.id).filter((id) => ORDINARY_WORDS.includes(id)),
};

const under = (path: string, prefixes: readonly string[]): boolean => prefixes.some((p) => path === p || path.startsWith(p));

let listed: string[] | undefined;
function files(): string[] {
  if (listed) return listed;
  const out: string[] = [];
  for (const dir of SCANNED) {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (!e.isFile() || !EXTENSIONS.test(e.name)) continue;
      const path = relative(ROOT, join(e.parentPath, e.name));
      if (!under(path, OWNERS) && !path.includes('node_modules')) out.push(path);
    }
  }
  listed = out.sort();
  return listed;
}

function offences(paths: readonly string[]): string[] {
  return paths.flatMap((path) =>
    scanFile(path, readFileSync(join(ROOT, path), 'utf8'), VOCABULARY).map((o) => `${path}:${o.line}: ${o.why}: ${o.text}`),
  );
}

describe('a network is one registry entry (issue 37)', () => {
  it('knows every registry id, and splits the family-named ones off', () => {
    expect([...VOCABULARY.networkOnly, ...VOCABULARY.familyNamed].sort()).toEqual(NETWORKS.map((n) => n.id).sort());
    expect(VOCABULARY.familyNamed.length).toBeGreaterThan(0);
    expect(VOCABULARY.networkOnly.length).toBeGreaterThan(0);
    // Every ordinary word is a registry id (a stale one would silently relax nothing, but misleads the reader).
    expect(VOCABULARY.ordinaryWords).toEqual(ORDINARY_WORDS);
  });

  it('no file outside the registry and the migrations names a network', () => {
    const scanned = files().filter((p) => !under(p, TEST_TOOLING));
    expect(scanned.length).toBeGreaterThan(100);
    expect(offences(scanned)).toEqual([]);
  });

  it('prints what the test tooling names (scripts/sim, scripts/bench), and every listed prefix still exists', () => {
    const listed = files().filter((p) => under(p, TEST_TOOLING));
    const found = offences(listed);
    if (found.length > 0) console.log(`network names in the test tooling (${found.length}):\n${found.join('\n')}`);
    // Every allowlisted prefix must still match a file: a stale entry is removed, not kept.
    for (const prefix of TEST_TOOLING)
      expect(
        listed.some((p) => under(p, [prefix])),
        prefix,
      ).toBe(true);
  });
});

describe('the scanner (test/unit/network-names-scan.ts) tells naming a network from prose and families', () => {
  const v: NetworkVocabulary = {
    networkOnly: ['ethereum', 'bsc', 'base', 'linea'],
    familyNamed: ['tron', 'solana'],
    ordinaryWords: ['base'],
  };
  const flagged = (code: string, path = 'x.ts'): number => scanScript(path, code, v).length;

  it.each([
    ["const n = 'ethereum';"],
    ['const chains = { bsc: 1 };'],
    ["if (chain.network === 'linea') go();"],
    ['const bscAdapter = make();'],
    ['const ETHEREUM_CHAIN_ID = 1n;'],
    ['throw new Error(`--network must be one of ethereum, bsc (got ${n})`);'],
    ["const k = process.env.CHAIN_BASE_LIVE_RPC_URL ?? '';"],
    ["const k = env['CHAIN_TRON_LIVE_RPC_URL'];"],
    ["if (network === 'tron') x();"],
    ["if ('solana' !== w.network) x();"],
    ["const t = { network: 'solana', request };"],
    ["adapter.network = 'tron';"],
    ["class A { readonly network: NetworkId = 'solana'; }"],
    ["type T = { network: 'tron' };"],
    ["switch (row.network) { case 'tron': break; }"],
    ["const all = ['tron', 'solana'];"],
    ["const n = 'base';"],
    ["if (s.network !== 'base') x();"],
    ["const sql = `select 1 where s.network = 'solana'`;"],
    ["const sql = `select 'solana' as network`;"],
  ])('flags %s', (code) => {
    expect(flagged(code)).toBeGreaterThan(0);
  });

  it.each([
    ['// Ethereum, BSC and base fees are paid in the fee coin\nconst x = 1;'],
    ['/* on bsc the token has 18 decimals */ const y = 2;'],
    ["if (adapter.family === 'tron') x();"],
    ["switch (family) { case 'solana': break; }"],
    ["const families = ['evm', 'tron', 'solana'];"],
    ["const scheme = 'ethereum:';"],
    ['const js = String.raw`var eth = window.ethereum; if (!eth) throw new Error("no wallet");`;'],
    ["throw new Error('Install a wallet that supports Ethereum');"],
    ["const subscription = 1; const amountBase = 2n; const baseUrl = '';"],
    ["const encoded = Buffer.from(x).toString('base64');"],
    ['const base = 10n; const m = `${base} base units`;'],
  ])('passes %s', (code) => {
    expect(scanScript('x.ts', code, v)).toEqual([]);
  });

  it('reads PromQL and YAML comments', () => {
    expect(scanText('a.yml', 'expr: min(x{network=~"ethereum|bsc"}) < 0.005', v)).toHaveLength(2);
    expect(scanText('a.yml', 'expr: min(x{network="tron"}) < 30', v)).toHaveLength(1);
    expect(scanText('a.yml', '# on ethereum the fee coin is ETH\nexpr: x < on(network) y', v)).toEqual([]);
  });
});
