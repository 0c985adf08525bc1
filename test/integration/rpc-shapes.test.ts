import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { AbiCoder, SigningKey, computeAddress, hexlify } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base58Encode } from '../../chains/solana/base58.js';
import { evmHexToTron } from '../../chains/tron/address.js';
import { encodeSignedTransaction } from '../../chains/tron/protobuf.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund } from '../support/evm-tokens/scenario.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { shapeDiffs, type Shape } from '../support/rpc-shape.js';

// Our fakes against the documented response shapes of the real nodes (test/fixtures/rpc-shapes): every method the
// LiteSVM Solana endpoint serves is called and its answer checked field by field (names, types, nullability), and
// each documented error it can produce answers with the documented code. A method added to a fake without a fixture
// fails here. Divergences we keep on purpose are listed in docs/testnets.md ("Faithful fakes") and nowhere else.

interface MethodFixture {
  source: string;
  params: unknown[];
  result: Shape;
  errors?: Array<{ params?: unknown[]; code: number; when: string }>;
}
interface SolanaFixture {
  definitions: Record<string, Shape>;
  methods: Record<string, MethodFixture>;
  errorObject: Shape;
  preflightErrorData: Shape;
}

interface TronFixture {
  definitions: Record<string, Shape>;
  endpoints: Record<string, { source: string; body: unknown; result: Shape; also?: Array<{ body: unknown; result: Shape; when: string }> }>;
}

const solana = JSON.parse(readFileSync('test/fixtures/rpc-shapes/solana.json', 'utf8')) as SolanaFixture;
const tron = JSON.parse(readFileSync('test/fixtures/rpc-shapes/tron.json', 'utf8')) as TronFixture;

/** Replaces "$name" placeholders anywhere in `v` with their values. */
function fillWith(vars: Record<string, unknown>, v: unknown): unknown {
  if (typeof v === 'string' && v.startsWith('$')) {
    if (!(v in vars)) throw new Error(`no value for ${v}`);
    return vars[v];
  }
  if (Array.isArray(v)) return v.map((x) => fillWith(vars, x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillWith(vars, x)]));
  return v;
}

describe('shape checker', () => {
  it('reports missing, mistyped, null and undocumented fields, and accepts a conforming answer', () => {
    const shape: Shape = { object: { slot: 'integer', err: { nullable: 'string' }, memo: 'string' }, optional: ['memo'] };
    expect(shapeDiffs({ slot: 1, err: null }, shape)).toEqual([]);
    expect(shapeDiffs({ slot: 1.5, err: null }, shape)).toEqual(['$.slot: expected integer, got number 1.5']);
    expect(shapeDiffs({ err: 'x' }, shape)).toEqual(['$.slot: documented, missing']);
    expect(shapeDiffs({ slot: 1, err: null, memo: null }, shape)).toEqual(['$.memo: expected string, got null']);
    expect(shapeDiffs({ slot: 1, err: null, extra: true }, shape)).toEqual(['$.extra: not documented']);
  });
});

describe('LiteSVM Solana endpoint (scripts/devnet/solana-rpc) against the Solana RPC documentation', () => {
  let rpc: FakeSolanaRpc;
  const vars: Record<string, unknown> = {};

  const raw = async (
    method: string,
    params: unknown[],
  ): Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }> => {
    const res = await fetch(rpc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  };
  const fill = (v: unknown) => fillWith(vars, v);

  beforeAll(async () => {
    rpc = await startFakeSolanaRpc({ confirmedDepth: 1, finalizedDepth: 32 });
    const payer = Keypair.generate();
    rpc.validator.airdrop(payer.publicKey.toBase58(), 10_000_000_000n);
    const mint = rpc.validator.createMint({ decimals: 6 });
    const ata = rpc.validator.setTokenAccount({ mint, owner: payer.publicKey.toBase58(), amount: 1_234_500n });
    const { blockhash } = ((await raw('getLatestBlockhash', [{ commitment: 'confirmed' }])).result as { value: { blockhash: string } })
      .value;
    const transfer = (lamports: bigint) => {
      const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
      );
      tx.sign(payer);
      return tx;
    };
    const landed = transfer(1_000_000n);
    const sig = (await raw('sendTransaction', [landed.serialize().toString('base64'), { encoding: 'base64' }])).result as string;
    rpc.validator.advanceSlots(3);
    const status = (await raw('getSignatureStatuses', [[sig]])).result as { value: Array<{ slot: number }> };
    Object.assign(vars, {
      $payer: payer.publicKey.toBase58(),
      $mint: mint,
      $ata: ata,
      $unknown: new PublicKey(randomBytes(32)).toBase58(),
      $sig: sig,
      $unknownSig: base58Encode(randomBytes(64)),
      $slot: status.value[0]!.slot,
      $blockhash: blockhash,
      $message: transfer(5n).compileMessage().serialize().toString('base64'),
      $tx: transfer(7n).serialize().toString('base64'),
      $freshTx: transfer(2_000_000n).serialize().toString('base64'),
      $failingTx: transfer(1_000_000_000_000_000n).serialize().toString('base64'),
    });
  });

  afterAll(async () => {
    await rpc?.close();
  });

  it('has a documented shape for every Solana method it serves (its svm_* test controls aside)', () => {
    const source = readFileSync('scripts/devnet/solana-rpc/rpc-server.ts', 'utf8');
    const served = [...source.matchAll(/h\.set\('(\w+)'/g)].map((m) => m[1]!).filter((m) => !m.startsWith('svm_'));
    expect(served.length).toBeGreaterThan(20);
    expect([...served].sort()).toEqual(Object.keys(solana.methods).sort());
  });

  for (const [method, fixture] of Object.entries(solana.methods)) {
    it(`${method}: answers in the documented shape (${fixture.source})`, async () => {
      const r = await raw(method, fill(fixture.params) as unknown[]);
      expect(r.error, JSON.stringify(r.error)).toBeUndefined();
      expect(shapeDiffs(r.result, fixture.result, '$', solana.definitions)).toEqual([]);
    });
    for (const e of (fixture.errors ?? []).filter((x) => x.params)) {
      it(`${method}: ${e.when} answers error ${e.code}`, async () => {
        const r = await raw(method, fill(e.params) as unknown[]);
        expect(r.result).toBeUndefined();
        expect(r.error?.code, JSON.stringify(r.error)).toBe(e.code);
        expect(shapeDiffs(r.error, solana.errorObject, '$', solana.definitions)).toEqual([]);
        if (e.code === -32002) expect(shapeDiffs(r.error!.data, solana.preflightErrorData, '$', solana.definitions)).toEqual([]);
      });
    }
  }

  it('answers an unknown method with -32601 and a malformed request with -32600, as JSON-RPC 2.0 says', async () => {
    expect((await raw('getNoSuchThing', [])).error?.code).toBe(-32601);
    const res = await fetch(rpc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1, method: 'getSlot' }),
    });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});

describe('fake java-tron (scripts/devnet/fake-java-tron) against the java-tron HTTP API documentation', () => {
  let node: AnvilNode;
  let fake: FakeJavaTron;
  const vars: Record<string, unknown> = {};
  const post = async (path: string, body: unknown): Promise<{ status: number; json: unknown }> => {
    const res = await fetch(`${fake.url}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };

  beforeAll(async () => {
    node = await startAnvil({ chainId: 0x2b6653dc });
    const [usdt] = await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }]);
    fake = await startFakeJavaTron(node, { solidifyDepth: 1 });
    const key = new SigningKey(hexlify(randomBytes(32)));
    const ownerEvm = computeAddress(key.publicKey);
    const owner = evmHexToTron(ownerEvm);
    fake.chain.setTrx(owner, 1_000_000_000n);
    await fund(usdt!, ownerEvm, 10_000_000n);
    const abi = AbiCoder.defaultAbiCoder();
    const param = (amount: number) =>
      abi.encode(['address', 'uint256'], [computeAddress(new SigningKey(hexlify(randomBytes(32))).publicKey), amount]).slice(2);
    Object.assign(vars, {
      $owner: owner,
      $contract: evmHexToTron(usdt!.address),
      $unknown: evmHexToTron(computeAddress(new SigningKey(hexlify(randomBytes(32))).publicKey)),
      $param: param(1000),
      $balanceParam: abi.encode(['address'], [ownerEvm]).slice(2),
    });
    const signed = async (amount: number) => {
      const built = (
        await post(
          'wallet/triggersmartcontract',
          fillWith(vars, { ...(tron.endpoints['wallet/triggersmartcontract']!.body as object), parameter: param(amount) }),
        )
      ).json as { transaction: { txID: string; raw_data_hex: string } };
      const sig = key.sign(`0x${built.transaction.txID}`);
      return { ...built.transaction, signature: [`${sig.r.slice(2)}${sig.s.slice(2)}${sig.v.toString(16)}`] };
    };
    const landed = await signed(7);
    const sent = (await post('wallet/broadcasttransaction', landed)).json as { result?: boolean };
    if (sent.result !== true) throw new Error(`broadcast refused: ${JSON.stringify(sent)}`);
    await node.mine(3);
    const hexTx = await signed(11);
    Object.assign(vars, {
      $txid: landed.txID,
      $unknownTxid: randomBytes(32).toString('hex'),
      $signedTx: await signed(9),
      $signedHex: encodeSignedTransaction(hexTx.raw_data_hex, hexTx.signature),
      $badHex: '00',
    });
  });

  afterAll(async () => {
    await fake?.close();
    await node?.stop();
  });

  it('has a documented shape for every endpoint it serves', () => {
    const source = readFileSync('scripts/devnet/fake-java-tron/server.ts', 'utf8');
    const served = [...source.matchAll(/^ {4}'(wallet(?:solidity)?\/\w+)':/gm)].map((m) => m[1]!);
    expect(served.length).toBeGreaterThan(15);
    expect([...served].sort()).toEqual(Object.keys(tron.endpoints).sort());
  });

  for (const [path, fixture] of Object.entries(tron.endpoints)) {
    it(`${path}: answers in the documented shape (${fixture.source})`, async () => {
      const r = await post(path, fillWith(vars, fixture.body));
      expect(r.status).toBe(200);
      expect(shapeDiffs(r.json, fixture.result, '$', tron.definitions)).toEqual([]);
    });
    for (const a of fixture.also ?? []) {
      it(`${path}: ${a.when} answers in the documented shape`, async () => {
        const r = await post(path, fillWith(vars, a.body));
        expect(r.status).toBe(200);
        expect(shapeDiffs(r.json, a.result, '$', tron.definitions)).toEqual([]);
      });
    }
  }
});
