import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

// Compiles the test token contracts with the solc-js compiler bundled in the npm package (never loadRemoteVersion).
// Output is cached by the hash of the sources and compiler version under node_modules/.cache.

export interface CompiledContract {
  abi: unknown[];
  bytecode: string;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE_DIR = join(HERE, '..', '..', '..', 'node_modules', '.cache', 'stablepay-evm-tokens');

export function compileTestContracts(): Record<string, CompiledContract> {
  const files = readdirSync(HERE)
    .filter((f) => f.endsWith('.sol'))
    .sort();
  const sources: Record<string, { content: string }> = {};
  for (const f of files) sources[f] = { content: readFileSync(join(HERE, f), 'utf8') };
  const version = (solc as { version(): string }).version();
  const key = createHash('sha256').update(version).update(JSON.stringify(sources)).digest('hex').slice(0, 16);
  const cacheFile = join(CACHE_DIR, `${key}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CompiledContract>;

  const input = {
    language: 'Solidity',
    sources,
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse((solc as { compile(s: string): string }).compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const out: Record<string, CompiledContract> = {};
  for (const file of Object.values(output.contracts)) {
    for (const [name, c] of Object.entries(file)) out[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(out));
  return out;
}
