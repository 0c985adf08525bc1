import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { AbiCoder, SigningKey, computeAddress, hexlify, id } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmHexToTron, tronToEvmHex } from '../../chains/tron/address.js';
import { encodeSignedTransaction } from '../../chains/tron/protobuf.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund } from '../support/evm-tokens/scenario.js';
import { compareToReal, formOf } from '../support/java-tron-compare.js';

// The fake java-tron held to the real one: every wallet-API and JSON-RPC call the service makes (chains/tron, and
// tronweb's transactionBuilder.triggerSmartContract → /wallet/triggersmartcontract, trx.sendRawTransaction →
// /wallet/broadcasttransaction) is driven through the fake in the outcome each fixture of test/fixtures/java-tron shows
// (success, REVERT, OUT_OF_ENERGY, BANDWITH_ERROR, duplicate, not found ...), and the fake's answer is compared with the
// real java-tron's answer form for form (test/support/java-tron-compare.ts). Sources: test/fixtures/java-tron/README.md.

interface Fixture {
  call: string;
  also?: string[];
  outcome: string;
  source: string;
  visible: boolean;
  response: unknown;
  mayOmit?: string[];
  mayAdd?: string[];
  sameText?: Record<string, string>;
}

const DIR = 'test/fixtures/java-tron';
const fixtures = new Map<string, Fixture>(
  readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(`${DIR}/${f}`, 'utf8')) as Fixture]),
);

const hexUtf8 = (s: string) => Buffer.from(s, 'utf8').toString('hex');

describe('java-tron answer comparer', () => {
  it('classifies the forms java-tron uses', () => {
    expect(formOf('01b4cde4197b9d1a1ff09ef5d2b1d939d3ec2401b3f002ebd0802c0f30a6e4ca')).toBe('id64');
    expect(formOf('0x01b4cde4197b9d1a1ff09ef5d2b1d939d3ec2401b3f002ebd0802c0f30a6e4ca')).toBe('0xhash');
    expect(formOf('41dd791d6b49e190062d650e6a23c575510d35f2f9')).toBe('hex41');
    expect(formOf('TJMKWmC6mwF1QVax8Sy2AcgT6MqaXmHEds')).toBe('base58');
    expect(formOf(hexUtf8('Dup transaction.'))).toBe('hexText');
    expect(formOf('Dup transaction.')).toBe('text');
    expect(formOf('BANDWITH_ERROR')).toBe('word');
    expect(formOf('{"txID":"ab"}')).toBe('json');
  });

  it('reports each kind of difference, and nothing for a conforming answer', () => {
    const real = fixtures.get('gettransactioninfobyid.out-of-energy')!;
    const o = { mayOmit: real.mayOmit, mayAdd: real.mayAdd };
    expect(compareToReal(real.response, real.response, o)).toEqual([]);
    const r = real.response as Record<string, unknown>;
    const receipt = r.receipt as Record<string, unknown>;
    const diffs = (v: unknown) => compareToReal(v, real.response, o);
    expect(diffs({ ...r, id: `0x${r.id}` })).toEqual([expect.stringMatching(/^\$\.id: 0xhash/)]);
    expect(diffs({ ...r, blockTimeStamp: 1730892183 })).toEqual([expect.stringMatching(/not a millisecond timestamp/)]);
    expect(diffs({ ...r, fee: '13739430' })).toEqual([expect.stringMatching(/^\$\.fee: string/)]);
    expect(diffs({ ...r, receipt: { ...receipt, result: 'REVERT' } })).toEqual([expect.stringMatching(/receipt\.result: "REVERT"/)]);
    expect(diffs({ ...r, resMessage: 'Not enough energy' })).toEqual([expect.stringMatching(/resMessage: text/)]);
    const { result: _failed, ...noResult } = r;
    expect(diffs(noResult)).toEqual([expect.stringMatching(/^\$\.result: missing/)]);
    expect(diffs({ ...r, log: [] })).toEqual(["$.log: not in java-tron's answer"]);
    const bw = fixtures.get('broadcasttransaction.bandwith-error')!;
    const bwResponse = bw.response as Record<string, unknown>;
    expect(
      compareToReal({ ...bwResponse, message: hexUtf8('AccountResourceInsufficient error') }, bw.response, { sameText: bw.sameText }),
    ).toEqual([expect.stringMatching(/message: text "AccountResourceInsufficient error"/)]);
  });
});

describe('fake java-tron (scripts/devnet/fake-java-tron) against real java-tron answers', () => {
  let node: AnvilNode;
  let fake: FakeJavaTron;
  const v: Record<string, unknown> = {};
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const res = await fetch(`${fake.url}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, path).toBe(200);
    return res.json();
  };
  const rpc = (method: string, params: unknown[]) => post('jsonrpc', { jsonrpc: '2.0', id: 1, method, params });

  beforeAll(async () => {
    node = await startAnvil({ chainId: 0x2b6653dc });
    const [usdt] = await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }]);
    fake = await startFakeJavaTron(node, { solidifyDepth: 1 });
    const key = new SigningKey(hexlify(randomBytes(32)));
    const ownerEvm = computeAddress(key.publicKey);
    const owner = evmHexToTron(ownerEvm);
    const contract = evmHexToTron(usdt!.address);
    fake.chain.setTrx(owner, 100_000_000_000n);
    await fund(usdt!, ownerEvm, 10_000_000n);
    const stranger = () => evmHexToTron(computeAddress(new SigningKey(hexlify(randomBytes(32))).publicKey));
    const abi = AbiCoder.defaultAbiCoder();
    const param = (amount: bigint) => abi.encode(['address', 'uint256'], [tronToEvmHex(stranger()), amount]).slice(2);
    const trigger = (amount: bigint) => ({
      owner_address: owner,
      contract_address: contract,
      function_selector: 'transfer(address,uint256)',
      parameter: param(amount),
      fee_limit: 100_000_000,
    });
    const sign = (tx: { txID: string; raw_data_hex: string }) => {
      const sig = key.sign(`0x${tx.txID}`);
      return [`${sig.r.slice(2)}${sig.s.slice(2)}${sig.v.toString(16)}`];
    };
    /** A transfer built by the node (as tronweb builds it) and signed: its JSON and its protobuf hex. */
    const built = async (amount: bigint) => {
      const tx = ((await post('wallet/triggersmartcontract', trigger(amount))) as { transaction: { txID: string; raw_data_hex: string } })
        .transaction;
      const signature = sign(tx);
      return { json: { ...tx, signature }, hex: encodeSignedTransaction(tx.raw_data_hex, signature), txID: tx.txID };
    };
    const sendHex = async (t: { hex: string }) => (await post('wallet/broadcasthex', { transaction: t.hex })) as { result?: boolean };
    // Stake 2.0 for the delegation refusals.
    const receiver = stranger();
    fake.chain.setTrx(receiver, 1_000_000n);
    for (const [path, body] of [
      ['wallet/freezebalancev2', { owner_address: owner, frozen_balance: 50_000_000_000, resource: 'ENERGY' }],
      ['wallet/delegateresource', { owner_address: owner, receiver_address: receiver, balance: 2_000_000, resource: 'ENERGY' }],
    ] as const) {
      const tx = (await post(path, body)) as { txID: string; raw_data_hex: string };
      const sent = (await post('wallet/broadcasttransaction', { ...tx, signature: sign(tx) })) as { result?: boolean };
      if (sent.result !== true) throw new Error(`${path} refused: ${JSON.stringify(sent)}`);
    }
    fake.chain.recoverAll();

    const ok = await built(7n);
    if ((await sendHex(ok)).result !== true) throw new Error('transfer refused');
    const outOfEnergy = await built(8n);
    fake.forceNextResult('OUT_OF_ENERGY');
    if ((await sendHex(outOfEnergy)).result !== true) throw new Error('transfer refused');
    const reverted = await built(1_000_000_000_000n);
    if ((await sendHex(reverted)).result !== true) throw new Error('transfer refused');
    await node.mine(3);
    const head = Number(
      ((await post('wallet/getnowblock', {})) as { block_header: { raw_data: { number: number } } }).block_header.raw_data.number,
    );
    Object.assign(v, {
      owner,
      contract,
      receiver,
      stranger: stranger(),
      ok,
      outOfEnergy,
      reverted,
      trigger,
      built,
      head,
      usdtEvm: usdt!.address.toLowerCase(),
      ownerEvm,
      balanceOf: {
        owner_address: owner,
        contract_address: contract,
        function_selector: 'balanceOf(address)',
        parameter: abi.encode(['address'], [ownerEvm]).slice(2),
      },
    });
  });

  afterAll(async () => {
    await fake?.close();
    await node?.stop();
  });

  type Tx = { json: Record<string, unknown>; hex: string; txID: string };
  const tx = (name: string) => v[name] as Tx;
  /** Each fixture: how to drive the fake into the same call and outcome (one call, or a request per `also` path). */
  const drive: Record<string, (path: string) => Promise<unknown>> = {
    'getnowblock.success': (p) => post(p, {}),
    'getblockbynum.success': (p) => post(p, { num: 1 }),
    'getblockbynum.not-found': (p) => post(p, { num: 900_000_000 }),
    'getchainparameters.success': (p) => post(p, {}),
    'getaccount.success': (p) => post(p, { address: v.owner }),
    'getaccount.not-found': (p) => post(p, { address: v.stranger }),
    'getaccountresource.success': (p) => post(p, { address: v.owner }),
    'getaccountresource.not-found': (p) => post(p, { address: v.stranger }),
    'getcandelegatedmaxsize.success': (p) => post(p, { owner_address: v.owner, type: 1 }),
    'getcandelegatedmaxsize.none': (p) => post(p, { owner_address: v.receiver, type: 1 }),
    'triggersmartcontract.success': (p) => post(p, (v.trigger as (a: bigint) => unknown)(5n)),
    'triggersmartcontract.no-contract': (p) => post(p, { ...(v.trigger as (a: bigint) => object)(5n), contract_address: v.stranger }),
    'triggerconstantcontract.success': (p) => post(p, v.balanceOf),
    'walletsolidity-triggerconstantcontract.success': (p) => post(p, v.balanceOf),
    'triggerconstantcontract.revert': (p) => post(p, (v.trigger as (a: bigint) => unknown)(1_000_000_000_000n)),
    'estimateenergy.success': (p) => post(p, (v.trigger as (a: bigint) => unknown)(5n)),
    'estimateenergy.revert': (p) => post(p, (v.trigger as (a: bigint) => unknown)(1_000_000_000_000n)),
    'estimateenergy.disabled': async (p) => {
      fake.chain.estimateEnergyEnabled = false;
      try {
        return await post(p, (v.trigger as (a: bigint) => unknown)(5n));
      } finally {
        fake.chain.estimateEnergyEnabled = true;
      }
    },
    'broadcasthex.success': async (p) => post(p, { transaction: (await (v.built as (a: bigint) => Promise<Tx>)(3n)).hex }),
    'broadcasthex.dup': (p) => post(p, { transaction: tx('ok').hex }),
    'broadcasthex.bandwith-error': async (p) =>
      refused(async () => post(p, { transaction: (await (v.built as (a: bigint) => Promise<Tx>)(4n)).hex })),
    'broadcasttransaction.success': async (p) => post(p, (await (v.built as (a: bigint) => Promise<Tx>)(2n)).json),
    'broadcasttransaction.bandwith-error': async (p) =>
      refused(async () => post(p, (await (v.built as (a: bigint) => Promise<Tx>)(1n)).json)),
    'gettransactioninfobyid.success': (p) => post(p, { value: tx('ok').txID }),
    'gettransactioninfobyid.out-of-energy': (p) => post(p, { value: tx('outOfEnergy').txID }),
    'gettransactioninfobyid.revert': (p) => post(p, { value: tx('reverted').txID }),
    'gettransactioninfobyid.not-found': (p) => post(p, { value: randomBytes(32).toString('hex') }),
    'gettransactionbyid.success': (p) => post(p, { value: tx('ok').txID }),
    'gettransactionbyid.not-found': (p) => post(p, { value: randomBytes(32).toString('hex') }),
    'createtransaction.success': (p) => post(p, { owner_address: v.owner, to_address: v.stranger, amount: 1_000_000 }),
    'createtransaction.no-owner': (p) => post(p, { owner_address: v.stranger, to_address: v.owner, amount: 1_000_000 }),
    'delegateresource.too-much': (p) =>
      post(p, { owner_address: v.owner, receiver_address: v.receiver, balance: 900_000_000_000_000, resource: 'ENERGY' }),
    'undelegateresource.insufficient': (p) =>
      post(p, { owner_address: v.owner, receiver_address: v.receiver, balance: 3_000_000, resource: 'ENERGY' }),
    'undelegateresource.none': (p) =>
      post(p, { owner_address: v.owner, receiver_address: v.stranger, balance: 1_000_000, resource: 'ENERGY' }),
    'jsonrpc.eth_blockNumber': () => rpc('eth_blockNumber', []),
    'jsonrpc.eth_chainId': () => rpc('eth_chainId', []),
    'jsonrpc.eth_getCode': () => rpc('eth_getCode', [v.usdtEvm, 'latest']),
    'jsonrpc.eth_call': () => rpc('eth_call', [{ to: v.usdtEvm, data: id('symbol()').slice(0, 10) }, 'latest']),
    'jsonrpc.eth_getBlockByNumber': () => rpc('eth_getBlockByNumber', [`0x${(v.head as number).toString(16)}`, false]),
    'jsonrpc.eth_getLogs': () => rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: v.usdtEvm }]),
    'jsonrpc.eth_getTransactionReceipt': () => rpc('eth_getTransactionReceipt', [`0x${tx('ok').txID}`]),
  };
  async function refused<T>(f: () => Promise<T>): Promise<T> {
    fake.refuseBroadcasts(true);
    try {
      return await f();
    } finally {
      fake.refuseBroadcasts(false);
    }
  }

  it('has a fixture for every call the fake serves that the service makes, and a scenario for every fixture', () => {
    expect([...fixtures.keys()].sort()).toEqual(Object.keys(drive).sort());
    const calls = new Set([...fixtures.values()].flatMap((f) => [f.call, ...(f.also ?? [])]));
    for (const path of [
      'wallet/getnowblock',
      'walletsolidity/getnowblock',
      'wallet/getblockbynum',
      'wallet/getchainparameters',
      'wallet/getaccount',
      'walletsolidity/getaccount',
      'wallet/getaccountresource',
      'wallet/getcandelegatedmaxsize',
      'wallet/triggersmartcontract',
      'wallet/triggerconstantcontract',
      'walletsolidity/triggerconstantcontract',
      'wallet/estimateenergy',
      'wallet/broadcasthex',
      'wallet/broadcasttransaction',
      'wallet/gettransactioninfobyid',
      'walletsolidity/gettransactioninfobyid',
      'wallet/gettransactionbyid',
      'wallet/createtransaction',
      'wallet/delegateresource',
      'wallet/undelegateresource',
      'jsonrpc eth_blockNumber',
      'jsonrpc eth_chainId',
      'jsonrpc eth_getCode',
      'jsonrpc eth_call',
      'jsonrpc eth_getBlockByNumber',
      'jsonrpc eth_getLogs',
      'jsonrpc eth_getTransactionReceipt',
    ])
      expect(calls.has(path), path).toBe(true);
  });

  for (const [name, f] of fixtures) {
    for (const path of [f.call, ...(f.also ?? [])]) {
      it(`${path} (${f.outcome}) answers as java-tron does [${name}]`, async () => {
        const answer = await drive[name]!(path.startsWith('jsonrpc') ? 'jsonrpc' : path);
        const diffs = compareToReal(answer, f.response, {
          mayOmit: f.mayOmit,
          mayAdd: f.mayAdd,
          visible: f.visible,
          sameText: f.sameText,
          open: path.startsWith('jsonrpc'),
        });
        expect(diffs, JSON.stringify(answer).slice(0, 2000)).toEqual([]);
      });
    }
  }
});
