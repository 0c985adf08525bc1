// End-to-end on TRON's Nile testnet, against a running instance of the service (test mode, TRON enabled):
// create a session, pay it in USDT from a funded test wallet, wait for `paid`, refund part of it, wait for `completed`
// and check the refund on chain. It needs network access, so it never runs in CI.
//
//   TRON_NILE_PAYER_MNEMONIC="..." SERVICE_URL=http://localhost:3000 SERVICE_API_KEY=sk_test_... \
//   SERVICE_API_SECRET=... npx tsx scripts/testnet/nile-e2e.ts
//
// Environment:
//   TRON_NILE_FULL_HOST        Nile HTTP API (default https://nile.trongrid.io)
//   TRON_PRO_API_KEY           TronGrid key, sent as TRON-PRO-API-KEY (optional on Nile)
//   TRON_NILE_PAYER_MNEMONIC   BIP39 mnemonic of the payer; m/44'/195'/0'/0/0 must hold Nile TRX (faucet
//                              https://nileex.io/join/getJoinPage) and Nile USDT. Secret: never printed.
//   TRON_NILE_USDT             Nile USDT contract (default TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf); must equal the
//                              service's CHAIN_TRON_TEST_USDT_CONTRACT
//   SERVICE_URL, SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_MERCHANT_ID (optional)
//   AMOUNT (default "1.00" USDT), REFUND_MINOR (default 50 = 0.50 USDT), TIMEOUT_SEC (default 600)
// Prerequisites on the service side: CHAIN_TRON_TEST_RPC_URL=https://nile.trongrid.io/jsonrpc (FULL_HOST derived),
// the merchant's TRON hot wallet (m/44'/195'/<account>'/1/0, shown by the operator CLI) holding Nile USDT and TRX.
import { createHmac, randomUUID } from 'node:crypto';
import { HDNodeWallet } from 'ethers';
import { TronWeb } from 'tronweb';

const env = process.env;
function need(name: string): string {
  const v = env[name]?.trim();
  if (!v) {
    console.error(`missing ${name}`);
    process.exit(2);
  }
  return v;
}

const fullHost = (env.TRON_NILE_FULL_HOST ?? 'https://nile.trongrid.io').replace(/\/+$/, '');
const usdt = env.TRON_NILE_USDT ?? 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const serviceUrl = need('SERVICE_URL').replace(/\/+$/, '');
const apiKey = need('SERVICE_API_KEY');
const apiSecret = need('SERVICE_API_SECRET');
const amount = env.AMOUNT ?? '1.00';
const refundMinor = BigInt(env.REFUND_MINOR ?? '50');
const deadline = Date.now() + Number(env.TIMEOUT_SEC ?? '600') * 1000;

const payerKey = HDNodeWallet.fromPhrase(need('TRON_NILE_PAYER_MNEMONIC'), undefined, "m/44'/195'/0'/0/0").privateKey.slice(2);
const tronWeb = new TronWeb({ fullHost, headers: env.TRON_PRO_API_KEY ? { 'TRON-PRO-API-KEY': env.TRON_PRO_API_KEY } : undefined, privateKey: payerKey });
const payer = tronWeb.defaultAddress.base58 as string;

/** Signed request to the service: hex(HMAC-SHA256(secret, `${timestamp}.${nonce}.${body}`)), GET signs ''. */
async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const text = method === 'GET' ? '' : JSON.stringify(body ?? {});
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  const headers: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    'x-service-timestamp': timestamp,
    'x-service-nonce': nonce,
    'x-service-signature': createHmac('sha256', apiSecret).update(`${timestamp}.${nonce}.${text}`).digest('hex'),
  };
  if (env.SERVICE_MERCHANT_ID) headers['x-merchant-id'] = env.SERVICE_MERCHANT_ID;
  if (method === 'POST') headers['content-type'] = 'application/json';
  const res = await fetch(serviceUrl + path, { method, headers, body: method === 'POST' ? text : undefined });
  const raw = await res.text();
  return { status: res.status, json: raw ? JSON.parse(raw) : undefined };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, everyMs = 5000): Promise<T> {
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function usdtBalance(owner: string): Promise<bigint> {
  const r = await tronWeb.transactionBuilder.triggerConstantContract(usdt, 'balanceOf(address)', {}, [{ type: 'address', value: owner }], owner);
  return BigInt(`0x${r.constant_result?.[0] || '0'}`);
}

function fail(step: string, r: { status: number; json: unknown }): never {
  console.error(`${step}: HTTP ${r.status} ${JSON.stringify(r.json)}`);
  process.exit(1);
}

async function main(): Promise<void> {
  console.log(`payer ${payer}: ${await tronWeb.trx.getBalance(payer)} sun TRX, ${await usdtBalance(payer)} USDT base units`);

  // 1. Session pinned to TRON USDT, then the hosted page's selection call gives the deposit address and exact amount.
  const orderId = `nile-${Date.now()}`;
  const created = await api('POST', '/api/v1/checkout/sessions/create', { amount, currency: 'USDT', order_id: orderId, metadata: { network: 'tron', target_currency: 'USDT' } });
  if (created.status !== 200) fail('create session', created);
  const sessionId = created.json.id as string;
  const selected = await fetch(`${serviceUrl}/checkout/sessions/${sessionId}/select`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network: 'tron', token: 'USDT' }) });
  const sel = (await selected.json()) as { deposit_address: string; amount_due_base: string; token_contract: string };
  if (selected.status !== 200) fail('select network', { status: selected.status, json: sel });
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(sel.deposit_address)) throw new Error(`deposit address is not base58: ${sel.deposit_address}`);
  if (sel.token_contract !== usdt) throw new Error(`service uses USDT ${sel.token_contract}, this script ${usdt}`);
  console.log(`session ${sessionId}: pay ${sel.amount_due_base} base units to ${sel.deposit_address}`);

  // 2. Pay: TRC-20 transfer signed locally, broadcast, receipt checked.
  const built = await tronWeb.transactionBuilder.triggerSmartContract(usdt, 'transfer(address,uint256)', { feeLimit: 50_000_000 }, [
    { type: 'address', value: sel.deposit_address },
    { type: 'uint256', value: sel.amount_due_base },
  ], payer);
  const signed = await tronWeb.trx.sign(built.transaction);
  const sent = await tronWeb.trx.sendRawTransaction(signed);
  if (!sent.result) throw new Error(`broadcast refused: ${JSON.stringify(sent)}`);
  console.log(`payment tx ${signed.txID}`);
  const receipt = await until('the payment receipt', async () => {
    const info = await tronWeb.trx.getUnconfirmedTransactionInfo(signed.txID);
    return info.id ? info : undefined;
  }, 3000);
  if (receipt.receipt?.result !== 'SUCCESS') throw new Error(`payment failed on chain: ${receipt.receipt?.result}`);

  // 3. The service marks the session paid once the block is solidified (or deep enough).
  await until('payment_status paid', async () => {
    const s = await api('GET', `/api/v1/checkout/sessions/${sessionId}`);
    if (s.status !== 200) fail('get session', s);
    return s.json.payment_status === 'paid' ? true : undefined;
  });
  console.log('session paid');

  // 4. Refund part of it to the payer (the sender of the paying transfer) and wait for `completed`.
  const before = await usdtBalance(payer);
  const refundId = `nile-rf-${Date.now()}`;
  const refund = await api('POST', '/api/v1/refunds/create', { session_id: sessionId, refund_id: refundId, amount: Number(refundMinor), currency: 'USDT', reason: 'requested_by_customer' });
  if (refund.status !== 201) fail('create refund', refund);
  const done = await until('refund completed', async () => {
    const r = await api('GET', `/api/v1/refunds/${refundId}`);
    if (r.status !== 200) fail('get refund', r);
    if (r.json.status === 'failed') throw new Error(`refund failed: ${r.json.failure_reason}`);
    return r.json.status === 'completed' ? (r.json as { transaction_hash: string; receipt_number: string }) : undefined;
  });
  console.log(`refund completed: tx ${done.transaction_hash}, receipt ${done.receipt_number}`);

  // 5. On chain: solidified SUCCESS receipt, payer credited with exactly the refund (6 decimals: minor x 10^4).
  const info = await tronWeb.trx.getTransactionInfo(done.transaction_hash.replace(/^0x/, ''));
  if (info.receipt?.result !== 'SUCCESS') throw new Error(`refund receipt is ${info.receipt?.result ?? 'missing'}`);
  const after = await usdtBalance(payer);
  if (after - before !== refundMinor * 10_000n) throw new Error(`payer received ${after - before} base units, expected ${refundMinor * 10_000n}`);
  console.log(`ok: payer received ${after - before} USDT base units; refund cost the hot wallet ${info.fee ?? 0} sun`);
}

main().catch((e: unknown) => {
  console.error((e as Error).message);
  process.exit(1);
});
