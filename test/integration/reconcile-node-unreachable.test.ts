import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { reconcileExitCode } from '../../src/cli/reconcile.js';
import { chainKey } from '../../src/ledger/core/chain-ref.js';
import { incompleteness, reconcile } from '../../src/reconcile/reconcile.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// A reconcile right after a chain's node stopped answering (docs/journal.md, "Reconcile": "A node that does not
// answer"): every chain read of reconcile carries the chain's RPC timeout (CHAIN_<NET>_<MODE>_RPC_TIMEOUT_MS, Solana
// included), and a chain whose node fails a read is not compared, named with the reason, while the run goes on to the
// other chains and completes (exit 4). The node here is an HTTP server that accepts every request and never answers.
// No upper bound on the time is asserted: the outcome is (the test's own timeout is generous).

let t: TestDatabase;
let node: Server;
let url: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  t = await createTestDatabase();
  node = createServer(() => {
    /* accepts, reads, never answers */
  });
  node.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => node.listen(0, '127.0.0.1', () => r()));
  const a = node.address();
  url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
}, 60_000);
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => node?.close(r));
  await t?.destroy();
});

describe('reconcile with a node that stopped answering', () => {
  it('completes with each hung chain named as not compared (node unreachable), within the configured RPC timeout', async () => {
    const env = {
      CHAIN_ETHEREUM_TEST_RPC_URL: url,
      CHAIN_ETHEREUM_TEST_RPC_TIMEOUT_MS: '1000',
      CHAIN_ETHEREUM_TEST_USDT_CONTRACT: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
      CHAIN_SOLANA_TEST_RPC_URL: url,
      CHAIN_SOLANA_TEST_RPC_TIMEOUT_MS: '1000',
      CHAIN_SOLANA_TEST_USDT_CONTRACT: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
      CHAIN_SOLANA_TEST_USDT_DECIMALS: '6',
      CHAIN_TRON_TEST_RPC_URL: url,
      CHAIN_TRON_TEST_RPC_TIMEOUT_MS: '1000',
      CHAIN_TRON_TEST_USDT_CONTRACT: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      CHAIN_TRON_TEST_USDT_DECIMALS: '6',
    };
    const adapters = new ChainRegistry(
      (['ethereum', 'solana', 'tron'] as const).map((n) => createChainAdapter(loadChainSettings(env, n, 'test')!, env)),
    );
    // The watchers had run (a committed final height): reconcile goes to the node.
    for (const network of ['ethereum', 'solana', 'tron'])
      await sql`insert into chain_cursors (chain_key, cursor, tip_height, tip_time, final_height)
        values (${chainKey({ network, mode: 'test' })}, '{}'::jsonb, 100, now(), 90)`.execute(t.db);

    const report = await reconcile({ db: t.db, adapters });
    expect(report.chains.map((c) => c.network)).toEqual(['ethereum', 'solana', 'tron']);
    for (const c of report.chains) {
      expect(c.height).toBeNull();
      expect(c.skipped, `${c.network}: ${c.skipped}`).toMatch(/^node unreachable: .*timed out/);
      expect(c.coordinated).toBeUndefined();
      expect(incompleteness(c)).toEqual([`skipped (${c.skipped})`]);
    }
    // Solana's requests carry the configured timeout too (before: its client's own 30 s, whatever the setting).
    expect(report.chains[1]!.skipped).toMatch(/after 1000 ms/);
    expect(report.ok).toBe(true);
    expect(reconcileExitCode(report)).toBe(4);
    expect((await t.db.selectFrom('reconcile_runs').select('id').execute()).length).toBe(0);
  }, 120_000);
});
