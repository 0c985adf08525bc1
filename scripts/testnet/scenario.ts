import { randomBytes } from 'node:crypto';
import { SignedClient, type TestResponse } from '../../test/support/signed-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { minorToBase, show, type RunAmounts } from './amounts.js';
import type { PayerChain } from './chain.js';
import type { Operator, RunMerchant } from './operator.js';
import { reconcileStep, sweepStep, type Funded } from './operator-steps.js';
import { preflight } from './preflight.js';
import type { Profile, TokenSpec } from './profiles.js';
import { StepFailure, type Recorder, type StepContext } from './report.js';

// The scenario, the same on every network: preflight, a merchant, a session paid from the test wallet (`paid` and
// its signed webhook), part of it refunded (`completed` with a transaction hash, the payer credited exactly), a
// subscription authorized and its first charge collected, the deposit address swept and the network reconciled as the
// operator does both (operator-steps.ts). The run stops at the first failed step.

export interface ScenarioInput {
  profile: Profile;
  token: TokenSpec;
  chain: PayerChain;
  amounts: RunAmounts;
  serviceUrl: string;
  /** Creates the run's merchant; null uses `existing` (its hot wallet and charger funded by the operator). */
  operator: Operator | null;
  existing: { key: string; secret: string; merchantId?: string } | null;
  timeoutMs: number;
  pollMs: number;
}

export async function runScenario(i: ScenarioInput, rec: Recorder): Promise<void> {
  const { profile, token, chain, amounts } = i;
  const link = (hash: string) => profile.explorerTx(hash);
  const base = (minor: bigint) => minorToBase(minor, token.decimals);
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + i.timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new StepFailure(`timed out after ${Math.round(i.timeoutMs / 1000)} s waiting for ${what}`);
      await new Promise((r) => setTimeout(r, i.pollMs));
    }
  };
  const expectStatus = (what: string, r: TestResponse, status: number): any => {
    if (r.status !== status) throw new StepFailure(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    return r.json;
  };
  const publicPost = async (path: string, body: unknown): Promise<{ status: number; json: any }> => {
    const res = await fetch(i.serviceUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };

  let receiver: WebhookReceiver | null = null;
  // Native coin this run sent to the service's wallets, and the addresses it touched: what reconcile must find exact.
  const funded: Funded = [];
  const touched: string[] = [];
  try {
    await rec.step('preflight', (s) =>
      preflight({ profile, token, chain, amounts, serviceUrl: i.serviceUrl, funds: i.operator !== null }, s),
    );

    let merchant: RunMerchant | null = null;
    let client: SignedClient;
    if (i.operator) {
      const operator = i.operator;
      await rec.step('merchant', async (s) => {
        receiver = await startWebhookReceiver([]);
        merchant = await operator.createMerchant(`testnet ${profile.name} ${new Date().toISOString()}`, receiver.url);
        receiver.secrets.push(merchant.webhookSecret);
        s.data.merchant_id = merchant.merchantId;
        s.data.webhook_url = receiver.url;
        return `merchant ${merchant.merchantId}, webhooks to ${receiver.url}`;
      });
      const m = merchant as unknown as RunMerchant;
      client = new SignedClient(i.serviceUrl, { key: m.key, secret: m.secret });
    } else {
      rec.skip('merchant', 'existing merchant (SERVICE_API_KEY): nothing created');
      client = new SignedClient(i.serviceUrl, i.existing!);
    }
    const webhook = async (s: StepContext, type: string, objectId: string): Promise<void> => {
      const r = receiver as WebhookReceiver | null;
      if (!r) {
        s.note(`${type} webhook not checked: an existing merchant's webhooks go to its own URL`);
        return;
      }
      const matches = () => r.received.filter((w) => w.eventType === type && w.body.includes(`"${objectId}"`));
      await until(`the ${type} webhook`, async () => (matches().length ? true : undefined));
      const bad = matches().find((w) => w.problems.length > 0 || w.matchedSecret < 0);
      if (bad) throw new StepFailure(`${type} webhook failed verification: ${bad.problems.join('; ') || 'signature matches no secret'}`);
      s.note(`${type} webhook ${matches()[0]!.eventId}: signature valid`);
      s.data[`webhook_${type}`] = matches()[0]!.eventId ?? null;
    };

    // The session, and the hosted page's selection: deposit address and exact amount.
    let sessionId = '';
    let deposit = '';
    let due = 0n;
    await rec.step('session', async (s) => {
      const created = expectStatus(
        'create session',
        await client.post('/api/v1/checkout/sessions/create', {
          amount: amounts.session,
          currency: token.symbol,
          order_id: `testnet-${profile.name}-${Date.now()}-${randomBytes(3).toString('hex')}`,
          description: `stablepay testnet run (${profile.name})`,
        }),
        200,
      );
      sessionId = created.id;
      const sel = await publicPost(`/checkout/sessions/${encodeURIComponent(sessionId)}/select`, {
        network: profile.serviceNetwork,
        token: token.symbol,
      });
      if (sel.status !== 200)
        throw new StepFailure(
          `select ${profile.serviceNetwork}/${token.symbol}: HTTP ${sel.status} ${JSON.stringify(sel.json)} (is CHAIN_${profile.serviceNetwork.toUpperCase()}_TEST_* set on the service?)`,
        );
      const same =
        profile.family === 'evm'
          ? sel.json.token_contract.toLowerCase() === token.address.toLowerCase()
          : sel.json.token_contract === token.address;
      if (!same || sel.json.token_decimals !== token.decimals) {
        throw new StepFailure(
          `the service's ${token.symbol} is ${sel.json.token_contract} (${sel.json.token_decimals} decimals), this run's ${token.address} (${token.decimals}); configure both alike`,
        );
      }
      deposit = sel.json.deposit_address;
      due = BigInt(sel.json.amount_due_base);
      if (due !== base(amounts.sessionMinor))
        throw new StepFailure(`session asks ${due} base units, expected ${base(amounts.sessionMinor)}`);
      Object.assign(s.data, { session_id: sessionId, deposit_address: deposit, amount_due_base: due.toString(), page: created.url });
      return `session ${sessionId}: pay ${show(due, token.decimals, token.symbol)} to ${deposit}`;
    });

    await rec.step('pay', async (s) => {
      const hash = await chain.pay(token, deposit, due);
      s.tx('payment', hash, link(hash));
      s.data.tx = hash;
      return `${show(due, token.decimals, token.symbol)} sent from ${chain.payer}`;
    });

    await rec.step('paid', async (s) => {
      await until('payment_status paid', async () => {
        const r = expectStatus('get session', await client.get(`/api/v1/checkout/sessions/${sessionId}`), 200);
        return r.payment_status === 'paid' ? true : undefined;
      });
      await webhook(s, 'payment.completed', sessionId);
      return 'session paid, signed webhook received';
    });

    const refundBase = base(amounts.refundMinor);
    if (i.operator && merchant) {
      const m = merchant as RunMerchant;
      const operator = i.operator;
      await rec.step('fund hot wallet', async (s) => {
        const hot = await operator.refundHotWallet(m.merchantId);
        s.data.hot_wallet = hot;
        touched.push(hot);
        const gasTx = await chain.sendNative(hot, profile.fundGas);
        funded.push({ hash: gasTx, address: hot, asset: 'native', amount: profile.fundGas });
        s.tx(`${show(profile.fundGas, profile.native.decimals, profile.native.symbol)} for refund fees`, gasTx, link(gasTx));
        const tokenTx = await chain.transferToken(token, hot, refundBase);
        funded.push({ hash: tokenTx, address: hot, asset: token.symbol, amount: refundBase });
        s.tx(`${show(refundBase, token.decimals, token.symbol)} to refund`, tokenTx, link(tokenTx));
        return `refund hot wallet ${hot} funded`;
      });
    } else {
      rec.skip('fund hot wallet', 'existing merchant: the operator funds its hot wallet (npm run cli -- payouts wallets)');
    }

    await rec.step('refund', async (s) => {
      const before = await chain.tokenBalance(token, chain.payer);
      const refundId = `testnet-rf-${Date.now()}-${randomBytes(3).toString('hex')}`;
      expectStatus(
        'create refund',
        await client.post('/api/v1/refunds/create', {
          session_id: sessionId,
          refund_id: refundId,
          amount: Number(amounts.refundMinor),
          currency: token.symbol,
          reason: 'requested_by_customer',
        }),
        201,
      );
      const done = await until('refund completed', async () => {
        const r = expectStatus('get refund', await client.get(`/api/v1/refunds/${refundId}`), 200);
        if (r.status === 'failed') throw new StepFailure(`refund failed: ${r.failure_reason}`);
        return r.status === 'completed' ? (r as { id: string; transaction_hash: string }) : undefined;
      });
      s.tx('refund', done.transaction_hash, link(done.transaction_hash));
      if (!(await chain.succeeded(done.transaction_hash)))
        throw new StepFailure(`refund ${done.transaction_hash} did not succeed on chain`);
      const received = (await chain.tokenBalance(token, chain.payer)) - before;
      if (received !== refundBase) throw new StepFailure(`payer received ${received} base units, expected ${refundBase}`);
      Object.assign(s.data, { refund_id: done.id, tx: done.transaction_hash, received_base: received.toString() });
      await webhook(s, 'refund.succeeded', refundId); // the session flow's events name the merchant's refund_id
      return `${show(refundBase, token.decimals, token.symbol)} back to the payer, completed`;
    });

    await rec.step('subscription', async (s) => {
      const sub = expectStatus(
        'create subscription',
        await client.post('/api/v1/subscriptions/create', {
          items: [
            {
              price_data: {
                price_id: 'testnet',
                currency: 'USD',
                product: 'Testnet plan',
                unit_amount: Number(amounts.subscriptionMinor),
                recurring: { interval: 'month' },
              },
              quantity: 1,
            },
          ],
          customer: `cus_testnet_${profile.name}`,
          iterations: 1,
        }),
        200,
      );
      s.data.subscription_id = sub.id;
      let charger = false;
      for (let round = 0; ; round++) {
        const sel = await publicPost(`/subscribe/${encodeURIComponent(sub.id)}/select`, {
          network: profile.serviceNetwork,
          token: token.symbol,
          address: chain.payer,
        });
        if (sel.status !== 200) throw new StepFailure(`subscription select: HTTP ${sel.status} ${JSON.stringify(sel.json)}`);
        if (!charger && i.operator) {
          const gasTx = await chain.sendNative(sel.json.spender, profile.fundGas);
          funded.push({ hash: gasTx, address: sel.json.spender, asset: 'native', amount: profile.fundGas });
          touched.push(sel.json.spender);
          s.tx(
            `${show(profile.fundGas, profile.native.decimals, profile.native.symbol)} to the charger ${sel.json.spender}`,
            gasTx,
            link(gasTx),
          );
          charger = true;
        }
        if (sel.json.authorized) break;
        const walletTransactions = (sel.json.wallet_transactions ?? []) as unknown[];
        const hashes = await chain.authorize(token, sel.json.spender, BigInt(sel.json.allowance_base), {
          resetFirst: sel.json.reset_first === true,
          walletTransactions,
        });
        for (const h of hashes) s.tx('authorization', h, link(h));
        // A reset-first wallet transaction is only approve(0): select again for the approval itself.
        if (!(sel.json.reset_first === true && walletTransactions.length > 0) || round >= 2) break;
      }
      const paid = await until('the first charge (subscription active, invoice paid)', async () => {
        const r = expectStatus('get subscription', await client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`), 200);
        // Expanded, the invoice comes as latest_invoice_object (latest_invoice stays its id).
        const inv = r.latest_invoice_object as { id: string; status: string } | null | undefined;
        if (r.status !== 'active' || inv?.status !== 'paid') return undefined;
        return expectStatus('get invoice', await client.get(`/api/v1/invoices/${inv.id}`), 200) as { id: string; payment_id: string };
      });
      const payment = expectStatus('get payment', await client.get(`/api/v1/payment/${paid.payment_id}`), 200);
      if (!payment.transaction_hash) throw new StepFailure(`payment ${paid.payment_id} has no transaction hash`);
      s.tx('first charge', payment.transaction_hash, link(payment.transaction_hash));
      if (!(await chain.succeeded(payment.transaction_hash)))
        throw new StepFailure(`charge ${payment.transaction_hash} did not succeed on chain`);
      Object.assign(s.data, { invoice_id: paid.id, payment_id: paid.payment_id, charge_tx: payment.transaction_hash });
      await webhook(s, 'invoice.paid', paid.id);
      return `subscription ${sub.id} active, first invoice ${paid.id} paid`;
    });

    if (i.operator && merchant) {
      const steps = {
        profile,
        token,
        chain,
        amounts,
        operator: i.operator,
        merchantId: (merchant as RunMerchant).merchantId,
        deposit,
        paid: due,
        timeoutMs: i.timeoutMs,
        link,
      };
      touched.push(deposit);
      await rec.step('sweep', (s) => sweepStep(steps, s, funded));
      await rec.step('reconcile', (s) => reconcileStep(steps, s, funded, touched));
    } else {
      const why = "existing merchant: sweeping and reconciling are the operator's (npm run cli -- sweep run, reconcile)";
      rec.skip('sweep', why);
      rec.skip('reconcile', why);
    }
  } finally {
    await (receiver as WebhookReceiver | null)?.close();
  }
}
