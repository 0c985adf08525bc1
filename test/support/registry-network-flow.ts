import { randomBytes } from 'node:crypto';
import { Wallet } from 'ethers';
import { expect } from 'vitest';
import type { NetworkEntry } from '../../chains/registry.js';
import { OPERATOR_SLOT, isSweeper, type NetworkId, type TokenSymbol } from '../../chains/types.js';
import { feesAccount, journalAsset } from '../../src/ledger/journal/accounts.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { setSweepPolicy, setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { type ChainReconciliation, reconcile } from '../../src/reconcile/reconcile.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps } from '../../src/treasury/runner.js';
import { fund, payFrom, signer, walletAt, type DeployedToken } from './evm-tokens/scenario.js';
import type { FakeTicker } from './fake-ticker.js';
import { HARNESS_TOKEN_DECIMALS, type RegistryMerchant, type RegistryNetworksHarness } from './registry-networks-harness.js';
import type { WebhookReceiver } from './webhook-receiver.js';

// The whole life of a payment on one EVM network of the registry, through one service (registry-networks-harness.ts):
// the merchant's refund hot wallet registered and funded by the operator (its token top-up acknowledged), a session
// created through the API and paid on chain, `paid` with its webhook delivered, a partial refund paid on chain with
// its fee recorded as the hot wallet's native balance moved (the L1 data fee included on op-stack chains), the deposit
// swept to a treasury by whichever method the run-time detection picks, and finally `reconcile` of that network:
// ledger = chain, with no difference but the operator's own gas top-ups (acknowledged). Names no network.

export interface NetworkFlowOutcome {
  network: NetworkId;
  sweepMethods: string[];
  /** The refund's fee as journaled (native base units) and the L1 part of it (fee − gasUsed × effectiveGasPrice). */
  refundFee: bigint;
  refundL1Part: bigint;
  report: ChainReconciliation;
}

const units = (whole: bigint) => whole * 10n ** BigInt(HARNESS_TOKEN_DECIMALS);
const hex = (v: bigint) => `0x${v.toString(16)}`;
/** The native coin the operator sets on the hot wallet and on the gas station (no transaction a watcher sees). */
const HOT_GAS = 10n ** 19n;
const STATION_GAS = 10n ** 20n;

/**
 * Prices of every native coin of `entries` for the planner (fake Coinbase table). Anvil suggests a 1 gwei tip where
 * these networks take almost none, so fees in native coin run about 100 times the real ones: a coin priced at 10 USD
 * keeps the fee share of a few-dollar sweep near what it is on those networks (the policy allows 50 %).
 */
export function nativePriceTable(entries: readonly NetworkEntry[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const e of entries) out[e.nativeCoin.symbol] = { USDT: '10', USDC: '10' };
  return out;
}

/** The token a flow uses on `entry`: USDC where the issuers publish it (every new network), else the first one. */
export function flowToken(entry: NetworkEntry): TokenSymbol {
  const symbols = entry.live.tokens.map((t) => t.symbol);
  return symbols.includes('USDC') ? 'USDC' : symbols[0]!;
}

export async function runNetworkFlow(
  h: RegistryNetworksHarness,
  m: RegistryMerchant,
  receiver: WebhookReceiver,
  ticker: FakeTicker,
  entry: NetworkEntry,
): Promise<NetworkFlowOutcome> {
  const network = entry.id as NetworkId;
  const node = h.nodes[network];
  const token = flowToken(entry);
  const contract = h.tokens[network][token]!;
  const adapter = h.service.adapters.require(network, 'test');
  const chain = { network, mode: 'test' as const };
  const balanceOf = async (t: DeployedToken, owner: string, blockTag: number | string = 'latest') =>
    BigInt(await (t.contract.getFunction('balanceOf') as (a: string, o: object) => Promise<bigint>)(owner, { blockTag }));
  // What the operator gave from outside: reconcile books each as an unexplained native movement, acknowledged below.
  const operatorFunded = new Map<string, bigint | null>();

  // ── The operator registers the hot wallet, then funds it: gas set on the node, tokens by a transfer the watcher
  // journals as unexplained until acknowledged.
  const hot = m.hot[network];
  await registerWallets(h.t.db, [{ ...chain, address: hot, merchantId: m.id, role: 'refunds' }]);
  await node.rpc('anvil_setBalance', [hot, hex(HOT_GAS)]);
  operatorFunded.set(hot, HOT_GAS);
  await fund(contract, hot, units(100n));
  const topUp = await h.until(async () => {
    const u = await listUnexplained(h.t.db, { network, mode: 'test' });
    return u.length > 0 ? u : undefined;
  });
  expect(topUp).toHaveLength(1);
  expect(await acknowledgeUnexplained(h.t.db, topUp[0]!.entryId, 'operator hot wallet top-up')).toBe(true);

  // ── A session created through the API, the network and token picked on the hosted page's endpoint, paid on chain.
  const created = await m.client.post('/api/v1/checkout/sessions/create', {
    amount: '7.50',
    currency: 'USD',
    order_id: `reg-${network}-${randomBytes(4).toString('hex')}`,
  });
  expect(created.status, created.text).toBe(200);
  const sessionId = created.json.id as string;
  const sel = await fetch(`${h.base}/checkout/sessions/${sessionId}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network, token }),
  });
  const selection = (await sel.json()) as { deposit_address: string; amount_due_base: string };
  expect(sel.status, JSON.stringify(selection)).toBe(200);
  const due = BigInt(selection.amount_due_base);
  expect(due).toBe(7_500_000n);
  const payer = walletAt(40, node.provider);
  await node.rpc('anvil_setBalance', [payer.address, hex(10n ** 18n)]);
  await fund(contract, payer.address, due);
  await payFrom(payer, contract, selection.deposit_address, due);
  const paid = await h.until(async () => {
    const s = (await m.client.get(`/api/v1/checkout/sessions/${sessionId}`)).json;
    return s.payment_status === 'paid' ? s : undefined;
  }, 90_000);
  expect(paid).toMatchObject({ payment_status: 'paid', amount_received: '7.50' });
  const completed = await h.until(async () =>
    receiver.received.find((r) => r.eventType === 'payment.completed' && r.body.includes(sessionId) && r.answeredWith === 200),
  );
  expect(completed.problems).toEqual([]);

  // ── A partial refund through the API, paid from the hot wallet; its fee recorded as the chain charged it.
  const refundId = `reg-${network}-${randomBytes(4).toString('hex')}`;
  const refund = await m.client.post('/api/v1/refunds/create', {
    refund_id: refundId,
    session_id: sessionId,
    amount: 250,
    currency: token,
  });
  expect(refund.status, refund.text).toBe(201);
  const settled = await h.until(async () => {
    const r = (await m.client.get(`/api/v1/refunds/${refundId}`)).json;
    return r.status === 'completed' || r.status === 'failed' ? r : undefined;
  }, 120_000);
  expect(settled.status, JSON.stringify(settled)).toBe('completed');
  expect(await balanceOf(contract, payer.address)).toBe(2_500_000n);
  await h.until(async () =>
    receiver.received.find((r) => r.eventType === 'refund.succeeded' && r.body.includes(refundId) && r.answeredWith === 200),
  );
  const payout = await h.t.db
    .selectFrom('journal_entries')
    .select(['id', 'tx_hash'])
    .where('kind', '=', 'refund_payout')
    .where('object_id', '=', settled.id)
    .executeTakeFirstOrThrow();
  expect(payout.tx_hash).toBe(settled.transaction_hash);
  const feeLeg = await h.t.db
    .selectFrom('journal_legs')
    .select('amount')
    .where('entry_id', '=', payout.id)
    .where('account', '=', feesAccount(network))
    .where('asset', '=', journalAsset(network, 'test', 'native'))
    .executeTakeFirstOrThrow();
  const receipt = (await node.provider.getTransactionReceipt(settled.transaction_hash))!;
  const [before, after] = await Promise.all([
    node.provider.getBalance(hot, receipt.blockNumber - 1),
    node.provider.getBalance(hot, receipt.blockNumber),
  ]);
  // The hot wallet sent nothing else in that block: what it lost is the fee, and the journal says exactly that.
  expect(feeLeg.amount, `${network}: journaled refund fee vs the hot wallet's native balance`).toBe(before - after);
  const l2 = receipt.gasUsed * receipt.gasPrice;
  const l1Part = feeLeg.amount - l2;
  if (entry.fees?.l1 === 'op-stack') expect(l1Part, `${network}: the L1 data fee is part of the refund's fee`).toBeGreaterThan(0n);
  else expect(l1Part).toBe(0n);

  // ── The deposit swept to a treasury: the operator funds the gas station, sets a policy and a destination; the
  // planner (in process, as `sweep run` plans) creates the sweep, the service's worker drives it through the signer.
  if (!isSweeper(adapter)) throw new Error(`${network} is not a Sweeper`);
  const station = adapter.normalizeAddress((await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation)).address)!;
  await node.rpc('anvil_setBalance', [station, hex(STATION_GAS)]);
  operatorFunded.set(station, STATION_GAS);
  const treasury = Wallet.createRandom().address.toLowerCase();
  await setSweepPolicy(h.t.db, { ...chain, token, minAmountBase: 1n, maxFeeBps: 5000, actor: 'e2e' });
  await setTreasuryDestination(h.t.db, { merchantId: m.id, ...chain, treasuryAddress: treasury, actor: 'e2e' });
  const depositAddress = adapter.normalizeAddress(selection.deposit_address)!;
  const prices = createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 });
  let lastPlan: Awaited<ReturnType<typeof planSweeps>> | undefined;
  const plan = await h
    .until(async () => {
      lastPlan = await planSweeps({ db: h.t.db, adapters: h.service.adapters, keys: signer, prices }, { merchantId: m.id, network, token });
      return lastPlan.batches.some((b) => b.request.sources.some((s) => s.address === depositAddress)) ? lastPlan : undefined;
    }, 90_000)
    .catch((e: Error) => {
      throw new Error(
        `${network}: the deposit was never planned (${e.message}); last plan skipped ${JSON.stringify(lastPlan?.skipped, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
      );
    });
  const created2 = await createSweeps(h.t.db, plan.batches);
  expect(created2.length).toBeGreaterThan(0);
  const sweeps = await h.until(async () => {
    const mine = (await listSweeps(h.t.db, { merchantId: m.id, limit: 20 })).filter((s) => s.network === network);
    return mine.length > 0 && mine.every((s) => s.status === 'completed' || s.status === 'failed') ? mine : undefined;
  }, 120_000);
  expect(
    sweeps.map((s) => s.status),
    JSON.stringify(sweeps.map((s) => s.failure_reason)),
  ).toEqual(sweeps.map(() => 'completed'));
  expect(await balanceOf(contract, depositAddress)).toBe(0n);
  const sweptToTreasury = sweeps.reduce((a, s) => a + s.swept_base, 0n);
  expect(sweptToTreasury).toBeGreaterThan(0n);
  expect(await balanceOf(contract, treasury)).toBe(sweptToTreasury);
  const sweepEntries = await h.t.db
    .selectFrom('journal_entries')
    .select('tx_hash')
    .where('kind', '=', 'sweep')
    .where('network', '=', network)
    .execute();
  const stepHashes = sweeps.flatMap((s) => s.steps.filter((st) => st.status === 'succeeded').map((st) => st.tx_hash));
  expect(sweepEntries.map((e) => e.tx_hash).sort()).toEqual([...stepHashes].sort());

  // ── Reconcile this network, pinned at a final height above everything journaled on it: books = chain.
  const top = await h.t.db
    .selectFrom('journal_entries')
    .select((eb) => eb.fn.max('block_height').as('h'))
    .where('network', '=', network)
    .executeTakeFirstOrThrow();
  await h.until(async () => {
    const final = await watcherFinalHeight(h.t.db, chain);
    return final !== null && final >= BigInt(top.h as unknown as string) ? true : undefined;
  }, 120_000);
  const report = await h.until(async () => {
    const r = await reconcile({ db: h.t.db, adapters: h.service.adapters }, { network, mode: 'test' });
    for (const u of r.chains[0]?.unexplainedNative ?? []) {
      // Only the operator's own top-ups may be unexplained, each by exactly what was set.
      expect(operatorFunded.has(u.address), `${network}: unexplained native movement of ${u.address}`).toBe(true);
      const funded = operatorFunded.get(u.address);
      if (funded !== null && funded !== undefined) expect(u.amount, `${network} ${u.address}`).toBe(funded);
      expect(await acknowledgeUnexplained(h.t.db, u.entryId, 'operator gas top-up')).toBe(true);
    }
    return r.ok ? r : undefined;
  }, 120_000);
  const c = report.chains[0]!;
  expect(c.skipped).toBeUndefined();
  expect(c.differences).toEqual([]);
  for (const s of c.summary) expect(s.difference).toBe(0n);
  return {
    network,
    sweepMethods: [...new Set(sweeps.map((s) => s.method))],
    refundFee: feeLeg.amount,
    refundL1Part: l1Part,
    report: c,
  };
}
