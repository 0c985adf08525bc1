import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSweeps, sweepCosts } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// Solana sweeps driven by the service: `sweep run` (the CLI, a child process) on the LiteSVM endpoint. The operator's
// gas station pays the fees and creates the treasury's token account; several deposits move in one transaction, each
// emptied deposit token account is closed and its rent comes back to the gas station. The cost report counts the
// rent the sweep locked (the treasury's new account) as spent and the rent the closes returned.
const run = promisify(execFile);
let h: SolanaServiceHarness;
let ticker: FakeTicker;
let station: string;
let rent: bigint;
const u6 = (n: number) => BigInt(Math.round(n * 1_000_000));

beforeAll(async () => {
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker, station } = await solanaSweepSetup(h, { token: 'USDC' }));
  rent = BigInt(await h.conn.getMinimumBalanceForRentExemption(165));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

const sweepRun = (merchantId: string) => sweepRunCli(h.env, ticker.url, merchantId);

async function fundedMerchant(
  name: string,
  amounts: string[],
): Promise<{ shop: ChainHarnessMerchant; deposits: string[]; treasury: string }> {
  const shop = await h.newMerchant(name);
  const treasury = Keypair.generate().publicKey.toBase58();
  await setTreasuryDestination(h.t.db, { merchantId: shop.id, network: 'solana', mode: 'test', treasuryAddress: treasury, actor: 'test' });
  const deposits: string[] = [];
  for (const amount of amounts) {
    const s = await h.paidSession(shop, { amount });
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
    }, 60_000);
    deposits.push(s.depositOwner);
  }
  return { shop, deposits, treasury };
}

const lamports = async (a: string) => BigInt(await h.conn.getBalance(new PublicKey(a), 'confirmed'));
const depositAccount = (owner: string) => getAssociatedTokenAddressSync(new PublicKey(h.mints.USDC), new PublicKey(owner), true);

describe('sweep run on Solana', () => {
  it('sweeps several deposits in one transaction, closes their token accounts, rent back to the gas station; costs count rent', async () => {
    const { shop, deposits, treasury } = await fundedMerchant('Rent back', ['10.00', '11.00', '12.00']);
    for (const d of deposits) expect(await h.conn.getAccountInfo(depositAccount(d), 'confirmed')).not.toBeNull();
    const before = await lamports(station);
    const r = await sweepRun(shop.id);
    expect(r.code, r.err).toBe(0);

    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweep).toMatchObject({ status: 'completed', method: 'solana-fee-payer', swept_base: u6(33), planned_base: u6(33) });
    // One batch transaction, signed by the gas station (fee payer) and every deposit owner; then one closing the
    // emptied token accounts.
    expect(sweep!.steps.map((s) => [s.purpose, s.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'succeeded'],
    ]);
    const [batch, close] = [sweep!.steps[0]!, sweep!.steps[1]!];
    expect(await h.transfersFrom(h.mints.USDC, station, treasury)).toEqual([{ to: treasury, amount: u6(33), tx: batch.tx_hash }]);
    expect(await h.tokenBalance(h.mints.USDC, treasury)).toBe(u6(33));
    for (const [i, d] of deposits.entries()) {
      expect(sweep!.sources.find((s) => s.address === d)).toMatchObject({ state: 'swept', swept_base: u6(10 + i), tx_hash: batch.tx_hash });
      // The deposit's token account is closed: its rent went back.
      expect(await h.conn.getAccountInfo(depositAccount(d), 'confirmed')).toBeNull();
    }
    // The ledger's figures are the chain's: rent back from three closes, rent paid once for the treasury's new
    // token account, and the fee; the gas station's balance moved by exactly that.
    expect(batch.native_moved).toBe(0n);
    expect(close.native_moved).toBe(3n * rent);
    expect(batch.rent_paid).toBe(rent);
    expect(sweep!.actual_fee).toBe(batch.fee! + close.fee!);
    const after = await lamports(station);
    expect(after - before).toBe(3n * rent - rent - sweep!.actual_fee);

    const costs = await sweepCosts(h.t.db, {
      since: new Date(Date.now() - 3_600_000),
      until: new Date(Date.now() + 60_000),
      merchantId: shop.id,
    });
    expect(costs).toHaveLength(1);
    expect(costs[0]).toMatchObject({
      network: 'solana',
      fee_base: sweep!.actual_fee,
      rent_paid_base: rent,
      rent_returned_base: 3n * rent,
      spent_base: sweep!.actual_fee + rent,
      net_base: before - after,
      swept_base_by_token: { USDC: String(u6(33)) },
    });

    // `sweep costs` (the CLI) reports the same.
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const cli = await run(
      'node',
      ['--import', 'tsx', 'src/cli/index.ts', 'sweep', 'costs', '--since', since, '--until', until, '--merchant', shop.id],
      {
        env: { ...process.env, ...h.env, LOG_LEVEL: 'silent' },
      },
    );
    expect(JSON.parse(cli.stdout).rows).toEqual([
      expect.objectContaining({ rent_paid_base: String(rent), rent_returned_base: String(3n * rent), net_base: String(before - after) }),
    ]);

    // The treasury's account exists now: the next sweep pays no rent, and gets the closed accounts' rent back.
    const again = await fundedMerchant('Rent back again', ['5.00', '6.00']);
    await setTreasuryDestination(h.t.db, {
      merchantId: again.shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const r2 = await sweepRun(again.shop.id);
    expect(r2.code, r2.err).toBe(0);
    const [second] = await listSweeps(h.t.db, { merchantId: again.shop.id, limit: 1 });
    expect(second!.status).toBe('completed');
    expect(second!.steps[0]).toMatchObject({ purpose: 'batch', rent_paid: 0n, native_moved: 0n });
    expect(second!.steps[1]).toMatchObject({ purpose: 'close', native_moved: 2n * rent });
    expect(await h.tokenBalance(h.mints.USDC, treasury)).toBe(u6(44));
  }, 300_000);
});
