import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { createSolanaAdapter, type SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import type { ChargeEngineDeps } from '../../src/subscriptions/charge-engine.js';
import type { ManualClock } from '../../src/domain/clock.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import type { SubscriptionSettings } from '../../src/domain/subscription-settings.js';
import type { ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';
import { serveSubscriptionApi } from '../support/subscription-api.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

// The subscription fixture on Solana: the LiteSVM fake RPC (one slot per landed transaction, deterministic) with two
// local 6-decimal mints, the Solana adapter as `solana:test`, the API with the authorization page on a real server, and
// the scheduler driven in-process with a manual clock. Authorization is an SPL Token ApproveChecked signed by the
// customer's keypair, as a Wallet Standard wallet would sign the transaction the adapter prepares.

export const signer = new MnemonicSigner('test test test test test test test test test test test junk');

export interface SolanaSubsFixture {
  rpc: FakeSolanaRpc;
  conn: Connection;
  mints: { USDT: string; USDC: string };
  h: ApiHarness;
  adapter: SolanaChainAdapter;
  clock: ManualClock;
  deps: ChargeEngineDeps;
  client: SignedClient;
  merchantId: string;
  baseUrl: string;
  /** Lets the chain finalize (33 slots), then approvals, due actions and charges, until nothing moves. */
  settle(): Promise<void>;
  /** A fresh wallet with 1 SOL and `usdt` base units in its USDT ATA. */
  customer(usdt: bigint): Keypair;
  create(body: Record<string, unknown>): Promise<any>;
  select(subId: string, owner: string, token?: 'USDT' | 'USDC'): Promise<any>;
  /** Signs the adapter's prepared approval with the customer's key, as a wallet would, and sends it. */
  approve(
    customer: Keypair,
    spender: string,
    amount: bigint,
    token?: 'USDT' | 'USDC',
  ): Promise<{ signature: string; unsigned: Transaction }>;
  tokenBalance(mint: string, owner: string): Promise<bigint>;
  events(subId: string): Promise<string[]>;
  close(): Promise<void>;
}

export async function startSolanaSubsFixture(
  o: { settings?: Partial<SubscriptionSettings>; start?: Date } = {},
): Promise<SolanaSubsFixture> {
  const rpc = await startFakeSolanaRpc();
  const conn = new Connection(rpc.url, 'confirmed');
  const mints = { USDT: Keypair.generate().publicKey.toBase58(), USDC: Keypair.generate().publicKey.toBase58() };
  rpc.validator.createMint({ address: mints.USDT, decimals: 6 });
  rpc.validator.createMint({ address: mints.USDC, decimals: 6 });
  const adapter = createSolanaAdapter({
    mode: 'test',
    rpcUrl: rpc.url,
    tokens: [
      { symbol: 'USDT', address: mints.USDT, decimals: 6 },
      { symbol: 'USDC', address: mints.USDC, decimals: 6 },
    ],
    confirmation: { kind: 'finalized' },
  });
  const adapters = new ChainRegistry([adapter]);
  const api = await serveSubscriptionApi({ adapters, signer, merchantName: 'Solana subscriptions shop', ...o });
  const { h, clock, deps, client, base } = api;
  const m = { merchantId: api.merchantId };
  const w = await deps.walletResolver.resolve(m.merchantId, 'test', 'solana');
  rpc.validator.airdrop(w.charger, 2n * BigInt(LAMPORTS_PER_SOL)); // fees and the settlement ATA's rent

  const ata = (mint: string, owner: string) => getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true);
  const settle = async () => {
    for (let i = 0; i < 200; i++) {
      rpc.validator.advanceSlots(33); // whatever landed so far is finalized
      await pollApprovals({ ...deps, authorizationCheckMs: 0 });
      const t = await runSchedulerTick(deps);
      if (t.due === 0 && t.chargesOpen === 0 && t.chargesSettled === 0) return;
    }
    throw new Error('scheduler did not settle');
  };
  return {
    rpc,
    conn,
    mints,
    h,
    adapter,
    clock,
    deps,
    client,
    merchantId: m.merchantId,
    baseUrl: base,
    settle,
    customer(usdt) {
      const k = Keypair.generate();
      rpc.validator.airdrop(k.publicKey.toBase58(), BigInt(LAMPORTS_PER_SOL));
      rpc.validator.setTokenAccount({ mint: mints.USDT, owner: k.publicKey.toBase58(), amount: usdt });
      return k;
    },
    create: api.create,
    async select(subId, owner, token = 'USDT') {
      const sel = await fetch(`${base}/subscribe/${subId}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'solana', token, address: owner }),
      });
      const info = (await sel.json()) as any;
      if (sel.status !== 200) throw new Error(`select: ${JSON.stringify(info)}`);
      return info;
    },
    async approve(customer, spender, amount, token = 'USDT') {
      const prepared = await adapter.buildApprovalForWallet(token, customer.publicKey.toBase58(), spender, amount);
      if (prepared.kind !== 'solana') throw new Error('not a Solana wallet transaction');
      const unsigned = Transaction.from(Buffer.from(prepared.transaction, 'base64'));
      const tx = Transaction.from(Buffer.from(prepared.transaction, 'base64'));
      tx.partialSign(customer);
      const signature = await conn.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' });
      return { signature, unsigned };
    },
    async tokenBalance(mint, owner) {
      const info = await conn.getAccountInfo(ata(mint, owner), 'confirmed');
      return info && info.data.length >= 72 ? info.data.readBigUInt64LE(64) : 0n;
    },
    events: api.events,
    async close() {
      try {
        await h.close();
      } finally {
        await rpc.close();
      }
    },
  };
}
