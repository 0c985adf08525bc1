import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

// Compiles the sweep contracts of chains/evm/contracts/ with the solc-js compiler of the npm package (never a download)
// and writes one committed artifact per contract (abi, creation bytecode, compiler version, settings, source hash).
// test/unit/sweep-contracts-bytecode.test.ts recompiles and requires byte-identical output, so the bytecode the service
// deploys is the bytecode of the source in the repository. Run: `npx tsx scripts/tools/compile-sweep-contracts.ts`.

const HERE = dirname(fileURLToPath(import.meta.url));
export const SWEEP_CONTRACTS_DIR = join(HERE, '..', '..', 'chains', 'evm', 'contracts');
export const SWEEP_CONTRACTS = ['SweepDelegate'] as const;

/**
 * Fixed settings (part of the artifact): `cancun` is the newest EVM both Ethereum and BSC have run for long, and the
 * delegate needs nothing newer; no metadata hash, so that the bytecode depends only on the source and these settings.
 */
export const SWEEP_SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 10_000 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none', appendCBOR: false },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const;

export interface SweepArtifact {
  contract: string;
  source: string;
  sourceSha256: string;
  compiler: string;
  settings: typeof SWEEP_SOLC_SETTINGS;
  abi: unknown[];
  bytecode: string;
}

export function compileSweepContracts(): SweepArtifact[] {
  const sources: Record<string, { content: string }> = {};
  for (const name of SWEEP_CONTRACTS) sources[`${name}.sol`] = { content: readFileSync(join(SWEEP_CONTRACTS_DIR, `${name}.sol`), 'utf8') };
  const input = { language: 'Solidity', sources, settings: SWEEP_SOLC_SETTINGS };
  const output = JSON.parse((solc as { compile(s: string): string }).compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const problems = (output.errors ?? []).filter((e) => e.severity === 'error' || e.severity === 'warning');
  if (problems.length) throw new Error(problems.map((e) => e.formattedMessage).join('\n'));
  return SWEEP_CONTRACTS.map((name) => {
    const file = `${name}.sol`;
    const c = output.contracts[file]?.[name];
    if (!c) throw new Error(`solc produced no ${name}`);
    return {
      contract: name,
      source: `chains/evm/contracts/${file}`,
      sourceSha256: createHash('sha256').update(sources[file]!.content).digest('hex'),
      compiler: (solc as { version(): string }).version(),
      settings: SWEEP_SOLC_SETTINGS,
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
    };
  });
}

export function artifactPath(name: string): string {
  return join(SWEEP_CONTRACTS_DIR, `${name}.json`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const a of compileSweepContracts()) {
    writeFileSync(artifactPath(a.contract), `${JSON.stringify(a, null, 2)}\n`);
    console.log(`${a.contract}: ${(a.bytecode.length - 2) / 2} bytes of creation code, ${a.compiler} -> ${artifactPath(a.contract)}`);
  }
}
