import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDNodeWallet } from 'ethers';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH, type DevnetState } from '../../src/cli/devnet.js';
import { createApiKey } from '../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { sql } from 'kysely';
import { expireSession } from '../../src/ledger/payments/sessions.js';
import { createConsoleUser } from '../../src/operations/console-users.js';
import { ensureDemoConsoleUsers } from '../../src/operations/console-demo.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// Every command of `npm run cli -- help`, run as a real child process against the whole service's database, Redis
// prefix and Anvil chain, must exit by itself with the expected status, on its success path and on an error path.
// A command that leaves a connection open (a BullMQ queue's Redis connection, a pool) is killed at the time limit and
// fails here: a cron job calling it would hang.

const EXIT_LIMIT_MS = 45_000;
let h: ServiceHarness;
let m: HarnessMerchant;
let env: Record<string, string | undefined>;
const ids: Record<string, string> = {};

interface Run {
  code: number | null;
  killed: boolean;
  out: string;
  err: string;
}

function cli(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['--import', 'tsx', 'src/cli/index.ts', ...args],
      { env: { ...env, ...extraEnv }, timeout: EXIT_LIMIT_MS, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const e = error as (Error & { code?: number; killed?: boolean }) | null;
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, killed: e?.killed === true, out: stdout, err: stderr });
      },
    );
  });
}

beforeAll(async () => {
  h = await startServiceHarness();
  m = await h.newMerchant('Exit shop');
  env = { ...process.env, ...h.env, LOG_LEVEL: 'silent' };

  // A failed refund to retry: the merchant's hot wallet has no gas, so its payout fails.
  const paid = await h.paidSession(m, { amount: '3.00' });
  const refund = await m.client.post('/api/v1/refunds/create', {
    session_id: paid.id,
    refund_id: 'exit-rf-1',
    amount: 100,
    currency: 'USDT',
  });
  expect(refund.status).toBe(201);
  await h.until(async () => ((await m.client.get('/api/v1/refunds/exit-rf-1')).json.status === 'failed' ? true : undefined), 60_000);
  const event = await h.t.db
    .selectFrom('outbox_events')
    .select('id')
    .where('merchant_id', '=', m.id)
    .orderBy('seq')
    .executeTakeFirstOrThrow();
  ids.event = event.id;
  ids.keyPrefix = (await createApiKey(h.t.db, new SecretBox(TEST_MASTER_KEY), m.id, 'live')).key_prefix;

  // Money back (issue 16): an unmatched deposit (paid to a canceled session) and a session that expired after
  // receiving part of its amount.
  const selected = async (amount: string) => {
    const c = await m.client.post('/api/v1/checkout/sessions/create', { amount, currency: 'USD', order_id: `exit-mb-${amount}` });
    const r = await fetch(`${h.base}/checkout/sessions/${c.json.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
    });
    return { id: c.json.id as string, address: ((await r.json()) as { deposit_address: string }).deposit_address };
  };
  const payPart = async (to: string, amount: bigint, index: number) => {
    const w = walletAt(index, h.node.provider);
    await h.node.rpc('anvil_setBalance', [w.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, w.address, amount);
    const tx = await payFrom(w, h.tokens.USDT, to, amount);
    await h.node.mine(3);
    return h.until(async () =>
      h.t.db.selectFrom('deposits').selectAll().where('tx_hash', '=', tx).where('status', '=', 'confirmed').executeTakeFirst(),
    );
  };
  const canceled = await selected('1.00');
  expect((await m.client.post(`/api/v1/checkout/sessions/${canceled.id}/cancel`)).status).toBe(200);
  ids.unmatchedDeposit = (await payPart(canceled.address, 500_000n, 60)).id;
  const underpaid = await selected('4.00');
  await payPart(underpaid.address, 1_000_000n, 61);
  await h.t.db
    .updateTable('payment_sessions')
    .set({ expires_at: sql`now() - interval '1 second'` })
    .where('id', '=', underpaid.id)
    .execute();
  await h.until(async () => {
    // Expiry waits until the watcher has seen a block timestamped after expires_at (money may still arrive before it):
    // without a block mined after the expiry was moved into the past, the tip's time can stay before it for good.
    await h.node.mine(1);
    await expireSession(h.t.db, underpaid.id, { tokenDecimals: h.service.adapters.tokenDecimals });
    const s = await h.t.db.selectFrom('payment_sessions').select('status').where('id', '=', underpaid.id).executeTakeFirstOrThrow();
    return s.status === 'expired' ? true : undefined;
  }, 120_000);
  ids.expiredSession = underpaid.id;

  // The devnet state `npm run dev` would write, naming this test's service and chain; devnet pay pays from its payer.
  const open = await m.client.post('/api/v1/checkout/sessions/create', { amount: '2.00', currency: 'USD', order_id: 'exit-devnet-1' });
  expect(open.status).toBe(200);
  ids.openSession = open.json.id;
  const payer = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).address;
  await fund(h.tokens.USDT, payer, 10_000_000n);
  const state: DevnetState = {
    baseUrl: h.base,
    checkoutBaseUrl: `${h.base}/pay`,
    pid: process.pid,
    evm: {
      ethereum: {
        rpcUrl: h.node.url,
        chainId: 31337,
        tokens: { USDT: { address: h.tokens.USDT.address, decimals: 6 }, USDC: { address: h.tokens.USDC.address, decimals: 6 } },
      },
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'sp-cli-exits-'));
  ids.stateFile = join(dir, 'state.json');
  writeFileSync(ids.stateFile, JSON.stringify(state));
  ids.missingStateFile = join(dir, 'missing.json');

  // Console users to disable and reset (console user ...).
  const cli0 = { kind: 'cli' as const, id: 'test' };
  ids.consoleUserA = (await createConsoleUser({ db: h.t.db }, cli0, { email: 'exit-a@console.test', role: 'operator' })).user.id;
  await createConsoleUser({ db: h.t.db }, cli0, { email: 'exit-b@console.test', role: 'merchant', merchantId: m.id });
  await ensureDemoConsoleUsers({ db: h.t.db, box: new SecretBox(TEST_MASTER_KEY) }, m.id); // console demo-code
}, 300_000);
afterAll(async () => h?.close());

/** The commands `help` lists: the first words of each command line, up to the first argument. */
function listedCommands(help: string): string[] {
  const names = help
    .split('\n')
    .filter((l) => /^ {2}\S/.test(l))
    .map((l) =>
      l
        .trim()
        .split(/\s{2,}/)[0]!
        .split(' ')
        .filter((w, i, all) => all.slice(0, i + 1).every((x) => /^[a-z][a-z-]*$/.test(x)))
        .join(' '),
    );
  return [...new Set(names)];
}

interface Case {
  args: () => string[];
  env?: () => Record<string, string | undefined>;
  code: number;
  /** What the answer must show (stdout on success, stderr otherwise). */
  shows: RegExp;
}

const CASES: Record<string, Case[]> = {
  migrate: [{ args: () => ['migrate'], code: 0, shows: /"applied": \[\]/ }],
  'merchant create': [
    {
      args: () => ['merchant', 'create', '--name', 'Cron shop', '--webhook-url', 'http://127.0.0.1:9/hook', '--test-only'],
      code: 0,
      shows: /"merchant_id": "mch_/,
    },
    { args: () => ['merchant', 'create'], code: 2, shows: /--name is required/ },
  ],
  'merchant list': [
    { args: () => ['merchant', 'list'], code: 0, shows: /"session_lifetime_seconds": 1800/ },
    { args: () => ['merchant', 'list', 'extra'], code: 2, shows: /merchant show/ },
  ],
  'merchant show': [
    { args: () => ['merchant', 'show', m.id], code: 0, shows: /"session_lifetime_source": "default"/ },
    { args: () => ['merchant', 'show', 'mch_nope'], code: 2, shows: /no merchant mch_nope/ },
  ],
  'merchant update': [
    { args: () => ['merchant', 'update', m.id, '--underpayment-tolerance-bps', '0'], code: 0, shows: /"underpayment_tolerance_bps": 0/ },
    {
      args: () => ['merchant', 'update', m.id, '--session-lifetime-seconds', '59'],
      code: 2,
      shows: /--session-lifetime-seconds must be an integer 60\.\.604800 or default, not 59/,
    },
  ],
  'key create': [
    { args: () => ['key', 'create', '--merchant', m.id, '--mode', 'test'], code: 0, shows: /"key": "sk_test_/ },
    { args: () => ['key', 'create', '--merchant', m.id, '--mode', 'prod'], code: 2, shows: /--mode must be test or live/ },
  ],
  'key revoke': [
    { args: () => ['key', 'revoke', ids.keyPrefix!], code: 0, shows: /"revoked": "sk_live_/ },
    { args: () => ['key', 'revoke', 'sk_live_Nonexist'], code: 2, shows: /no active key/ },
  ],
  'key list': [
    { args: () => ['key', 'list', '--merchant', m.id], code: 0, shows: /"key_prefix": "sk_test_/ },
    { args: () => ['key', 'list', '--bogus'], code: 2, shows: /bogus/ },
  ],
  'webhooks failed': [
    { args: () => ['webhooks', 'failed', '--merchant', m.id], code: 0, shows: /^\[/ },
    { args: () => ['webhooks', 'failed', '--limit', '0'], code: 2, shows: /--limit must be 1\.\.10000/ },
  ],
  'webhooks resend': [
    { args: () => ['webhooks', 'resend', ids.event!], code: 0, shows: /"event_id": "evt_/ },
    { args: () => ['webhooks', 'resend', 'evt_1'], code: 1, shows: /no event evt_1/ },
  ],
  'webhooks resend-failed': [
    { args: () => ['webhooks', 'resend-failed', '--since', '2020-01-01T00:00:00Z'], code: 0, shows: /"resent": 0/ },
    { args: () => ['webhooks', 'resend-failed'], code: 2, shows: /--since is required/ },
  ],
  'webhooks rotate-secret': [
    { args: () => ['webhooks', 'rotate-secret', '--merchant', m.id, '--overlap-hours', '1'], code: 0, shows: /"webhook_secret": / },
    { args: () => ['webhooks', 'rotate-secret', '--merchant', 'mch_nope'], code: 1, shows: /no merchant mch_nope/ },
  ],
  'webhooks set-url': [
    {
      args: () => ['webhooks', 'set-url', '--merchant', m.id, '--url', 'http://127.0.0.1:9/hook', '--test-only'],
      code: 0,
      shows: /"live_deliverable": false/,
    },
    { args: () => ['webhooks', 'set-url', '--merchant', m.id], code: 2, shows: /--url is required/ },
  ],
  'devnet pay': [
    {
      args: () => ['devnet', 'pay', ids.openSession!, '--network', 'ethereum', '--token', 'USDT'],
      env: () => ({ DEVNET_STATE_FILE: ids.stateFile }),
      code: 0,
      shows: /"tx_hash": "0x/,
    },
    {
      args: () => ['devnet', 'pay', 'cs_x'],
      env: () => ({ DEVNET_STATE_FILE: ids.missingStateFile }),
      code: 2,
      shows: /no local devnet found/,
    },
  ],
  'payouts wallets': [
    {
      args: () => ['payouts', 'wallets', '--merchant', m.id],
      code: 0,
      shows: /"address": "0x[0-9a-fA-F]{40}",\s+"native_base_units": "\d+"/,
    },
    // No key material at all: no seed, no signer to ask (the harness's processes reach the signer over SIGNER_SOCKET),
    // no account xpubs.
    {
      args: () => ['payouts', 'wallets'],
      env: () => ({ HD_MNEMONIC: undefined, SIGNER_SOCKET: undefined, SIGNER_TLS_URL: undefined, HD_ACCOUNT_XPUBS: undefined }),
      code: 2,
      shows: /wallets needs HD_MNEMONIC/,
    },
  ],
  'payouts pending': [
    { args: () => ['payouts', 'pending', '--merchant', m.id], code: 0, shows: /^\[/ },
    { args: () => ['payouts', 'pending', '--bogus'], code: 2, shows: /bogus/ },
  ],
  'payouts retry': [
    { args: () => ['payouts', 'retry', 'exit-rf-1', '--merchant', m.id], code: 0, shows: /"refund_id": "exit-rf-1-retry-1"/ },
    { args: () => ['payouts', 'retry', 'exit-rf-404', '--merchant', m.id], code: 2, shows: /no refund exit-rf-404/ },
  ],
  'deposits refund': [
    { args: () => ['deposits', 'refund', ids.unmatchedDeposit!], code: 0, shows: /"refund_id": "deposit-dep_/ },
    { args: () => ['deposits', 'refund', 'dep_nope'], code: 2, shows: /no deposit dep_nope/ },
  ],
  'sessions refund-received': [
    { args: () => ['sessions', 'refund-received', ids.expiredSession!], code: 0, shows: /"amount": "1\.00"/ },
    { args: () => ['sessions', 'refund-received', 'cs_nope'], code: 2, shows: /no session cs_nope/ },
  ],
  export: [
    { args: () => ['export', 'refunds', '--since', '2020-01-01', '--format', 'json'], code: 0, shows: /^\[/ },
    { args: () => ['export', 'sessions', '--format', 'json'], code: 2, shows: /--since is required/ },
  ],
  'payouts wallet-nonces': [
    { args: () => ['payouts', 'wallet-nonces', '--mode', 'test'], code: 0, shows: /^\[/ },
    { args: () => ['payouts', 'wallet-nonces', '--network', 'dogecoin'], code: 2, shows: /--network must be one of/ },
  ],
  // Their success paths run as child processes in test/integration/backup-restore.test.ts (a landed transfer to record
  // and a wallet whose chain nonce is ahead of the ledger's need a restored backup) and exit there by themselves.
  'payouts settle-from-chain': [
    {
      args: () => ['payouts', 'settle-from-chain', 'exit-rf-404', '--merchant', m.id, '--tx', `0x${'1'.repeat(64)}`, '--actor', 'ops'],
      code: 2,
      shows: /no refund exit-rf-404/,
    },
    { args: () => ['payouts', 'settle-from-chain', 'exit-rf-1', '--merchant', m.id], code: 2, shows: /--tx is required/ },
  ],
  'payouts settle-charge-from-chain': [
    {
      args: () => ['payouts', 'settle-charge-from-chain', '999999', '--tx', `0x${'1'.repeat(64)}`, '--actor', 'ops'],
      code: 2,
      shows: /no charge 999999/,
    },
    { args: () => ['payouts', 'settle-charge-from-chain', 'ch_x'], code: 2, shows: /settle-charge-from-chain <charge_id>/ },
  ],
  'payouts wallet-unknown': [
    { args: () => ['payouts', 'wallet-unknown', '--mode', 'test', '--all'], code: 0, shows: /^\[/ },
    { args: () => ['payouts', 'wallet-unknown', '--network', 'dogecoin'], code: 2, shows: /--network must be one of/ },
  ],
  // Its success path (transactions the restored ledger does not know, then accepted) runs in
  // test/integration/restore-tron.test.ts and restore-solana.test.ts.
  'payouts wallet-accept-transactions': [
    {
      args: () => [
        'payouts',
        'wallet-accept-transactions',
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--address',
        m.hotWallet,
        '--tx',
        `0x${'2'.repeat(64)}`,
        '--actor',
        'ops',
      ],
      code: 2,
      shows: /not held transactions of/,
    },
    {
      args: () => ['payouts', 'wallet-accept-transactions', '--network', 'ethereum', '--mode', 'test', '--tx', `0x${'2'.repeat(64)}`],
      code: 2,
      shows: /--actor is required/,
    },
  ],
  'payouts wallet-accept-nonce': [
    {
      args: () => [
        'payouts',
        'wallet-accept-nonce',
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--address',
        m.hotWallet,
        '--nonce',
        '999',
        '--actor',
        'ops',
      ],
      code: 2,
      shows: /the chain's pending nonce of .* is \d+, not 999/,
    },
    {
      args: () => ['payouts', 'wallet-accept-nonce', '--network', 'ethereum', '--mode', 'test', '--nonce', '1'],
      code: 2,
      shows: /--actor is required/,
    },
  ],
  'treasury set': [
    {
      args: () => [
        'treasury',
        'set',
        '--merchant',
        m.id,
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--address',
        `0x${'7e'.repeat(20)}`,
        '--actor',
        'ops',
      ],
      code: 0,
      shows: /0x7e7e/i,
    },
    {
      args: () => ['treasury', 'set', '--merchant', m.id, '--network', 'ethereum', '--mode', 'test', '--address', 'nope'],
      code: 2,
      shows: /address/i,
    },
  ],
  'treasury show': [
    { args: () => ['treasury', 'show', '--merchant', m.id], code: 0, shows: /./ },
    { args: () => ['treasury', 'show', '--merchant'], code: 2, shows: /./ },
  ],
  'treasury rotate-gas-station': [
    {
      // No case here runs a sweep on Ethereum (test); the drain, if any, is left to the worker (no wait).
      args: () => [
        'treasury',
        'rotate-gas-station',
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--actor',
        'ops',
        '--wait-seconds',
        '0',
        '--json',
      ],
      code: 0,
      shows: /"outcome": "(rotated|resumed)"/,
    },
    {
      args: () => ['treasury', 'rotate-gas-station', '--network', 'ethereum', '--mode', 'prod'],
      code: 2,
      shows: /--mode must be test or live/,
    },
  ],
  'sweep plan': [
    { args: () => ['sweep', 'plan', '--merchant', m.id, '--json'], code: 0, shows: /./ },
    { args: () => ['sweep', 'plan', '--mode', 'prod'], code: 2, shows: /--mode/ },
  ],
  'sweep run': [
    { args: () => ['sweep', 'run', '--merchant', m.id, '--network', 'bsc'], code: 0, shows: /./ },
    { args: () => ['sweep', 'run', '--wait-seconds', 'soon'], code: 2, shows: /--wait-seconds must be a whole number/ },
  ],
  wallets: [
    { args: () => ['wallets', '--merchant', m.id], code: 0, shows: /gas station/ },
    { args: () => ['wallets', '--mode', 'prod'], code: 2, shows: /--mode must be test or live/ },
  ],
  'subscriptions held': [
    { args: () => ['subscriptions', 'held'], code: 0, shows: /\[/ },
    { args: () => ['subscriptions', 'held', '--merchant', m.id], code: 2, shows: /./ },
  ],
  'subscriptions resolve': [
    { args: () => ['subscriptions', 'resolve', 'sub_nope', '--retry'], code: 2, shows: /no subscription sub_nope/ },
    { args: () => ['subscriptions', 'resolve', 'sub_nope'], code: 2, shows: /--retry\|--cancel/ },
  ],
  'sweep list': [
    { args: () => ['sweep', 'list', '--merchant', m.id], code: 0, shows: /./ },
    { args: () => ['sweep', 'list', '--limit', '0'], code: 2, shows: /--limit must be 1\.\.1000/ },
  ],
  'sweep costs': [
    { args: () => ['sweep', 'costs', '--since', '2020-01-01', '--until', '2030-01-01'], code: 0, shows: /./ },
    { args: () => ['sweep', 'costs', '--since', '2020-01-01'], code: 2, shows: /--until/ },
  ],
  'sweep policy set': [
    {
      args: () => [
        'sweep',
        'policy',
        'set',
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--token',
        'USDT',
        '--min',
        '5',
        '--max-fee-bps',
        '150',
        '--actor',
        'ops',
      ],
      code: 0,
      shows: /150/,
    },
    {
      args: () => [
        'sweep',
        'policy',
        'set',
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--token',
        'USDT',
        '--min',
        '5',
        '--max-fee-bps',
        '20000',
      ],
      code: 2,
      shows: /--max-fee-bps must be 0\.\.10000/,
    },
  ],
  'sweep policy show': [
    { args: () => ['sweep', 'policy', 'show', '--network', 'ethereum', '--mode', 'test', '--token', 'USDT'], code: 0, shows: /./ },
    { args: () => ['sweep', 'policy', 'show', '--network', 'ethereum', '--mode', 'test', '--token', 'DAI'], code: 2, shows: /./ },
  ],
  reconcile: [
    { args: () => ['reconcile', '--network', 'ethereum', '--mode', 'test', '--json'], code: 0, shows: /./ },
    { args: () => ['reconcile', '--mode', 'prod'], code: 2, shows: /--mode must be test or live/ },
  ],
  'journal unexplained': [
    { args: () => ['journal', 'unexplained', '--mode', 'test'], code: 0, shows: /./ },
    { args: () => ['journal', 'unexplained', '--mode', 'prod'], code: 2, shows: /--mode must be test or live/ },
  ],
  'journal acknowledge': [
    { args: () => ['journal', 'acknowledge', '999999', '--note', 'checked'], code: 2, shows: /no unacknowledged unexplained entry 999999/ },
    { args: () => ['journal', 'acknowledge', '999999'], code: 2, shows: /--note is required/ },
  ],
  'deposits unmatched': [
    { args: () => ['deposits', 'unmatched', '--mode', 'test'], code: 0, shows: /^\[/ },
    { args: () => ['deposits', 'unmatched', '--mode', 'prod'], code: 2, shows: /--mode must be test or live/ },
  ],
  'console user create': [
    {
      args: () => ['console', 'user', 'create', '--email', 'cron-operator@console.test', '--role', 'operator'],
      code: 0,
      shows: /"temporary_password": "[0-9A-Za-z]{20}"/,
    },
    {
      args: () => ['console', 'user', 'create', '--email', 'x@console.test', '--role', 'admin'],
      code: 2,
      shows: /--role must be operator or merchant/,
    },
  ],
  'console user list': [
    { args: () => ['console', 'user', 'list', '--role', 'merchant'], code: 0, shows: /^\[/ },
    { args: () => ['console', 'user', 'list', '--role', 'admin'], code: 2, shows: /--role must be operator or merchant/ },
  ],
  'console user disable': [
    { args: () => ['console', 'user', 'disable', ids.consoleUserA!], code: 0, shows: /"disabled": true/ },
    { args: () => ['console', 'user', 'disable', 'nobody@console.test'], code: 2, shows: /No such console user/ },
  ],
  'console demo-code': [
    { args: () => ['console', 'demo-code'], code: 0, shows: /^\d{6}\n$/ },
    { args: () => ['console', 'demo-code', '--email', 'exit-b@console.test'], code: 2, shows: /Only the demo users/ },
  ],
  'signer pause': [
    { args: () => ['signer', 'pause', '--reason', 'exit test'], code: 0, shows: /"paused": true/ },
    { args: () => ['signer', 'pause', '--reason', ''], code: 2, shows: /--reason must be 1\.\.500 characters/ },
  ],
  'signer resume': [
    { args: () => ['signer', 'resume'], code: 0, shows: /"paused": false/ },
    { args: () => ['signer', 'resume', 'now'], code: 2, shows: /unexpected argument now/ },
  ],
  'signer status': [
    { args: () => ['signer', 'status', '--json'], code: 0, shows: /"paused": (true|false)/ },
    { args: () => ['signer', 'status', '--verbose'], code: 2, shows: /--verbose/ },
  ],
  'retention run': [
    { args: () => ['retention', 'run', '--dry-run'], code: 0, shows: /"dry_run": true/ },
    { args: () => ['retention', 'run'], code: 0, shows: /"dry_run": false/ },
    { args: () => ['retention', 'run', '--older-than', '3'], code: 2, shows: /--older-than/ },
  ],
  'console user reset': [
    { args: () => ['console', 'user', 'reset', 'exit-b@console.test'], code: 0, shows: /"temporary_password": "/ },
    { args: () => ['console', 'user', 'reset'], code: 2, shows: /usage: console user reset <id\|email>/ },
  ],
};

describe('every CLI command exits on its own', () => {
  it('help lists exactly the commands tested here, and exits 0', async () => {
    const help = await cli(['help']);
    expect(help).toMatchObject({ code: 0, killed: false });
    expect(listedCommands(help.out).sort()).toEqual(Object.keys(CASES).sort());
    const unknown = await cli(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, killed: false });
    expect(unknown.err).toContain('unknown command frobnicate');
  }, 120_000);

  it('runs each command on its success and its error path and sees it exit with the expected status', async () => {
    const limit = pLimit(3);
    const cases = Object.entries(CASES).flatMap(([name, cs]) => cs.map((c) => ({ name, c })));
    const results = await Promise.all(
      cases.map(({ name, c }) =>
        limit(async () => {
          const started = Date.now();
          const r = await cli(c.args(), c.env?.() ?? {});
          return {
            name,
            args: c.args().join(' '),
            killed: r.killed,
            code: r.code,
            ms: Date.now() - started,
            shown: c.shows.test(c.code === 0 ? r.out : r.err),
            out: r.out,
            err: r.err,
          };
        }),
      ),
    );
    for (const r of results) {
      // One readable line per failure: which command, how it ended, what it printed.
      const summary = `${r.args}: killed=${r.killed} code=${r.code} after ${r.ms} ms\n${r.out}\n${r.err}`;
      expect(r.killed, summary).toBe(false);
      expect(r.code, summary).toBe(cases.find((x) => x.name === r.name && x.c.args().join(' ') === r.args)!.c.code);
      expect(r.shown, summary).toBe(true);
    }
    // The retry really queued a new refund and the devnet payment really paid the session.
    const retried = await h.t.db
      .selectFrom('refunds')
      .select(['status', 'metadata'])
      .where('refund_id', '=', 'exit-rf-1-retry-1')
      .executeTakeFirstOrThrow();
    expect(retried.metadata).toMatchObject({ retry_of: 'exit-rf-1' });
    await h.node.mine(2);
    await h.until(async () =>
      (await m.client.get(`/api/v1/checkout/sessions/${ids.openSession}`)).json.payment_status === 'paid' ? true : undefined,
    );
    // ~100 CLI processes, each starting tsx: about 3 minutes on a quiet 2-core machine, far more beside other suites.
  }, 900_000);
});
