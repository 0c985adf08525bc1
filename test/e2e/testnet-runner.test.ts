import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, HDNodeWallet, JsonRpcProvider } from 'ethers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../src/cli/devnet.js';
import type { LocalState } from '../../scripts/testnet/profiles.js';
import { main } from '../../scripts/testnet/main.js';
import type { RunReport } from '../../scripts/testnet/report.js';
import { freePort } from '../support/anvil.js';
import { REDIS_URL, databaseUrl, runPrefix } from '../support/env.js';
import { until } from './checkout-harness.js';

// The testnet runner (scripts/testnet) as a user runs it, with `--local` against `npm run dev` started as a user
// starts it: the whole scenario passes on an EVM chain (BSC's stand-in, 18 decimals), on the Solana endpoint and on the
// demo's TRON (Nile's profile on the FAKE java-tron wallet API), and each missing prerequisite stops the run in
// preflight with one line, having sent nothing.
const dir = mkdtempSync(join(tmpdir(), 'sp-testnet-'));
const redisPrefix = `sp_tntest_${randomBytes(3).toString('hex')}`;
const stateFile = join(dir, 'state.json');
let dev: ChildProcess | undefined;
let devOut = '';
let state: LocalState;

interface Run {
  code: number | null;
  out: string;
}

function runner(args: string[], extraEnv: Record<string, string> = {}, viaNpm = false): Promise<Run> {
  const env = { ...process.env, DEVNET_STATE_FILE: stateFile, ...extraEnv };
  const child = viaNpm
    ? spawn('npm', ['run', '--silent', 'testnet', '--', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('npx', ['tsx', 'scripts/testnet/run.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out: out.replace(/npm warn.*\n/g, '') })));
}

const lastLine = (out: string) => out.trim().split('\n').at(-1)!;
const report = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as RunReport;

beforeAll(async () => {
  const env = {
    ...process.env,
    PORT: String(await freePort()),
    DEV_DATABASE_URL: databaseUrl(`${runPrefix()}_tndev`), // dropped with the run's other databases
    DEV_REDIS_KEY_PREFIX: redisPrefix,
    DEVNET_STATE_FILE: stateFile,
  };
  dev = spawn('npm', ['run', 'dev'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout!.on('data', (d) => (devOut += String(d)));
  dev.stderr!.on('data', (d) => (devOut += String(d)));
  await until(
    async () => (devOut.includes('Press Ctrl-C') ? true : dev!.exitCode !== null ? Promise.reject(new Error(devOut)) : undefined),
    120_000,
    'npm run dev to start',
  );
  state = JSON.parse(readFileSync(stateFile, 'utf8')) as LocalState;
}, 150_000);

afterAll(async () => {
  if (dev && dev.exitCode === null && dev.signalCode === null) {
    process.kill(-dev.pid!, 'SIGINT');
    await Promise.race([new Promise((r) => dev!.once('exit', r)), new Promise((r) => setTimeout(r, 15_000))]);
    if (dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid!, 'SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe('npm run testnet -- --local', () => {
  it('passes the whole scenario on the EVM chain (18 decimals), on Solana and on TRON, with a report a person can check', async () => {
    const bscReport = join(dir, 'bsc.json');
    const solReport = join(dir, 'sol.json');
    const nileReport = join(dir, 'nile.json');
    const [bsc, sol, nile] = await Promise.all([
      runner(['--network', 'bsc-testnet', '--local', '--report', bscReport], {}, true),
      runner(['--network', 'solana-devnet', '--local', '--report', solReport], {}, true),
      runner(['--network', 'nile', '--local', '--report', nileReport], {}, true),
    ]);
    expect(bsc.code, bsc.out).toBe(0);
    expect(sol.code, sol.out).toBe(0);
    expect(nile.code, nile.out).toBe(0);
    expect(lastLine(bsc.out)).toBe(`PASS bsc-testnet (local): 10 steps passed, 0 skipped; report ${bscReport}`);
    expect(lastLine(sol.out)).toBe(`PASS solana-devnet (local): 10 steps passed, 0 skipped; report ${solReport}`);
    expect(lastLine(nile.out)).toBe(`PASS nile (local): 10 steps passed, 0 skipped; report ${nileReport}`);

    for (const r of [report(bscReport), report(solReport), report(nileReport)]) {
      expect(r.result).toBe('pass');
      expect(r.failure).toBeNull();
      expect(r.steps.map((s) => [s.step, s.status])).toEqual([
        ['preflight', 'passed'],
        ['merchant', 'passed'],
        ['session', 'passed'],
        ['pay', 'passed'],
        ['paid', 'passed'],
        ['fund hot wallet', 'passed'],
        ['refund', 'passed'],
        ['subscription', 'passed'],
        ['sweep', 'passed'],
        ['reconcile', 'passed'],
      ]);
      const step = (name: string) => r.steps.find((s) => s.step === name)!;
      // The sweep emptied the session's deposit address into the merchant's refunds hot wallet (no treasury set):
      // the ledger's swept amount is what was paid, and the hot wallet gained exactly what the ledger swept into it.
      const sweep = step('sweep');
      expect(sweep.data.swept_base).toBe(step('session').data.amount_due_base);
      expect(sweep.data.destination_gained_base).toBe(sweep.data.swept_base);
      expect(sweep.data.destination_kind).toBe('hot_wallet');
      expect(String(sweep.data.destination).toLowerCase()).toBe(String(step('fund hot wallet').data.hot_wallet).toLowerCase());
      expect(sweep.txs[0]!.what).toMatch(/ to the gas station /);
      expect(sweep.txs.slice(1).map((t) => t.what)).toContain(r.network === 'nile' ? 'sweep transfer' : 'sweep batch');
      // reconcile exited 0 after acknowledging only this run's own fundings (never more than it made: hot wallet gas
      // and tokens, charger gas, gas station gas).
      expect(step('reconcile').detail).toMatch(/ reconciled at height \d+: \d+ addresses, \d+ balances, no difference/);
      expect(
        String(step('reconcile').data.acknowledged ?? '')
          .split(',')
          .filter(Boolean).length,
      ).toBeLessThanOrEqual(4);
      expect(step('paid').data['webhook_payment.completed']).toMatch(/^evt_/);
      expect(step('refund').data['webhook_refund.succeeded']).toMatch(/^evt_/);
      expect(step('subscription').data['webhook_invoice.paid']).toMatch(/^evt_/);
      expect(step('pay').txs.map((t) => t.what)).toEqual(['payment']);
      expect(step('refund').txs.map((t) => t.what)).toEqual(['refund']);
      expect(
        step('subscription')
          .txs.map((t) => t.what)
          .at(-1),
      ).toBe('first charge');
    }

    // The EVM report's hashes are the chain's: the payment, the refund and the first charge mined and successful.
    const b = report(bscReport);
    const provider = new JsonRpcProvider(state.evm.bsc!.rpcUrl, state.evm.bsc!.chainId, { staticNetwork: true });
    try {
      for (const name of ['pay', 'refund', 'subscription', 'sweep']) {
        for (const t of b.steps.find((s) => s.step === name)!.txs) {
          expect(t.explorer).toBeNull(); // a local chain has no explorer
          expect((await provider.getTransactionReceipt(t.hash))?.status, `${name} ${t.what}`).toBe(1);
        }
      }
      // The chain agrees: the swept deposit address holds no USDT.
      const usdt = new Contract(state.evm.bsc!.tokens.USDT!.address, ['function balanceOf(address) view returns (uint256)'], provider);
      expect(await usdt.getFunction('balanceOf')(String(b.steps.find((s) => s.step === 'session')!.data.deposit_address))).toBe(0n);
    } finally {
      provider.destroy();
    }
    expect(b.steps.find((s) => s.step === 'refund')!.data.received_base).toBe('500000000000000000'); // 0.50 at 18 decimals
    // Solana links open the local validator in the explorer.
    const s = report(solReport);
    expect(s.steps.find((x) => x.step === 'refund')!.txs[0]!.explorer).toContain(
      `cluster=custom&customUrl=${encodeURIComponent(state.solana!.rpcUrl)}`,
    );
    expect(s.steps.find((x) => x.step === 'refund')!.data.received_base).toBe('500000');
    // TRON: the payment, refund, authorization and charge are transactions the fake java-tron executed (receipt SUCCESS);
    // TRX came from the demo's faucet (the fake has no TRX transfer), and the report says so by its ids.
    const n = report(nileReport);
    const wallet = async <T>(path: string, txId: string) =>
      (await (
        await fetch(`${state.tron!.fullHost}/wallet/${path}`, { method: 'POST', body: JSON.stringify({ value: txId }) })
      ).json()) as T;
    // A contract call's receipt says SUCCESS; a TRX transfer (the sweep's fund step) has no receipt result, so its
    // transaction's own `contractRet` must say SUCCESS, and it must be in a block.
    const outcome = async (txId: string) => {
      const info = await wallet<{ blockNumber?: number; receipt?: { result?: string } }>('gettransactioninfobyid', txId);
      if (info.blockNumber === undefined) return 'not in a block';
      if (info.receipt?.result !== undefined) return info.receipt.result;
      return (await wallet<{ ret?: Array<{ contractRet?: string }> }>('gettransactionbyid', txId)).ret?.[0]?.contractRet;
    };
    for (const name of ['pay', 'refund', 'subscription', 'sweep']) {
      for (const t of n.steps.find((x) => x.step === name)!.txs) {
        expect(t.explorer).toBeNull();
        if (t.hash.startsWith('devnet-trx-faucet-')) continue;
        expect(await outcome(t.hash), `${name} ${t.what}`).toBe('SUCCESS');
      }
    }
    expect(n.steps.find((x) => x.step === 'fund hot wallet')!.txs.map((t) => t.hash.replace(/^[0-9a-f]{64}$/, '<tx>'))).toEqual([
      expect.stringMatching(/^devnet-trx-faucet-\d+$/),
      '<tx>',
    ]);
    expect(n.steps.find((x) => x.step === 'refund')!.data.received_base).toBe('500000');
    expect(n.steps.find((x) => x.step === 'preflight')!.data.chain).toBe(String(0xcd8690dc));
    // The demo's operator settings are readable by their owner only; nothing secret reaches the output.
    expect(statSync(stateFile).mode & 0o077).toBe(0);
    for (const out of [bsc.out, sol.out, nile.out]) {
      expect(out).not.toContain(state.operatorEnv!.MASTER_KEY!);
      expect(out).not.toContain(DEVNET_MNEMONIC);
    }
  }, 480_000);

  // The four networks of issue 37 on the demo's chains: Base and OP (OP-stack L1 data fee), Arbitrum (0.25 s blocks,
  // NodeInterface), Polygon (tip floor), all in parallel on the one demo. Their profiles come from the registry; only
  // Circle's test USDC exists on their testnets, so the runner pays USDC. TESTNET_AMOUNT is 200.00: a first sweep on a
  // local chain deploys the batch delegate at Anvil's 1 gwei tip and ETH at the demo's 3,000, several dollars, which
  // the runner's 1.00 could not be worth (fee share over 100 %).
  it('passes the whole scenario on base-sepolia, arbitrum-sepolia, op-sepolia and polygon-amoy', async () => {
    const profiles = [
      { name: 'base-sepolia', network: 'base', chainId: 84532 },
      { name: 'arbitrum-sepolia', network: 'arbitrum', chainId: 421614 },
      { name: 'op-sepolia', network: 'optimism', chainId: 11155420 },
      { name: 'polygon-amoy', network: 'polygon', chainId: 80002 },
    ];
    const runs = await Promise.all(
      profiles.map((p) => runner(['--network', p.name, '--local', '--report', join(dir, `${p.name}.json`)], { TESTNET_AMOUNT: '200.00' })),
    );
    runs.forEach((r, k) => {
      const p = profiles[k]!;
      expect(r.code, r.out).toBe(0);
      expect(lastLine(r.out)).toBe(`PASS ${p.name} (local): 10 steps passed, 0 skipped; report ${join(dir, `${p.name}.json`)}`);
    });
    for (const p of profiles) {
      const r = report(join(dir, `${p.name}.json`));
      expect(r.token).toBe('USDC');
      expect(r.steps.every((s) => s.status === 'passed')).toBe(true);
      const step = (name: string) => r.steps.find((s) => s.step === name)!;
      expect(step('preflight').data.chain).toBe(String(p.chainId));
      expect(step('session').data.amount_due_base).toBe('200000000');
      expect(step('refund').data.received_base).toBe('100000000');
      expect(step('sweep').data.swept_base).toBe('200000000');
      expect(step('sweep').data.destination_gained_base).toBe('200000000');
      expect(step('reconcile').detail).toMatch(new RegExp(`^${p.network}/test reconciled at height \\d+: `));
      // The hashes are the chain's: every transaction of the run mined and successful on the demo's chain of that network.
      const chain = state.evm[p.network]!;
      const provider = new JsonRpcProvider(chain.rpcUrl, chain.chainId, { staticNetwork: true });
      try {
        for (const name of ['pay', 'refund', 'subscription', 'sweep'])
          for (const t of step(name).txs)
            expect((await provider.getTransactionReceipt(t.hash))?.status, `${p.name} ${name} ${t.what}`).toBe(1);
      } finally {
        provider.destroy();
      }
    }
  }, 600_000);

  it('stops in preflight with one clear line and sends nothing when a prerequisite is missing', async () => {
    const eth = state.evm.ethereum!;
    const provider = new JsonRpcProvider(eth.rpcUrl, eth.chainId, { staticNetwork: true });
    const payer = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH);
    const nonceBefore = await provider.getTransactionCount(payer.address);
    // A public profile pointed at the local Ethereum stand-in, run by its operator (the demo's settings).
    const sepolia = { ...state.operatorEnv!, SERVICE_URL: state.baseUrl, SEPOLIA_RPC_URL: eth.rpcUrl, SEPOLIA_PAYER_KEY: payer.privateKey };
    const local = { ...sepolia, SEPOLIA_CHAIN_ID: '31337', SEPOLIA_USDC: eth.tokens.USDC!.address };
    const closedPort = await freePort();
    const cases: Array<{ args: string[]; env: Record<string, string>; line: RegExp }> = [
      {
        args: ['--network', 'sepolia'],
        env: sepolia,
        line: /^FAIL sepolia at preflight: RPC http:\/\/127\.0\.0\.1:\d+ is chain 31337 \(eth_chainId\), not Ethereum Sepolia \(11155111\); set SEPOLIA_RPC_URL; report /,
      },
      {
        args: ['--network', 'sepolia'],
        env: { ...sepolia, SEPOLIA_RPC_URL: `http://127.0.0.1:${closedPort}` },
        line: /^FAIL sepolia at preflight: RPC http:\/\/127\.0\.0\.1:\d+ unreachable: /,
      },
      {
        args: ['--network', 'sepolia'],
        env: { ...local, SEPOLIA_USDC: '0x000000000000000000000000000000000000dEaD' },
        line: /^FAIL sepolia at preflight: no USDC contract at 0x000000000000000000000000000000000000dEaD on Ethereum Sepolia; set SEPOLIA_USDC; /,
      },
      {
        args: ['--network', 'sepolia'],
        env: { ...local, SEPOLIA_USDC_DECIMALS: '18' },
        line: /^FAIL sepolia at preflight: USDC at 0x[0-9a-fA-F]{40} has 6 decimals, configured 18; set SEPOLIA_USDC_DECIMALS; /,
      },
      {
        args: ['--network', 'sepolia'],
        env: { ...local, SEPOLIA_PAYER_KEY: `0x${'11'.repeat(32)}` },
        line: /^FAIL sepolia at preflight: payer 0x[0-9a-fA-F]{40} holds 0\.0 ETH, needs 0\.04 ETH: get some at https:\/\/cloud\.google\.com\/application\/web3\/faucet\/ethereum\/sepolia; /,
      },
      {
        args: ['--network', 'sepolia', '--local'],
        env: { TESTNET_AMOUNT: '5000000.00' },
        line: /^FAIL sepolia \(local\) at preflight: payer 0x[0-9a-fA-F]{40} holds [\d.]+ USDC, needs 7500001\.0 USDC: get some at funded by npm run dev; /,
      },
      {
        args: ['--network', 'sepolia'],
        env: { ...local, SERVICE_URL: `http://127.0.0.1:${closedPort}` },
        line: /^FAIL sepolia at preflight: service http:\/\/127\.0\.0\.1:\d+ unreachable \(fetch failed\); start it \(npm start\) or set SERVICE_URL; /,
      },
      {
        args: ['--network', 'sepolia'],
        env: { SEPOLIA_PAYER_KEY: payer.privateKey, DATABASE_URL: '', MASTER_KEY: '' },
        line: /^FAIL sepolia: DATABASE_URL is not set: run from the service's checkout/,
      },
      {
        args: ['--network', 'nile', '--local'],
        env: { TESTNET_AMOUNT: '5000000.00' },
        line: /^FAIL nile \(local\) at preflight: payer T[1-9A-HJ-NP-Za-km-z]{33} holds [\d.]+ USDT, needs 7500001\.0 USDT: get some at funded by npm run dev; /,
      },
    ];
    // In-process (the same main() as `npm run testnet`), one after the other: the machine stays free for the demo.
    const runs: Run[] = [];
    for (const c of cases) {
      let out = '';
      const code = await main(
        [...c.args, '--report', join(dir, `pf-${randomBytes(4).toString('hex')}.json`)],
        { DEVNET_STATE_FILE: stateFile, ...c.env },
        (l) => (out += `${l}\n`),
      );
      runs.push({ code, out });
    }
    runs.forEach((r, n) => {
      expect(r.code, `case ${n}: ${r.out}`).toBe(2);
      expect(lastLine(r.out), `case ${n}`).toMatch(cases[n]!.line);
      const reportPath = /; report (\S+)$/.exec(lastLine(r.out))?.[1];
      if (reportPath) {
        const rep = report(reportPath);
        expect(rep.steps.map((s) => [s.step, s.status])).toEqual([['preflight', 'failed']]);
      }
      expect(r.out).not.toContain(payer.privateKey.slice(2));
    });
    expect(await provider.getTransactionCount(payer.address)).toBe(nonceBefore);
    provider.destroy();
  }, 120_000);
});
