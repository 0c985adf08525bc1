import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

// Compiles the predeploy stand-ins of this folder (fakes of the OP stack's and Arbitrum's system contracts, for tests)
// with the solc-js compiler of the npm package (never a download). anvil_setCode takes RUNTIME bytecode, so this keeps
// `evm.deployedBytecode`. Cached under node_modules/.cache by the sources' and compiler's hash.

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE_DIR = join(HERE, '..', '..', '..', 'node_modules', '.cache', 'stablepay-fee-stand-ins');

export interface StandInCode {
  abi: unknown[];
  runtime: string;
}

export function compileFeeStandIns(): Record<string, StandInCode> {
  const sources: Record<string, { content: string }> = {};
  for (const f of readdirSync(HERE)
    .filter((x) => x.endsWith('.sol'))
    .sort())
    sources[f] = { content: readFileSync(join(HERE, f), 'utf8') };
  const version = (solc as { version(): string }).version();
  const key = createHash('sha256').update(version).update(JSON.stringify(sources)).digest('hex').slice(0, 16);
  const cacheFile = join(CACHE_DIR, `${key}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, StandInCode>;
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Ecotone runs Cancun's EVM: nothing newer.
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse((solc as { compile(s: string): string }).compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const out: Record<string, StandInCode> = {};
  for (const file of Object.values(output.contracts))
    for (const [name, c] of Object.entries(file)) out[name] = { abi: c.abi, runtime: `0x${c.evm.deployedBytecode.object}` };
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(out));
  return out;
}
