import { HDNodeWallet, Interface, type JsonRpcProvider } from 'ethers';
import { sql } from 'kysely';
import { NETWORKS } from '../../chains/registry.js';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import type { Db } from '../../src/db/database.js';
import type { MerchantApi } from './api.js';
import type { SimEvm } from './env/evm.js';
import type { SimTron } from './env/tron.js';
import type { Violation } from './contract.js';
import { tronHex } from './invariants/tron-chain.js';
import type { Prng } from './prng.js';
import { type EvmPayer, evmPayer } from './payer.js';

const ERC20_APPROVE = new Interface(['function approve(address spender, uint256 value)']);

// Subscriptions in a seed (issue #20; docs/simulation.md "Scenario"): a customer wallet approves the merchant's
// charger from the authorization page's selection (POST /subscribe/{id}/select, then ERC-20 `approve` as the page's
// script sends it), the first period is charged, then renewals come due within the seed: the runner moves the
// subscription's `next_action_at` to now (as if the period ran out, the way "late" sessions move `expires_at`). Before
// the failing renewal the customer revokes the allowance (approve 0) or lowers it below one period's price; the charge
// fails before gas (insufficient_allowance) and the subscription goes past_due (docs/subscriptions.md); the customer
// then approves again straight from the wallet, which restores the payment method and retries the open invoice at once.
// Some subscriptions are canceled through the API at the end. Everything is drawn from the seed's scenario stream.
// On TRON (the fake java-tron over its Anvil node) the customer's wallet is the same kind of EVM key: its TRON address is
// the key's address under the 0x41 prefix, its TRC-20 `approve` goes to the node under the fake as the payer's transfers
// do (java-tron executes TRC-20 calls on the same EVM), and the service detects it from the Approval log over
// java-tron's JSON-RPC and charges through the wallet API, its charger paying energy in TRX (seed-networks.ts funds it).
// On Solana (scenario-subscriptions-solana.ts) the customer is an ed25519 keypair: SPL Token `ApproveChecked` naming
// the page's spender as delegate, `Revoke` to revoke, and after the failed renewal it authorizes again through the
// page (select, then ApproveChecked), the path docs/subscriptions.md gives for Solana, where a plain `Revoke` or a
// lowered delegation leaves no log the service could react to at once.
// The customer's side is a `SubscriptionCustomer` (evmCustomer here, solanaCustomer there); the flow is one.

export type AllowanceChange = 'keep' | 'revoke' | 'lower';

export interface SubscriptionPlan {
  at: number;
  merchant: number;
  network: string;
  token: 'USDT' | 'USDC';
  /** Price of one period, USD cents. */
  amountCents: number;
  /** Renewals brought due after the first charge. */
  renewals: number;
  /** What the customer does to the allowance before the first renewal (revoke/lower: that renewal fails, then recovers). */
  allowance: AllowanceChange;
  cancelAtEnd: boolean;
}

/**
 * Where the simulator runs subscriptions: every registry network (each family has a customer above or in
 * scenario-subscriptions-solana.ts). A seed draws its subscriptions' networks (`prng.pick`) among the networks of its
 * run in the run's order, so a network joining this list changes only the subscription plans of seeds that run it (the
 * sessions, refunds and fault schedule they draw do not: the subscriptions' stream is a fork of its own). Solana joined
 * on 2026-11-28, the registry's rollups and Polygon (issue 37) on 2026-11-29.
 */
export const SUBSCRIPTION_NETWORKS: readonly string[] = NETWORKS.map((n) => n.id);

export function buildSubscriptionPlans(prng: Prng, o: { activeMs: number; networks: string[]; merchants: number }): SubscriptionPlan[] {
  const networks = o.networks.filter((n) => SUBSCRIPTION_NETWORKS.includes(n));
  if (networks.length === 0) return [];
  const count = prng.int(1, 2);
  const plans: SubscriptionPlan[] = [];
  for (let i = 0; i < count; i++)
    plans.push({
      at: prng.int(0, Math.max(0, o.activeMs - 10_000)),
      merchant: prng.int(0, o.merchants - 1),
      network: prng.pick(networks),
      token: prng.pick(['USDT', 'USDC'] as const),
      amountCents: prng.int(100, 3000),
      renewals: prng.int(1, 2),
      // The first subscription of a seed always has its allowance taken away and restored: every seed exercises dunning.
      allowance: i === 0 ? prng.pick(['revoke', 'lower'] as const) : prng.pick(['keep', 'revoke', 'lower'] as const),
      cancelAtEnd: prng.chance(0.4),
    });
  return plans.sort((a, b) => a.at - b.at);
}

/** A customer wallet per subscription: its own HD account, apart from the service's and the payer's, per run index. */
export function customerWallet(mnemonic: string, runIndex: number, i: number, chain: SubscriptionChain): HDNodeWallet {
  return HDNodeWallet.fromPhrase(mnemonic, undefined, `m/44'/60'/7'/0/${runIndex * 16 + i}`).connect(chain.provider);
}

/**
 * A subscription's customer as the flow drives it: a wallet of its own on the subscription's network, given fees and
 * tokens before the subscription is created, then authorizing the page's spender (and changing that authorization).
 */
export interface SubscriptionCustomer {
  network: string;
  decimals(token: 'USDT' | 'USDC'): number;
  /** The customer's address as the page and the payer take it (TRON, Solana: base58). */
  address: string;
  /** Fees for its approvals, and `amount` base units of `token` for the charges (paid by the simulator's payer). */
  fund(token: 'USDT' | 'USDC', amount: bigint): Promise<void>;
  /** The wallet authorizing `spender` (as the page answered it) to pull `token`; `close` once the flow is over. */
  authorizer(token: 'USDT' | 'USDC', spender: string, onRebroadcast: (hash: string) => void): CustomerAuthorizer;
  /** Tether's ERC-20 `approve` refuses a change from one non-zero allowance to another (EVM, TRON): reset to 0 first.
   * An SPL delegation simply replaces the previous one. */
  resetsTether: boolean;
  /** How the customer authorizes again after the failed renewal: straight from the wallet (EVM, TRON: the poller
   * scans the Approval log), or through the page's selection first (Solana: docs/subscriptions.md "Revocation and
   * re-authorization"). */
  restore: 'wallet' | 'page';
}

export interface CustomerAuthorizer {
  /** Sets the spender's allowance to `value` (0: revoked); resolves with the transaction's id once it landed. */
  approve(value: bigint): Promise<string>;
  close(): void;
}

/** What a subscription's customer needs of its chain: an EVM node to send `approve` to (TRON: the node under the fake). */
export interface SubscriptionChain {
  network: string;
  provider: JsonRpcProvider;
  decimals(token: 'USDT' | 'USDC'): number;
  /** The token contract on the node (0x). */
  contract(token: 'USDT' | 'USDC'): string;
  /** The customer's address as the API and the payer take it (TRON: base58). */
  address(evm: string): string;
  /** The page's `spender` in the 0x form `approve` takes. */
  spenderHex(spender: string): string;
  pay(token: 'USDT' | 'USDC', to: string, amount: bigint): Promise<string>;
  adopt(wallet: EvmPayer): () => void;
}

export function evmSubscriptionChain(e: SimEvm): SubscriptionChain {
  return {
    network: e.contract.network,
    provider: e.chain.node.provider,
    decimals: (t) => e.chain.tokens[t].decimals,
    contract: (t) => e.chain.tokens[t].address,
    address: (evm) => evm,
    spenderHex: (spender) => spender,
    pay: (t, to, amount) => e.pay(t, to, amount),
    adopt: (w) => e.adopt(w),
  };
}

export function tronSubscriptionChain(t: SimTron): SubscriptionChain {
  return {
    network: 'tron',
    provider: t.chain.node.provider,
    decimals: (token) => t.chain.tokens[token].decimals,
    contract: (token) => t.chain.evmTokens[token],
    address: (evm) => tronBase58(evmHexToTron(evm)),
    spenderHex: (spender) => {
      const hex = tronHex(spender);
      if (!hex) throw new Error(`tron: the page's spender ${spender} is not a TRON address`);
      return hex;
    },
    pay: (token, to, amount) => t.pay(token, to, amount),
    adopt: (w) => t.adopt(w),
  };
}

/**
 * The customer of an EVM-like chain (Ethereum, BSC; TRON through the node under the fake): `customer`'s key, ERC-20
 * `approve` sent through a re-broadcasting wallet, gas set on the node.
 */
export function evmCustomer(chain: SubscriptionChain, customer: HDNodeWallet): SubscriptionCustomer {
  const provider = chain.provider;
  const address = chain.address(customer.address);
  // Gas for the customer's approvals: 1 ETH/BNB, set again whenever below 0.1.
  const ensureGas = async () => {
    if ((await provider.getBalance(customer.address)) < 10n ** 17n)
      await provider.send('anvil_setBalance', [customer.address, '0xde0b6b3a7640000']);
  };
  return {
    network: chain.network,
    decimals: (token) => chain.decimals(token),
    address,
    resetsTether: true,
    restore: 'wallet',
    async fund(token, amount) {
      await ensureGas();
      await chain.pay(token, address, amount);
    },
    authorizer(token, spender, onRebroadcast) {
      const spenderHex = chain.spenderHex(spender);
      const tokenAddress = chain.contract(token);
      // The customer's wallet keeps what it signed and sends it again when a reorg dropped it (../payer.ts), while it
      // waits and after every reorg fault (adopted by the chain's resync), as the payer does for payments: an approval a
      // reorg removed is the same approval sent again, never lost (seed 2 once waited 240 s for a renewal failure that
      // the dropped "lower" approval could no longer cause).
      const wallet = evmPayer(customer, provider);
      const forget = chain.adopt(wallet);
      return {
        async approve(value) {
          const data = ERC20_APPROVE.encodeFunctionData('approve', [spenderHex, value]);
          // Gas is set with anvil_setBalance, which is no transaction: a reorg fault re-mining the blocks since undoes it
          // (seed 134: the customer's first approve refused for "insufficient funds" right after a BSC reorg). Set it
          // again before each approve, and again while a reorg keeps undoing it (seed 247 of the 1,000-seed run: the one
          // retry set it while the reorg was still under way, which undid it once more).
          await ensureGas();
          const tx = await sendWithGas(() => wallet.send(tokenAddress, data), ensureGas);
          await wallet.mined(tx.hash, 60_000, onRebroadcast);
          return tx.hash;
        },
        close: forget,
      };
    },
  };
}

export interface SubscriptionDeps {
  db: Db;
  base: string;
  api: MerchantApi;
  customer: SubscriptionCustomer;
  key: string;
  ev: (kind: string, detail: Record<string, unknown>) => void;
  violations: Violation[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long a step may take the service before it is a violation: generous, because a role restarted by a fault can
 * take more than a minute to start under tsx on a loaded machine (seed 3 once waited 100 s for its worker).
 */
const WAIT_MS = 240_000;

export async function runSubscription(d: SubscriptionDeps, plan: SubscriptionPlan): Promise<void> {
  const { api, customer, ev } = d;
  const decimals = customer.decimals(plan.token);
  const priceBase = BigInt(plan.amountCents) * 10n ** BigInt(decimals - 2);
  // Fees for the customer's approvals, and tokens for the first charge and the renewals.
  const customerAddress = customer.address;
  await customer.fund(plan.token, priceBase * BigInt(plan.renewals + 2));

  const created = await api.call(
    'POST',
    '/api/v1/subscriptions/create',
    {
      items: [
        {
          price_data: {
            price_id: `price-${d.key}`,
            currency: 'USD',
            product: 'Sim plan',
            unit_amount: plan.amountCents,
            recurring: { interval: 'month' },
          },
          quantity: 1,
        },
      ],
      customer: `cus-${d.key}`,
    },
    { idempotencyKey: `sub-${d.key}` },
  );
  if (created.status !== 200) {
    d.violations.push({ invariant: 'api', message: `subscription create answered ${created.status}: ${JSON.stringify(created.json)}` });
    return;
  }
  const id = String(created.json.id);
  const sel = await pageSelect(d.base, id, plan.network, plan.token, customerAddress);
  if (sel.status !== 200) {
    d.violations.push({
      invariant: 'api',
      message: `subscription select answered ${sel.status}: ${JSON.stringify(sel.json)}`,
      subject: id,
    });
    return;
  }
  const spender = String(sel.json.spender);
  const full = BigInt(sel.json.allowance_base);
  const wallet = customer.authorizer(plan.token, spender, (hash) => ev('subscription.approve.rebroadcast', { subscriptionId: id, hash }));
  const current = { value: 0n };
  const approve = async (value: bigint, why: string) => {
    // Tether's approve refuses a change from one non-zero allowance to another: reset to 0 first, as the page does.
    if (customer.resetsTether && plan.token === 'USDT' && current.value !== 0n && value !== 0n) await approve(0n, `${why} (reset first)`);
    const hash = await wallet.approve(value);
    current.value = value;
    ev('subscription.approve', { subscriptionId: id, value: value.toString(), why, hash });
  };
  try {
    ev('subscription.created', { subscriptionId: id, network: plan.network, token: plan.token, priceBase: priceBase.toString(), plan });
    await approve(full, 'authorize');

    const first = await waitStatus(d, id, paidUp, WAIT_MS);
    if (!first) return stuck(d, id, 'first charge');
    ev('subscription.charged', { subscriptionId: id, period: 1, invoice: first.latest_invoice });

    for (let r = 1; r <= plan.renewals; r++) {
      const failing = r === 1 && plan.allowance !== 'keep';
      if (failing) {
        await approve(plan.allowance === 'revoke' ? 0n : priceBase - 1n, plan.allowance);
        // Until the change is final (3 confirmations) the charge's pre-flight may still read the old allowance at the
        // final height; the customer's change is what this renewal is about, so it waits for it.
        await sleep(5000);
      }
      const before = await getSub(d, id);
      if (!before) return stuck(d, id, 'the subscription to be readable');
      const due = await retryDb(() =>
        sql`update subscriptions set next_action_at = now() where id = ${id} and next_action = 'renew' and status = 'active'`.execute(d.db),
      );
      ev('subscription.renewal-due', { subscriptionId: id, renewal: r, moved: Number(due.numAffectedRows ?? 0), failing });
      if (!failing) {
        const renewed = await waitStatus(d, id, (s) => paidUp(s) && s.latest_invoice !== before.latest_invoice, WAIT_MS);
        if (!renewed) return stuck(d, id, `renewal ${r}`);
        ev('subscription.charged', { subscriptionId: id, period: r + 1, invoice: renewed.latest_invoice });
        continue;
      }
      const pastDue = await waitStatus(d, id, (s) => s.status === 'past_due', WAIT_MS);
      if (!pastDue) return stuck(d, id, `renewal ${r} to fail`);
      ev('subscription.past_due', { subscriptionId: id, renewal: r, invoice: pastDue.latest_invoice });
      if (customer.restore === 'page') {
        // The page of a past_due subscription asks to authorize again: the same selection, then the wallet's approve.
        const again = await pageSelect(d.base, id, plan.network, plan.token, customerAddress);
        ev('subscription.reselect', { subscriptionId: id, status: again.status, spender: again.json?.spender });
        if (again.status !== 200 || String(again.json.spender) !== spender || BigInt(again.json.allowance_base) !== full) {
          d.violations.push({
            invariant: 'api',
            message: `subscription re-authorization select answered ${again.status}: ${JSON.stringify(again.json)} (first: spender ${spender}, allowance ${full})`,
            subject: id,
          });
          return;
        }
      }
      await approve(full, 'restore');
      const recovered = await waitStatus(d, id, (s) => paidUp(s) && s.latest_invoice !== before.latest_invoice, WAIT_MS);
      if (!recovered) return stuck(d, id, `recovery of renewal ${r}`);
      ev('subscription.recovered', { subscriptionId: id, renewal: r, invoice: recovered.latest_invoice });
    }
    if (plan.cancelAtEnd) {
      const c = await api.call('POST', `/api/v1/subscriptions/${id}/cancel`, {}, { idempotencyKey: `cancel-${id}` });
      ev('subscription.cancel', { subscriptionId: id, status: c.status, state: c.json?.status });
      if (c.status !== 200)
        d.violations.push({
          invariant: 'api',
          message: `subscription cancel answered ${c.status}: ${JSON.stringify(c.json)}`,
          subject: id,
        });
    }
  } finally {
    wallet.close();
  }
}

/**
 * A step the service did not reach within WAIT_MS although the customer did their part: a violation (the faults of the
 * active phase heal within seconds; the drain does not wait for subscriptions).
 */
function stuck(d: SubscriptionDeps, id: string, waitingFor: string): void {
  d.ev('subscription.stuck', { subscriptionId: id, waitingFor });
  d.violations.push({
    invariant: 'subscription-flow',
    message: `subscription ${id}: waited ${WAIT_MS / 1000} s for ${waitingFor}`,
    subject: id,
  });
}

/** Active with its latest invoice paid (the period's charge settled, not merely invoiced). */
const paidUp = (s: any) => s.status === 'active' && s.latest_invoice_object?.status === 'paid';

async function getSub(d: SubscriptionDeps, id: string): Promise<any | undefined> {
  const r = await d.api.call('GET', `/api/v1/subscriptions/${id}?expand=latest_invoice`);
  return r.status === 200 ? r.json : undefined;
}

async function waitStatus(d: SubscriptionDeps, id: string, ok: (s: any) => boolean, ms: number): Promise<any | undefined> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const s = await getSub(d, id).catch(() => undefined);
    if (s && ok(s)) return s;
    await sleep(500);
  }
  return undefined;
}

/** The authorization page's selection (unsigned, as the page's script calls it), retried like the page would. */
async function pageSelect(base: string, id: string, network: string, token: string, address: string) {
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${base}/subscribe/${id}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network, token, address }),
        signal: AbortSignal.timeout(10_000),
      });
      const json = (await res.json().catch(() => undefined)) as any;
      if (res.status < 500 || Date.now() > end) return { status: res.status, json };
    } catch (err) {
      if (Date.now() > end) throw err;
    }
    await sleep(300);
  }
}

/** A database statement retried while the private PostgreSQL is down (a restart fault). */
async function retryDb<T>(f: () => Promise<T>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(300);
    }
  }
}

/** Sends; refused for "insufficient funds" (a reorg undid the gas set with anvil_setBalance), sets it and sends again. */
async function sendWithGas<T>(send: () => Promise<T>, ensureGas: () => Promise<void>, attempts = 6): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await send();
    } catch (err) {
      if (i >= attempts || !String((err as Error)?.message).includes('insufficient funds')) throw err;
      await sleep(250 * i);
      await ensureGas();
    }
  }
}
