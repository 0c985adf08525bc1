import { Transaction } from '@solana/web3.js';
import { TronWeb } from 'tronweb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSolanaSubsFixture, type SolanaSubsFixture } from '../integration/subscriptions-solana-fixture.js';
import { startTronSubsFixture, type TronSubsFixture } from '../integration/subscriptions-tron-fixture.js';
import { launchBrowser } from './checkout-harness.js';

// The authorization page in headless Chromium with the two other wallet kinds, each injected the way the real one
// exposes itself and signing with a test key in Node:
// - TronLink: window.tronLink.request({ method: 'tron_requestAccounts' }) and window.tronWeb (defaultAddress,
//   trx.sign, trx.sendRawTransaction, trx.getTransactionInfo), against the fake java-tron wallet API on Anvil;
// - a Solana Wallet Standard wallet that registers through the wallet-standard events and offers standard:connect
//   and solana:signAndSendTransaction, against the LiteSVM endpoint.
// The scheduler runs in the background; the page must end with the subscription authorized and its first invoice paid.

let browser: Awaited<ReturnType<typeof launchBrowser>>;
beforeAll(async () => {
  browser = await launchBrowser('en-US');
}, 60_000);
afterAll(async () => browser?.dispose());

/** Runs `settle` until stopped (the service's worker loop, in-process). */
function background(settle: () => Promise<void>): () => Promise<void> {
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      await settle().catch(() => {});
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return async () => {
    stop = true;
    await loop;
  };
}

const plan = {
  items: [
    {
      price_data: { price_id: 'p', currency: 'USD', product: 'Pro plan', unit_amount: 1500, recurring: { interval: 'month' } },
      quantity: 1,
    },
  ],
  iterations: 3,
};

describe('authorization page with TronLink', () => {
  let f: TronSubsFixture;
  beforeAll(async () => {
    f = await startTronSubsFixture();
  }, 120_000);
  afterAll(async () => f?.close());

  it('resets the existing Tether allowance, approves the sized allowance through TronLink, and the first invoice is paid', async () => {
    const c = await f.customer(61, { usdt: 50_000_000n });
    const wallet = new TronWeb({ fullHost: f.fake.url });
    const send = async (tx: any) => (await wallet.trx.sendRawTransaction((await wallet.trx.sign(tx, c.privateKey)) as any)) as any;
    // An allowance already set: Tether refuses non-zero to non-zero, so the page must reset it first.
    const pre = await f.adapter.buildApprovalForWallet('USDT', c.base58, f.wallets.charger, 7n);
    expect((await send(pre.transaction)).result).toBe(true);
    await f.node.rpc('anvil_mine', ['0x4']);
    const sub = (await f.create({ ...plan, customer: 'cus_tronlink' })).id as string;

    const page = await browser.newPage();
    const calls: string[] = [];
    await page.exposeFunction('__tron', async (method: string, argJson: string) => {
      calls.push(method);
      const arg = JSON.parse(argJson);
      switch (method) {
        case 'request':
          return JSON.stringify(arg.method === 'tron_requestAccounts' ? { code: 200, message: 'ok' } : null);
        case 'sign':
          return JSON.stringify(await wallet.trx.sign(arg, c.privateKey));
        case 'sendRawTransaction':
          return JSON.stringify(await wallet.trx.sendRawTransaction(arg));
        case 'getTransactionInfo':
          return JSON.stringify(await wallet.trx.getTransactionInfo(arg));
        default:
          throw new Error(`unexpected TronLink call ${method}`);
      }
    });
    await page.addInitScript((base58: string) => {
      const w = globalThis as any;
      const call = async (m: string, a: unknown) => JSON.parse(await w.__tron(m, JSON.stringify(a ?? null)));
      const tronWeb = {
        defaultAddress: { base58 },
        trx: {
          sign: (tx: unknown) => call('sign', tx),
          sendRawTransaction: (tx: unknown) => call('sendRawTransaction', tx),
          getTransactionInfo: (id: string) => call('getTransactionInfo', id),
        },
      };
      w.tronWeb = tronWeb;
      w.tronLink = { ready: true, tronWeb, request: (a: unknown) => call('request', a) };
    }, c.base58);

    const stop = background(f.settle);
    try {
      const res = await page.goto(`${f.h.baseUrl}/subscribe/${sub}`);
      expect(res?.status()).toBe(200);
      expect(await page.locator('#choice').inputValue()).toBe('tron:USDT');
      await page.click('#authorize');
      await page
        .locator('#app[data-authorized="true"]')
        .waitFor({ timeout: 60_000 })
        .catch(async (e) => {
          throw new Error(`${e}; page says: ${await page.locator('#msg').innerText()}; calls: ${calls.join(',')}`);
        });
    } finally {
      await stop();
      await page.close();
    }
    // request, then reset (sign, send, confirmation), then the approve built after the reset landed (sign, send).
    expect(calls.filter((m) => m === 'sign').length).toBe(2);
    expect(calls.indexOf('getTransactionInfo')).toBeGreaterThan(calls.indexOf('sendRawTransaction'));
    await f.settle();
    const s = (await f.client.get(`/api/v1/subscriptions/${sub}?expand=payment_method`)).json;
    expect(s.status).toBe('active');
    expect(s.payment_method_object).toMatchObject({ status: 'active' });
    expect(await f.adapter.getAllowance('USDT', c.address, f.wallets.charger)).toBe(45_000_000n - 15_000_000n);
    expect(await f.adapter.getTokenBalance('USDT', c.address)).toBe(50_000_000n - 15_000_000n);
  }, 120_000);
});

describe('authorization page with a Solana Wallet Standard wallet', () => {
  let f: SolanaSubsFixture;
  beforeAll(async () => {
    f = await startSolanaSubsFixture();
  }, 120_000);
  afterAll(async () => f?.close());

  it('discovers the wallet, has it sign and send the prepared ApproveChecked, and the first invoice is paid', async () => {
    const customer = f.customer(50_000_000n);
    const address = customer.publicKey.toBase58();
    const sub = (await f.create({ ...plan, customer: 'cus_phantomish' })).id as string;
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'solana');

    const page = await browser.newPage();
    const signedChains: string[] = [];
    await page.exposeFunction('__solanaSignAndSend', async (b64: string, chain: string) => {
      signedChains.push(chain);
      const tx = Transaction.from(Buffer.from(b64, 'base64'));
      tx.partialSign(customer);
      return f.conn.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' });
    });
    await page.addInitScript((addr: string) => {
      const g = globalThis as any;
      const account = {
        address: addr,
        publicKey: new Uint8Array(32),
        chains: ['solana:devnet'],
        features: ['solana:signAndSendTransaction'],
      };
      const wallet = {
        version: '1.0.0',
        name: 'Test Wallet',
        icon: 'data:image/svg+xml;base64,PHN2Zy8+',
        chains: ['solana:devnet'],
        accounts: [account],
        features: {
          'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
          'solana:signAndSendTransaction': {
            version: '1.0.0',
            supportedTransactionVersions: ['legacy'],
            signAndSendTransaction: async (...inputs: Array<{ transaction: Uint8Array; chain: string }>) => {
              const out = [];
              for (const i of inputs) {
                let bin = '';
                for (const b of i.transaction) bin += String.fromCharCode(b);
                const sig: string = await g.__solanaSignAndSend(btoa(bin), i.chain);
                out.push({ signature: new TextEncoder().encode(sig) });
              }
              return out;
            },
          },
        },
      };
      // The wallet side of the Wallet Standard: announce now, and answer the app's app-ready event.
      const callback = ({ register }: { register(w: unknown): unknown }) => register(wallet);
      g.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
      g.addEventListener('wallet-standard:app-ready', (e: CustomEvent) => callback(e.detail));
    }, address);

    const stop = background(f.settle);
    try {
      const res = await page.goto(`${f.baseUrl}/subscribe/${sub}`);
      expect(res?.status()).toBe(200);
      // Said before the wallet opens: what a delegate means for the customer.
      expect(await page.locator('#solana-delegate').innerText()).toContain('replaces any other delegate');
      await page.selectOption('#choice', 'solana:USDT');
      await page.click('#authorize');
      await page.locator('#app[data-authorized="true"]').waitFor({ timeout: 60_000 });
    } finally {
      await stop();
      await page.close();
    }
    expect(signedChains).toEqual(['solana:devnet']);
    await f.settle();
    const s = (await f.client.get(`/api/v1/subscriptions/${sub}?expand=payment_method`)).json;
    expect(s.status).toBe('active');
    expect(s.payment_method_object).toMatchObject({ status: 'active' });
    expect(await f.adapter.getAllowance('USDT', address, w.charger)).toBe(45_000_000n - 15_000_000n);
    expect(await f.tokenBalance(f.mints.USDT, address)).toBe(50_000_000n - 15_000_000n);
  }, 120_000);
});
