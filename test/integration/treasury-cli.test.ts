import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// The treasury and sweep commands as an operator runs them: a real child process (src/cli/index.ts) against the
// service's database and an Anvil node (the adapter validates addresses). Exit codes: 0 done, 2 bad usage (nothing
// written), 1 an error.
const run = promisify(execFile);
let h: ServiceHarness;
let shop: HarnessMerchant;

beforeAll(async () => {
  h = await startServiceHarness({
    // A chain without EIP-7702 (pre-Prague): the sweeps here take the gas top-up path.
    anvilArgs: ['--hardfork', 'cancun'],
    extraEnv: { ROLES: 'api' },
  });
  shop = await h.newMerchant('Treasury CLI');
});
afterAll(async () => h?.close());

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await run('node', ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, ...h.env, LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

const audit = () =>
  h.t.db.selectFrom('treasury_destination_changes').selectAll().where('merchant_id', '=', shop.id).orderBy('id').execute();

describe('treasury set / show', () => {
  it('refuses an invalid address, an unknown merchant and a bad float with exit 2, writing nothing', async () => {
    const base = ['treasury', 'set', '--merchant', shop.id, '--network', 'ethereum', '--mode', 'test'];
    const bad = await cli([...base, '--address', '0x1234'], { USER: 'alice' });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('not a valid ethereum address');
    const unknown = await cli([
      'treasury',
      'set',
      '--merchant',
      'mch_nobody',
      '--network',
      'ethereum',
      '--mode',
      'test',
      '--address',
      'none',
    ]);
    expect(unknown.code).toBe(2);
    const float = await cli([...base, '--address', 'none', '--hot-float', '-5']);
    expect(float.code).toBe(2);
    const net = await cli([...base.slice(0, 4), '--network', 'dogecoin', '--mode', 'test', '--address', 'none']);
    expect(net.code).toBe(2);
    expect(await audit()).toEqual([]);
    expect(await h.t.db.selectFrom('treasury_destinations').selectAll().execute()).toEqual([]);
  }, 240_000); // several CLI processes, each a tsx start-up: slow on a loaded 2-core machine

  it('sets a canonical treasury address and float, with an audit row naming the actor ($USER or --actor)', async () => {
    const mixedCase = '0xABCDEF0123456789ABCDEF0123456789ABCDEF01'; // all caps: valid, canonicalised to lower case
    const set = await cli(
      [
        'treasury',
        'set',
        '--merchant',
        shop.id,
        '--network',
        'ethereum',
        '--mode',
        'test',
        '--address',
        mixedCase,
        '--hot-float',
        '250.50',
      ],
      { USER: 'alice' },
    );
    expect(set.code, set.err).toBe(0);
    const out = JSON.parse(set.out);
    expect(out.treasury_address).toBe(mixedCase.toLowerCase());
    expect(out.hot_float).toBe('250.50');
    const again = await cli(
      ['treasury', 'set', '--merchant', shop.id, '--network', 'ethereum', '--mode', 'test', '--address', 'none', '--actor', 'bob'],
      { USER: 'alice' },
    );
    expect(again.code, again.err).toBe(0);
    const rows = await audit();
    expect(
      rows.map((r) => [r.actor, r.old_treasury_address, r.new_treasury_address, r.old_hot_float_minor, r.new_hot_float_minor]),
    ).toEqual([
      ['alice', null, mixedCase.toLowerCase(), null, 25050n],
      ['bob', mixedCase.toLowerCase(), null, 25050n, 25050n], // the float is kept when not given
    ]);
    expect(rows[0]!.changed_at.getTime()).toBeLessThanOrEqual(rows[1]!.changed_at.getTime());
    const shown = await cli(['treasury', 'show', '--merchant', shop.id]);
    expect(shown.code).toBe(0);
    const [d] = JSON.parse(shown.out);
    expect(d).toMatchObject({ treasury_address: null, sweeps_go_to: 'refunds hot wallet', hot_float: '250.50', updated_by: 'bob' });
    expect(d.changes.map((c: { actor: string }) => c.actor)).toEqual(['bob', 'alice']);
  }, 240_000); // several CLI processes, each a tsx start-up: slow on a loaded 2-core machine

  it('sweep policy: defaults, then a configured minimum and fee cap; bad values exit 2', async () => {
    const base = ['sweep', 'policy'];
    const shown = await cli([...base, 'show', '--network', 'ethereum', '--mode', 'test', '--token', 'USDT']);
    expect(shown.code, shown.err).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({ min_amount: '10.00', max_fee_bps: 100, source: 'default' });
    const set = await cli([
      ...base,
      'set',
      '--network',
      'ethereum',
      '--mode',
      'test',
      '--token',
      'USDT',
      '--min',
      '2.5',
      '--max-fee-bps',
      '300',
      '--actor',
      'carol',
    ]);
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ min_amount: '2.50', max_fee_bps: 300, source: 'configured' });
    const bad = await cli([
      ...base,
      'set',
      '--network',
      'ethereum',
      '--mode',
      'test',
      '--token',
      'USDT',
      '--min',
      '1',
      '--max-fee-bps',
      '20000',
    ]);
    expect(bad.code).toBe(2);
    const row = await h.t.db.selectFrom('sweep_policies').selectAll().executeTakeFirstOrThrow();
    expect(row.min_amount_base).toBe(2_500_000n);
    expect(row.max_fee_bps).toBe(300);
  }, 240_000); // several CLI processes, each a tsx start-up: slow on a loaded 2-core machine

  it('sweep list / costs answer JSON; bad dates and unknown subcommands exit 2', async () => {
    const list = await cli(['sweep', 'list']);
    expect(list.code, list.err).toBe(0);
    expect(JSON.parse(list.out)).toEqual([]);
    const costs = await cli(['sweep', 'costs', '--since', '2026-01-01', '--until', '2027-01-01']);
    expect(costs.code, costs.err).toBe(0);
    expect(JSON.parse(costs.out).rows).toEqual([]);
    expect((await cli(['sweep', 'costs', '--since', 'yesterday', '--until', '2027-01-01'])).code).toBe(2);
    expect((await cli(['sweep', 'costs', '--since', '2027-01-01', '--until', '2026-01-01'])).code).toBe(2);
    expect((await cli(['sweep', 'frobnicate'])).code).toBe(2);
    expect((await cli(['treasury'])).code).toBe(2);
  }, 240_000); // several CLI processes, each a tsx start-up: slow on a loaded 2-core machine
});
