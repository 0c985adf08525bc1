// `npm run testnet -- --network <profile> [--local] [--token USDT|USDC] [--report <file>]`, a profile per network of the
// registry (sepolia, bsc-testnet, solana-devnet, nile, base-sepolia, arbitrum-sepolia, op-sepolia, polygon-amoy).
// The end-to-end scenario (scenario.ts) on one public testnet, or with `--local` on the local chains of `npm run dev`.
// Prints each step with explorer links, writes the JSON report, and ends with one PASS/FAIL line.
// Exit status: 0 passed, 1 a step failed, 2 stopped before spending anything (usage, settings, preflight).
// Secrets (payer keys, MASTER_KEY, API secrets) come from the environment and are never printed. docs/testnets.md.
import { loadDotEnv } from '../../src/config.js';
import { main } from './main.js';

loadDotEnv(); // the service's own .env, when run from its checkout (it never overrides the environment)
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`testnet runner crashed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
