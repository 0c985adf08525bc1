import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { DevnetState } from '../../src/cli/devnet.js';
import { freePort } from '../support/anvil.js';
import { REDIS_URL, databaseUrl, runPrefix } from '../support/env.js';
import { SignedClient } from '../support/signed-client.js';
import { until } from './checkout-harness.js';

// `npm run dev` as a user runs it: a child process (its own process group, like a terminal's foreground job) that
// starts local chains for all eight networks of the registry and the service, lists each network with its chain id and
// fee model, prints a key, a signed curl and a page URL; the printed curl works, `devnet pay` pays the demo session
// (BSC), one on Base (the OP-stack chain, a real L1 data fee), the curl's (Solana) and one on TRON (the fake java-tron
// wallet API, named a fake in the printout), the webhook arrives, the printed refund completes from the funded hot wallet and refunds on
// Solana and TRON do too, the operator CLI works on the demo's settings alone, no warning is logged, and Ctrl-C (SIGINT
// to the group) stops everything it started and deletes the run's Redis keys.
const dir = mkdtempSync(join(tmpdir(), 'sp-dev-'));
const redisPrefix = `sp_devtest_${randomBytes(3).toString('hex')}`;
let child: ChildProcess | undefined;
let out = '';

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(2000) });
    return false;
  } catch {
    return true;
  }
}

describe('npm run dev', () => {
  it('starts the local demo, serves a page, takes a payment from `devnet pay`, refunds part of it, serves the operator CLI, and stops cleanly on Ctrl-C', async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      DEV_DATABASE_URL: databaseUrl(`${runPrefix()}_dev`), // dropped with the run's other databases
      DEV_REDIS_KEY_PREFIX: redisPrefix,
      DEVNET_STATE_FILE: join(dir, 'state.json'),
    };
    child = spawn('npm', ['run', 'dev'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (out += String(d)));
    await until(
      async () => (out.includes('Press Ctrl-C') ? true : child!.exitCode !== null ? Promise.reject(new Error(out)) : undefined),
      120_000,
      'npm run dev to start',
    );

    expect(out).toMatch(/API key:\s+sk_test_[A-Za-z0-9]+/);
    expect(out).toMatch(/API secret:\s+\S+/);
    const pageUrl = /Demo session page: (\S+)/.exec(out)![1]!;
    const sessionId = /Demo session id: (\S+)/.exec(out)![1]!;
    expect(pageUrl).toBe(`http://localhost:${port}/pay/${sessionId}`);
    // Every network of the registry is listed: an Anvil chain per EVM network with its chain id, block time and fee
    // model (the rollups' L1 fee made real by test/support/network-anvil.ts), Solana and TRON.
    const evmLines = [...out.matchAll(/^ {2}(\w+)\s+\(Anvil, chain (\d+), ([\d.]+) s blocks, ([^)]+)\):\s+(http:\/\/127\.0\.0\.1:\d+)/gm)];
    expect(Object.fromEntries(evmLines.map((m) => [m[1], { chain: Number(m[2]), block: m[3], fees: m[4] }]))).toEqual({
      ethereum: { chain: 31337, block: '1', fees: 'no L1 fee' },
      bsc: { chain: 97, block: '1', fees: 'no L1 fee' },
      base: { chain: 84532, block: '1', fees: 'OP-stack L1 fee' },
      arbitrum: { chain: 421614, block: '0.25', fees: 'Arbitrum L1 gas' },
      optimism: { chain: 11155420, block: '1', fees: 'OP-stack L1 fee' },
      polygon: { chain: 80002, block: '1', fees: 'no L1 fee, tip >= 25 gwei' },
    });
    const listed = [...evmLines.map((m) => m[1]), ...(/^ {2}(solana)\s+\(LiteSVM\)/m.exec(out)?.slice(1) ?? [])];
    expect(listed).toHaveLength(7);
    const chainUrls = evmLines.map((m) => m[5]!);
    // TRON is listed, as the fake it is: its wallet API and the Anvil node under it.
    const tronLine =
      /tron\s+\(FAKE java-tron wallet API, Nile-like, chain 3448148188\): (http:\/\/127\.0\.0\.1:\d+)\s+JSON-RPC (http:\/\/127\.0\.0\.1:\d+)/.exec(
        out,
      );
    expect(tronLine, out).not.toBeNull();
    chainUrls.push(tronLine![1]!, tronLine![2]!);
    expect(out).toMatch(/Refund wallets funded \(gas and tokens\): ethereum, bsc, base, arbitrum, optimism, polygon, solana, tron\./);
    expect(out).toMatch(/Sweeps: gas stations funded and test-mode policies set .* on ethereum, bsc, base, arbitrum, optimism, polygon;/);
    expect(out).toContain('--network ethereum|bsc|base|arbitrum|optimism|polygon|solana|tron');
    // The state file gives the CLI the TRON settings.
    const state = JSON.parse(readFileSync(env.DEVNET_STATE_FILE, 'utf8')) as DevnetState;
    expect(state.tron).toMatchObject({ fullHost: tronLine![1], rpcUrl: tronLine![2], chainId: 0xcd8690dc });
    expect(state.tron!.tokens.USDT!.address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    // The service detects on the fake's /jsonrpc: Anvil's JSON-RPC with transaction hashes as TRON txIDs.
    expect(state.operatorEnv).toMatchObject({
      CHAIN_TRON_TEST_FULL_HOST: tronLine![1],
      CHAIN_TRON_TEST_RPC_URL: `${tronLine![1]}/jsonrpc`,
    });

    // The page.
    const page = await fetch(pageUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('Demo Shop');
    expect(html).toContain('value="ethereum:USDT"');
    expect(html).toContain('value="bsc:USDC"');
    expect(html).toContain('value="tron:USDT"');
    expect(html).toContain('value="tron:USDC"');
    expect(html).toContain('value="solana:USDT"');
    for (const n of ['base', 'arbitrum', 'optimism', 'polygon']) expect(html).toContain(`value="${n}:USDC"`);
    expect(Object.keys(state.evm)).toEqual(['ethereum', 'bsc', 'base', 'arbitrum', 'optimism', 'polygon']);

    // The printed signed curl creates a session.
    const snippet = out
      .slice(out.indexOf('Create a session with a signed request:'), out.indexOf('Demo session id:'))
      .split('\n')
      .slice(1)
      .join('\n');
    const curl = spawnSync('bash', ['-c', snippet], { encoding: 'utf8', timeout: 20_000 });
    expect(curl.status).toBe(0);
    const created = JSON.parse(curl.stdout) as { id: string; url: string; payment_status: string };
    expect(created).toMatchObject({ payment_status: 'unpaid' });
    expect(created.url).toBe(`http://localhost:${port}/pay/${created.id}`);

    // devnet pay: the demo session on BSC (18 decimals), through the public selection endpoint, to paid and the webhook.
    const pay = spawnSync('npx', ['tsx', 'src/cli/index.ts', 'devnet', 'pay', sessionId, '--network', 'bsc', '--token', 'USDT'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(pay.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(pay.status).toBe(0);
    expect(JSON.parse(pay.stdout)).toMatchObject({
      session_id: sessionId,
      network: 'bsc',
      token: 'USDT',
      amount_base: '12340000000000000000',
    });
    await until(
      async () => {
        const s = (await (await fetch(`${pageUrl}/status`)).json()) as { state: string };
        return s.state === 'paid' ? true : undefined;
      },
      30_000,
      'the demo session to be paid',
    );
    await until(async () => (/webhook payment\.completed \(signature valid\)/.test(out) ? true : undefined), 30_000, 'the webhook');
    expect(out).toContain(`"session_id": "${sessionId}"`);

    // The printed refund (5.00 of the 12.34 USDT paid) is paid from the merchant's funded hot wallet on BSC.
    const refundSnippet = out
      .slice(out.indexOf('Refund 5.00 USDT of the paid demo session:'), out.indexOf('Operator CLI'))
      .split('\n')
      .slice(1)
      .join('\n');
    const refundCurl = spawnSync('bash', ['-c', refundSnippet], { encoding: 'utf8', timeout: 20_000 });
    expect(refundCurl.status).toBe(0);
    const refund = JSON.parse(refundCurl.stdout) as { refund_id: string; status: string; amount: number };
    expect(refund).toMatchObject({ session_id: sessionId, status: 'pending', amount: 500, currency: 'USDT' });
    const merchant = new SignedClient(`http://localhost:${port}`, {
      key: /API key:\s+(\S+)/.exec(out)![1]!,
      secret: /API secret:\s+(\S+)/.exec(out)![1]!,
    });
    await until(
      async () => {
        const r = await merchant.request('GET', `/api/v1/refunds/${encodeURIComponent(refund.refund_id)}`);
        if (r.json?.status === 'failed') throw new Error(`refund failed: ${r.text}`);
        return r.json?.status === 'completed' ? true : undefined;
      },
      60_000,
      'the demo refund to complete',
    );

    // A new network, the OP-stack one: a session paid on Base through `devnet pay` (USDC, 6 decimals).
    const baseSession = await merchant.request('POST', '/api/v1/checkout/sessions/create', {
      body: { amount: '3.21', currency: 'USD', order_id: `base-${Date.now()}` },
    });
    expect(baseSession.status, baseSession.text).toBe(200);
    const payBase = spawnSync(
      'npx',
      ['tsx', 'src/cli/index.ts', 'devnet', 'pay', baseSession.json.id, '--network', 'base', '--token', 'USDC'],
      {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(payBase.status, payBase.stderr).toBe(0);
    expect(JSON.parse(payBase.stdout)).toMatchObject({
      session_id: baseSession.json.id,
      network: 'base',
      token: 'USDC',
      amount_base: '3210000',
    });
    await until(
      async () => {
        const s = (await (await fetch(`${baseSession.json.url}/status`)).json()) as { state: string; network: string };
        return s.state === 'paid' ? s : undefined;
      },
      30_000,
      'the session to be paid on Base',
    );

    // The operator CLI on the demo's settings alone: no MASTER_KEY (nor DATABASE_URL) in its environment, no .env.
    const cliEnv: Record<string, string | undefined> = { ...env };
    delete cliEnv.MASTER_KEY;
    delete cliEnv.DATABASE_URL;
    for (const args of [
      ['merchant', 'list'],
      ['payouts', 'wallets'],
      ['deposits', 'unmatched'],
      ['webhooks', 'failed'],
    ]) {
      const cli = spawnSync('npx', ['tsx', 'src/cli/index.ts', ...args], { env: cliEnv, encoding: 'utf8', timeout: 60_000 });
      expect(cli.status, `${args.join(' ')}: ${cli.stderr}`).toBe(0);
      expect(cli.stderr).toContain('settings: the running demo (npm run dev');
      expect(() => JSON.parse(cli.stdout), `${args.join(' ')} prints JSON`).not.toThrow();
      if (args[0] === 'merchant') expect(JSON.stringify(JSON.parse(cli.stdout))).toContain('Demo Shop');
    }

    // The console: the printed demo operator signs in with the code `console demo-code` prints (docs/console.md, Demo).
    const consoleUrl = /Console:\s+(http:\/\/\S+\/)/.exec(out)?.[1];
    expect(consoleUrl, 'the demo prints the console URL').toBeDefined();
    expect(out).toContain('operator@demo.invalid / demo-console-password');
    const code = spawnSync('npx', ['tsx', 'src/cli/index.ts', 'console', 'demo-code'], { env: cliEnv, encoding: 'utf8', timeout: 60_000 });
    expect(code.status, code.stderr).toBe(0);
    const login = await fetch(`${consoleUrl}api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'operator@demo.invalid', password: 'demo-console-password', totp_code: code.stdout.trim() }),
    });
    expect(login.status, await login.clone().text()).toBe(200);
    expect(((await login.json()) as { user: { role: string } }).user.role).toBe('operator');
    expect((await fetch(consoleUrl!)).headers.get('content-security-policy')).toContain("script-src 'self'");

    // And the session the curl created, on the LiteSVM Solana endpoint (Solana Pay-style transfer with its reference).
    const paySol = spawnSync('npx', ['tsx', 'src/cli/index.ts', 'devnet', 'pay', created.id, '--network', 'solana', '--token', 'USDT'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(paySol.status, paySol.stderr).toBe(0);
    expect(JSON.parse(paySol.stdout)).toMatchObject({ session_id: created.id, network: 'solana', token: 'USDT', amount_base: '25000000' });
    await until(
      async () => {
        const s = (await (await fetch(`${created.url}/status`)).json()) as { state: string };
        return s.state === 'paid' ? true : undefined;
      },
      30_000,
      'the curl session to be paid on Solana',
    );
    // A refund on Solana too, from the funded hot wallet (SOL for the fee, tokens to send).
    const solRefund = await merchant.request('POST', '/api/v1/refunds/create', {
      body: { session_id: created.id, refund_id: `sol-refund-${Date.now()}`, amount: 1000, currency: 'USDT' },
    });
    expect(solRefund.status, solRefund.text).toBe(201);
    await until(
      async () => {
        const r = await merchant.request('GET', `/api/v1/refunds/${encodeURIComponent(solRefund.json.refund_id)}`);
        if (r.json?.status === 'failed') throw new Error(`Solana refund failed: ${r.text}`);
        return r.json?.status === 'completed' ? true : undefined;
      },
      60_000,
      'the Solana refund to complete',
    );
    // A third session, paid on TRON (USDC, through the fake java-tron wallet API), and part of it refunded from the
    // hot wallet the demo funded with TRX and tokens.
    const tronSession = await merchant.request('POST', '/api/v1/checkout/sessions/create', {
      body: { amount: '7.50', currency: 'USD', order_id: `tron-${Date.now()}` },
    });
    expect(tronSession.status, tronSession.text).toBe(200);
    const payTron = spawnSync(
      'npx',
      ['tsx', 'src/cli/index.ts', 'devnet', 'pay', tronSession.json.id, '--network', 'tron', '--token', 'USDC'],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    expect(payTron.status, payTron.stderr).toBe(0);
    const tronPaid = JSON.parse(payTron.stdout) as Record<string, string>;
    expect(tronPaid).toMatchObject({ session_id: tronSession.json.id, network: 'tron', token: 'USDC', amount_base: '7500000' });
    expect(tronPaid.to).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(tronPaid.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    await until(
      async () => {
        const s = (await (await fetch(`${tronSession.json.url}/status`)).json()) as { state: string; network: string };
        return s.state === 'paid' ? s : undefined;
      },
      30_000,
      'the session to be paid on TRON',
    );
    const tronRefund = await merchant.request('POST', '/api/v1/refunds/create', {
      body: { session_id: tronSession.json.id, refund_id: `tron-refund-${Date.now()}`, amount: 250, currency: 'USDC' },
    });
    expect(tronRefund.status, tronRefund.text).toBe(201);
    const tronDone = await until(
      async () => {
        const r = await merchant.request('GET', `/api/v1/refunds/${encodeURIComponent(tronRefund.json.refund_id)}`);
        if (r.json?.status === 'failed') throw new Error(`TRON refund failed: ${r.text}`);
        return r.json?.status === 'completed'
          ? (r.json as { network: string; destination_address: string; transaction_hash: string })
          : undefined;
      },
      60_000,
      'the TRON refund to complete',
    );
    expect(tronDone).toMatchObject({ network: 'tron', destination_address: tronPaid.from });
    expect(tronDone.transaction_hash).toMatch(/^[0-9a-f]{64}$/);
    // The fake java-tron executed it: its receipt says SUCCESS.
    const info = (await (
      await fetch(`${state.tron!.fullHost}/wallet/gettransactioninfobyid`, {
        method: 'POST',
        body: JSON.stringify({ value: tronDone.transaction_hash }),
      })
    ).json()) as { receipt?: { result?: string } };
    expect(info.receipt?.result).toBe('SUCCESS');

    // Every refund above was signed by the demo's signer process, the only one given the seed (docs/signer.md): the
    // service asked it over its socket, and each signature is in the signer's audit.
    const signerPid = Number(/Signer:\s+pid (\d+) on (\S+): the only process with the seed/.exec(out)?.[1]);
    expect(signerPid).toBeGreaterThan(0);
    expect(readFileSync(`/proc/${signerPid}/environ`, 'latin1').split('\0')).toContain('ROLES=signer');
    expect(state.operatorEnv).not.toHaveProperty('HD_MNEMONIC');
    expect(state.operatorEnv?.SIGNER_SOCKET).toBeTruthy();
    const audit = new pg.Client({ connectionString: env.DEV_DATABASE_URL });
    await audit.connect();
    const signed = await audit.query<{ network: string }>(
      "select distinct network from signer_audit where outcome = 'signed' and purpose = 'refund_payout'",
    );
    await audit.end();
    expect(signed.rows.map((r) => r.network).sort()).toEqual(['bsc', 'solana', 'tron']);

    // The happy path logs no warning or error (the service's JSON lines: level 40 and up), e.g. no deposit setup refused.
    expect(out).not.toMatch(/"level":\s*(40|50|60)\b/);
    expect(out).not.toContain('deposit setup refused');
    const redis = new Redis(REDIS_URL);
    const keysWhileRunning = await redis.keys(`${redisPrefix}:*`);
    expect(keysWhileRunning.length).toBeGreaterThan(0);

    // Ctrl-C: SIGINT to the whole foreground group, as a terminal sends it.
    process.kill(-child.pid!, 'SIGINT');
    // 'close', not 'exit': the process can exit before its last output has been read from the pipe (a loaded machine).
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child!.once('close', (code, signal) => resolve({ code, signal }));
    });
    expect(out).toContain('Stopped.');
    expect(out).not.toMatch(/stopping .* failed/);
    // npm re-raises the SIGINT its script ended with, as shells expect of an interrupted job; anything else is a failure.
    expect(exit.code === 0 || exit.signal === 'SIGINT', JSON.stringify(exit)).toBe(true);
    for (const u of [...chainUrls, `http://127.0.0.1:${port}/healthz`]) expect(await refused(u), `${u} still answers`).toBe(true);
    expect(existsSync(env.DEVNET_STATE_FILE)).toBe(false);
    // Its Redis keys (the run's random prefix) are gone.
    expect(await redis.keys(`${redisPrefix}:*`)).toEqual([]);
    redis.disconnect();
    // Nothing it started is left running.
    const ps = spawnSync('ps', ['-o', 'pid=', '-g', String(child.pid)], { encoding: 'utf8' });
    expect(ps.stdout.trim()).toBe('');
  }, 240_000);
});
