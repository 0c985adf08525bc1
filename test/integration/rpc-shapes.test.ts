import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base58Encode } from '../../chains/solana/base58.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
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

const solana = JSON.parse(readFileSync('test/fixtures/rpc-shapes/solana.json', 'utf8')) as SolanaFixture;

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

  const raw = async (method: string, params: unknown[]): Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }> => {
    const res = await fetch(rpc.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  };
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string' && v.startsWith('$')) {
      if (!(v in vars)) throw new Error(`no value for ${v}`);
      return vars[v];
    }
    if (Array.isArray(v)) return v.map(fill);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };

  beforeAll(async () => {
    rpc = await startFakeSolanaRpc({ confirmedDepth: 1, finalizedDepth: 32 });
    const payer = Keypair.generate();
    rpc.validator.airdrop(payer.publicKey.toBase58(), 10_000_000_000n);
    const mint = rpc.validator.createMint({ decimals: 6 });
    const ata = rpc.validator.setTokenAccount({ mint, owner: payer.publicKey.toBase58(), amount: 1_234_500n });
    const { blockhash } = ((await raw('getLatestBlockhash', [{ commitment: 'confirmed' }])).result as { value: { blockhash: string } }).value;
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
    const res = await fetch(rpc.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 1, method: 'getSlot' }) });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});
