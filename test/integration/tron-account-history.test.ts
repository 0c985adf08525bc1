import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import { tronAddressAt, tronHotWalletKeyPath } from '../../chains/tron/keys.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund, type DeployedToken } from '../support/evm-tokens/scenario.js';

// The account history the restore guard reads on TRON (chains/tron/outgoing-history.ts): TronGrid's
// GET /v1/accounts/{address}/transactions as the fake java-tron serves it (only_from, min_timestamp, newest first,
// fingerprint paging, TronGrid's error shape), and the adapter's unknownOutgoing over it (what the ledger knows left out).
const signer = new MnemonicSigner('test test test test test test test test test test test junk');
let node: AnvilNode;
let fake: FakeJavaTron;
let usdt: DeployedToken;
let adapter: TronChainAdapter;
let hot: string;

beforeAll(async () => {
  node = await startAnvil({ chainId: 0x2b6653dc });
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  fake = await startFakeJavaTron(node, { solidifyDepth: 1 });
  adapter = new TronChainAdapter({
    mode: 'test',
    jsonRpcUrl: node.url,
    fullHost: fake.url,
    tokens: [{ symbol: 'USDT', address: evmHexToTron(usdt.address), decimals: 6 }],
    confirmation: { kind: 'depth', confirmations: 1 },
  });
  hot = await tronAddressAt(signer, tronHotWalletKeyPath(3, 0));
  fake.chain.setTrx(hot, 100_000_000n);
  await fund(usdt, tronToEvmHex(hot), 10_000_000n);
});
afterAll(async () => {
  await fake?.close();
  await node?.stop();
});

/** A page of TronGrid's account transactions, as far as the test reads it. */
type Page = { success: boolean; data: Array<{ txID: string; block_timestamp: unknown }>; meta: { fingerprint?: string } };

async function send(to: string, amount: bigint): Promise<string> {
  const signed = await adapter.signTransfer(
    await adapter.buildTokenTransfer({ from: { key: tronHotWalletKeyPath(3, 0), address: hot }, to, token: 'USDT', amount }),
    signer,
  );
  expect((await adapter.broadcast(signed)).status).toBe('accepted');
  return signed.hash;
}

describe('TRON account history (TronGrid v1) for the restore guard', () => {
  it('lists what the account signed, newest first, paged by fingerprint; leaves out what the ledger knows', async () => {
    const other = `41${'cd'.repeat(20)}`;
    const before = Date.now() - 60_000;
    const a = await send(other, 1_000_000n);
    await node.mine(1);
    const b = await send(other, 2_000_000n);
    const path = `${fake.url}/v1/accounts/${tronBase58(hot)}/transactions`;
    const first = (await (await fetch(`${path}?only_from=true&limit=1&order_by=block_timestamp,desc`)).json()) as Page;
    expect(first.success).toBe(true);
    expect(first.data.map((t: { txID: string }) => t.txID)).toEqual([b]);
    expect(first.data[0]).toMatchObject({ ret: [{ contractRet: 'SUCCESS' }], raw_data: { contract: [{ type: 'TriggerSmartContract' }] } });
    expect(typeof first.data[0]?.block_timestamp).toBe('number');
    const second = (await (await fetch(`${path}?only_from=true&limit=1&fingerprint=${first.meta.fingerprint}`)).json()) as Page;
    expect(second.data.map((t: { txID: string }) => t.txID)).toEqual([a]);
    expect(second.meta.fingerprint).toBeUndefined();
    // The recipient signed nothing; a later min_timestamp leaves both out; a bad address is TronGrid's error shape.
    expect(
      ((await (await fetch(`${fake.url}/v1/accounts/${tronBase58(other)}/transactions?only_from=true`)).json()) as { data: unknown[] })
        .data,
    ).toEqual([]);
    expect(
      ((await (await fetch(`${path}?only_from=true&min_timestamp=${Date.now() + 3_600_000}`)).json()) as { data: unknown[] }).data,
    ).toEqual([]);
    expect(await (await fetch(`${fake.url}/v1/accounts/nope/transactions`)).json()).toMatchObject({ success: false });

    const none = await adapter.unknownOutgoing(hot, before, async () => new Set());
    expect(none.found.map((t) => t.hash)).toEqual([b, a]);
    expect(none.truncated).toBe(false);
    const asked: string[][] = [];
    const r = await adapter.unknownOutgoing(hot, before, async (hashes) => {
      asked.push(hashes);
      return new Set([a]);
    });
    expect(asked).toEqual([[b, a]]);
    expect(r.found).toEqual([{ hash: b, timeMs: expect.any(Number), failed: false }]);
    expect((await adapter.unknownOutgoing(hot, Date.now() + 3_600_000, async () => new Set())).found).toEqual([]);
  });

  it("leaves out what the engine never sends: the operator staking the wallet's TRX for energy holds nothing", async () => {
    const since = Date.now() - 60_000;
    const earlier = (await adapter.unknownOutgoing(hot, since, async () => new Set())).found.map((t) => t.hash);
    const post = async (path: string, body: unknown) =>
      (await (await fetch(`${fake.url}/${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<string, unknown>;
    const tx = (await post('wallet/freezebalancev2', { owner_address: hot, frozen_balance: 5_000_000, resource: 'ENERGY' })) as {
      txID: string;
    };
    const sig = await signer.signSecp256k1Digest(tronHotWalletKeyPath(3, 0), Buffer.from(tx.txID, 'hex'));
    expect(
      (
        await post('wallet/broadcasttransaction', {
          ...tx,
          signature: [`${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`],
        })
      ).result,
    ).toBe(true);
    await node.mine(1);
    // TronGrid lists the freeze as signed by the wallet...
    const listed = (await (
      await fetch(`${fake.url}/v1/accounts/${tronBase58(hot)}/transactions?only_from=true&min_timestamp=${since}`)
    ).json()) as { data: Array<{ txID: string; raw_data: { contract: Array<{ type: string }> } }> };
    expect(listed.data.map((t) => [t.txID, t.raw_data.contract[0]?.type])).toContainEqual([tx.txID, 'FreezeBalanceV2Contract']);
    // ...and the guard does not count it; a token transfer after it is counted.
    expect((await adapter.unknownOutgoing(hot, since, async () => new Set())).found.map((t) => t.hash)).toEqual(earlier);
    const c = await send(`41${'ef'.repeat(20)}`, 1_000_000n);
    expect((await adapter.unknownOutgoing(hot, since, async () => new Set())).found.map((t) => t.hash)).toEqual([c, ...earlier]);
  });
});
