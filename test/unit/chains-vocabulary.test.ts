// Structural rules of issue 14 (items 2, 3, 7), read from the source tree: chains are looked up through the typed
// registry only, nothing is installed into a module at start-up, the chain vocabulary is defined once, and chains/
// holds no file that only tests use.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STABLECOIN_EXPONENT, isNetworkId, isTokenSymbol } from '../../chains/vocabulary.js';
import { STABLECOINS, currencyExponent } from '../../src/domain/currency.js';
import { NETWORK_IDS, TOKEN_SYMBOLS } from '../../chains/types.js';
import { NETWORKS } from '../../chains/registry.js';

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith('.ts')) continue;
    const full = join(e.parentPath, e.name);
    out.push({ path: relative(ROOT, full), text: readFileSync(full, 'utf8') });
  }
  return out;
}

const production = [...sources('src'), ...sources('chains')];
const everything = [...production, ...sources('test'), ...sources('scripts')];

/** `path:line: text` of each line matching `re`, outside the files allowed. */
function offenders(files: Array<{ path: string; text: string }>, re: RegExp, allowed: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (allowed.includes(f.path)) continue;
    f.text.split('\n').forEach((line, i) => {
      if (re.test(line)) out.push(`${f.path}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

describe('chain lookups go through chains/chain-registry.ts', () => {
  it('no `${network}:${mode}` key is built outside the registry and the two persisted keys', () => {
    // The persisted keys: chain_cursors.chain_key (ledger/core/chain-ref.ts) and the deposit-address advisory lock
    // (ledger/payments/network-selection.ts), each defined once.
    const allowed = ['chains/chain-registry.ts', 'src/ledger/core/chain-ref.ts', 'src/ledger/payments/network-selection.ts'];
    expect(offenders(production, /\$\{[^}]*network[^}]*\}:\$\{[^}]*mode[^}]*\}/i, allowed)).toEqual([]);
  });

  it('no map of adapters keyed by text, anywhere (tests and scripts build registries too)', () => {
    expect(offenders(everything, /Map<string, [A-Za-z]*ChainAdapter>|new Map\(\[\['(ethereum|bsc|tron|solana):(test|live)'/)).toEqual([]);
    expect(offenders(everything, /adapters\.get\(`|adapters\.get\('[a-z]+:(test|live)'\)/)).toEqual([]);
  });

  it("src/ never scans an adapter's token list itself", () => {
    expect(offenders(sources('src'), /\.tokens\.(find|some|filter)\(/)).toEqual([]);
  });

  it('the hosted page asks the adapter for its payment link: no family switch or instanceof outside chains/', () => {
    expect(
      offenders(sources('src'), /instanceof (Evm|Tron|Solana)ChainAdapter|case '(evm|tron|solana)':/, ['src/watcher/adapter-factory.ts']),
    ).toEqual([]);
  });
});

describe('no module-level mutable installers', () => {
  it('no top-level let or var in src/ or chains/, and none of the old installers', () => {
    expect(offenders(production, /^(export )?(let|var) /)).toEqual([]);
    expect(
      offenders(everything, /\b(setTokenDecimalsResolver|setExpiryGuard|registerAdapterFamily|tokenDecimalsResolver)\b/, [
        'test/unit/chains-vocabulary.test.ts',
      ]),
    ).toEqual([]);
  });
});

describe('one vocabulary', () => {
  it('Mode, NetworkId and TokenSymbol are declared once, in chains/vocabulary.ts', () => {
    const declared = offenders(production, /^export type (Mode|NetworkId|TokenSymbol) =/);
    expect(declared.map((d) => d.split(':')[0])).toEqual(['chains/vocabulary.ts', 'chains/vocabulary.ts', 'chains/vocabulary.ts']);
    expect(offenders(production, /'ethereum', 'bsc', 'tron', 'solana'\]/, ['chains/vocabulary.ts'])).toEqual([]);
  });

  it('chains/, the currency table and the guards share the same lists', () => {
    expect(NETWORK_IDS).toEqual(NETWORKS.map((n) => n.id));
    expect(NETWORK_IDS).toEqual(['ethereum', 'bsc', 'tron', 'solana', 'base', 'arbitrum', 'optimism', 'polygon']);
    expect(STABLECOINS).toBe(TOKEN_SYMBOLS);
    for (const c of TOKEN_SYMBOLS) expect(currencyExponent(c)).toBe(STABLECOIN_EXPONENT);
    expect(STABLECOIN_EXPONENT).toBe(2);
    expect(NETWORK_IDS.every(isNetworkId)).toBe(true);
    expect(isNetworkId('ethereum:test')).toBe(false);
    expect(isTokenSymbol('usdt')).toBe(false);
  });

  it('the stablecoin exponent is named, not the literal 2, where minor units meet token units', () => {
    expect(
      offenders(
        production,
        /formatMinor\([^)]*target_amount_minor, 2\)|scaleUp\(minor, 2,|scaleDown\([^)]*, 2, '(down|up)'\)|tokenDecimals - 2/,
      ),
    ).toEqual([]);
  });

  it('UnsignedTransfer bodies need no casts', () => {
    expect(offenders(sources('chains'), /as unknown as/)).toEqual([]);
  });
});

describe('chains/ holds production code only', () => {
  it('send-token-transfer and the Solana payout loop live in test/support', () => {
    const names = sources('chains').map((f) => f.path);
    expect(names).not.toContain('chains/send-token-transfer.ts');
    expect(names).not.toContain('chains/solana/payout-loop.ts');
    expect(offenders(production, /from '[./]*test\//)).toEqual([]);
  });
});
