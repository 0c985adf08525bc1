import { Contract } from 'ethers';
import { expect } from 'vitest';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import { fund, signer, walletAt } from './evm-tokens/scenario.js';
import type { HarnessMerchant, ServiceHarness } from './service-harness.js';

/**
 * A monthly USD 15.00 subscription of `m` on Ethereum USDT, selected on the hosted page by a fresh funded customer
 * (wallet `customerIndex`) who approves the charger: the merchant's charger gets gas, and the worker charges the first
 * invoice once the approval is seen. Answers the subscription's id.
 */
export async function approvedSubscription(
  h: ServiceHarness,
  m: HarnessMerchant,
  o: { customerIndex: number; customer: string; product: string },
): Promise<string> {
  const adapter = h.service.adapters.get('ethereum', 'test')!;
  const charger = await adapter.deriveHotWallet(signer, m.account, HOT_WALLET_SLOT.charges);
  await h.node.rpc('anvil_setBalance', [charger.address, '0x56bc75e2d63100000']);
  const customer = walletAt(o.customerIndex, h.node.provider);
  await h.node.rpc('anvil_setBalance', [customer.address, '0xde0b6b3a7640000']);
  await fund(h.tokens.USDT, customer.address, 50_000_000n);

  const created = await m.client.post('/api/v1/subscriptions/create', {
    items: [
      {
        price_data: { price_id: 'p', currency: 'USD', product: o.product, unit_amount: 1500, recurring: { interval: 'month' } },
        quantity: 1,
      },
    ],
    customer: o.customer,
  });
  expect(created.status).toBe(200);
  const subId = created.json.id as string;
  const sel = await fetch(`${h.base}/subscribe/${subId}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token: 'USDT', address: customer.address }),
  });
  const info = (await sel.json()) as { spender: string; allowance_base: string };
  expect(sel.status).toBe(200);
  const usdt = new Contract(h.tokens.USDT.address, ['function approve(address spender, uint256 value)'], customer);
  await (
    await (usdt.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(
      info.spender,
      BigInt(info.allowance_base),
    )
  ).wait();
  return subId;
}
