import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Connection, Keypair, PublicKey, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { HOT_WALLET_SLOT, type NetworkId } from '../../chains/types.js';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { startAnvil, type AnvilNode } from './anvil.js';
import { TEST_MASTER_KEY } from './api-harness.js';
import { backgroundMiner } from './chain-watch.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { RATE_LIMITS_OFF_ENV, REDIS_URL } from './env.js';
import { TEST_MNEMONIC, deployTokens, signer, type DeployedToken } from './evm-tokens/scenario.js';
import { SignedClient } from './signed-client.js';

// One service (src/main.ts `start`, every role in one process) over a fresh database and its own Redis prefix with all
// four networks configured in test mode: Ethereum and BSC each on their own Anvil node (BSC's tokens with 18 decimals,
// as on BSC), TRON on the fake java-tron over a third Anvil (its /jsonrpc for detection), Solana on the LiteSVM
// endpoint. Background miners keep the EVM-backed chains moving (each can be paused, e.g. for a reorg); the Solana
// fake's slot clock runs on its own. Used by the scripted day (test/integration/journal-scripted-day.test.ts).

export type EvmNet = 'ethereum' | 'bsc' | 'tron';
export interface FourNetworkHarness {
  t: TestDatabase;
  service: RunningService;
  base: string;
  env: Record<string, string>;
  nodes: Record<EvmNet, AnvilNode>;
  tokens: Record<EvmNet, { USDT: DeployedToken; USDC: DeployedToken }>;
  fake: FakeJavaTron;
  sol: FakeSolanaRpc;
  conn: Connection;
  mints: { USDT: string; USDC: string };
  /** Stops (or restarts) the background miner of one EVM-backed node. */
  pauseMiner(net: EvmNet): void;
  resumeMiner(net: EvmNet): void;
  newMerchant(name: string): Promise<DayMerchant>;
  /** A session for `amount` USD with `network` + token selected on the public checkout endpoint. */
  selectSession(
    m: DayMerchant,
    network: NetworkId,
    o: { amount: string; token: 'USDT' | 'USDC' },
  ): Promise<{ id: string; depositAddress: string; due: bigint }>;
  /** An SPL transfer of `amount` from a fresh keypair (funded by the fake) to `owner`'s associated account. */
  solanaTransfer(mint: string, owner: string, amount: bigint): Promise<{ payer: string; tx: string }>;
  until<T>(f: () => Promise<T | undefined>, ms?: number): Promise<T>;
  close(): Promise<void>;
}

export interface DayMerchant {
  id: string;
  client: SignedClient;
  account: number;
  /** Canonical address of the merchant's refund hot wallet per network. */
  hot: Record<NetworkId, string>;
}

export async function startFourNetworkHarness(o: { extraEnv?: Record<string, string> } = {}): Promise<FourNetworkHarness> {
  const [t, eth, bsc, tronNode, sol] = await Promise.all([
    createTestDatabase(),
    startAnvil({ chainId: 31337 }),
    startAnvil({ chainId: 56 }),
    startAnvil({ chainId: 0x2b6653dc }),
    startFakeSolanaRpc({ slotIntervalMs: 25, blockhashValidity: 2_000 }),
  ]);
  const pair = async (node: AnvilNode, decimals: number) => {
    const [USDT, USDC] = (await deployTokens(node, [
      { symbol: 'USDT', shape: 'tether', decimals },
      { symbol: 'USDC', shape: 'fiat', decimals },
    ])) as [DeployedToken, DeployedToken];
    return { USDT, USDC };
  };
  const tokens = { ethereum: await pair(eth, 6), bsc: await pair(bsc, 18), tron: await pair(tronNode, 6) };
  const fake = await startFakeJavaTron(tronNode, { solidifyDepth: 3 });
  const mints = { USDT: Keypair.generate().publicKey.toBase58(), USDC: Keypair.generate().publicKey.toBase58() };
  sol.validator.createMint({ address: mints.USDT, decimals: 6 });
  sol.validator.createMint({ address: mints.USDC, decimals: 6 });
  const tronAddr = (hex: string) => tronBase58(evmHexToTron(hex));
  const prefix = `sp_day_${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.HARNESS_LOG ?? 'silent',
    HD_MNEMONIC: TEST_MNEMONIC,
    CHAIN_ETHEREUM_TEST_RPC_URL: eth.url,
    CHAIN_ETHEREUM_TEST_CHAIN_ID: '31337',
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '2',
    CHAIN_ETHEREUM_TEST_POLL_INTERVAL_MS: '150',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: tokens.ethereum.USDT.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
    CHAIN_ETHEREUM_TEST_USDC_CONTRACT: tokens.ethereum.USDC.address,
    CHAIN_ETHEREUM_TEST_USDC_DECIMALS: '6',
    CHAIN_BSC_TEST_RPC_URL: bsc.url,
    CHAIN_BSC_TEST_CHAIN_ID: '56',
    CHAIN_BSC_TEST_CONFIRMATIONS: '2',
    CHAIN_BSC_TEST_POLL_INTERVAL_MS: '150',
    CHAIN_BSC_TEST_USDT_CONTRACT: tokens.bsc.USDT.address,
    CHAIN_BSC_TEST_USDT_DECIMALS: '18',
    CHAIN_BSC_TEST_USDC_CONTRACT: tokens.bsc.USDC.address,
    CHAIN_BSC_TEST_USDC_DECIMALS: '18',
    CHAIN_TRON_TEST_RPC_URL: `${fake.url}/jsonrpc`,
    CHAIN_TRON_TEST_FULL_HOST: fake.url,
    CHAIN_TRON_TEST_CHAIN_ID: String(0x2b6653dc),
    CHAIN_TRON_TEST_CONFIRMATIONS: '3',
    CHAIN_TRON_TEST_POLL_INTERVAL_MS: '150',
    CHAIN_TRON_TEST_USDT_CONTRACT: tronAddr(tokens.tron.USDT.address),
    CHAIN_TRON_TEST_USDT_DECIMALS: '6',
    CHAIN_TRON_TEST_USDC_CONTRACT: tronAddr(tokens.tron.USDC.address),
    CHAIN_TRON_TEST_USDC_DECIMALS: '6',
    CHAIN_SOLANA_TEST_RPC_URL: sol.url,
    CHAIN_SOLANA_TEST_POLL_INTERVAL_MS: '150',
    CHAIN_SOLANA_TEST_USDT_CONTRACT: mints.USDT,
    CHAIN_SOLANA_TEST_USDT_DECIMALS: '6',
    CHAIN_SOLANA_TEST_USDC_CONTRACT: mints.USDC,
    CHAIN_SOLANA_TEST_USDC_DECIMALS: '6',
    PAYOUT_POLL_MS: '150',
    PAYOUT_SWEEP_INTERVAL_MS: '2000',
    EXPIRY_SWEEP_INTERVAL_MS: '500',
    SUBSCRIPTION_TICK_MS: '300',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400,800,1600',
    ...RATE_LIMITS_OFF_ENV,
    ...o.extraEnv,
  };
  const nodes = { ethereum: eth, bsc, tron: tronNode };
  const stopAll = async () => {
    await fake.close();
    await sol.close();
    await Promise.all(Object.values(nodes).map((n) => n.stop()));
  };
  let service: RunningService;
  try {
    const config = loadConfig(env);
    service = await start(config, env, createLogger(config.LOG_LEVEL));
  } catch (e) {
    await stopAll();
    await t.destroy();
    throw e;
  }
  const base = `http://127.0.0.1:${service.port}`;
  const box = new SecretBox(TEST_MASTER_KEY);
  const miners = new Map<EvmNet, { stop(): void }>();
  const resumeMiner = (net: EvmNet) => {
    if (!miners.has(net)) miners.set(net, backgroundMiner(nodes[net], 150));
  };
  const pauseMiner = (net: EvmNet) => {
    miners.get(net)?.stop();
    miners.delete(net);
  };
  for (const net of Object.keys(nodes) as EvmNet[]) resumeMiner(net);
  const conn = new Connection(sol.url, 'confirmed');
  const ata = (mint: string, owner: string) => getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true);

  const until = async <T>(f: () => Promise<T | undefined>, ms = 60_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  return {
    t,
    service,
    base,
    env,
    nodes,
    tokens,
    fake,
    sol,
    conn,
    mints,
    pauseMiner,
    resumeMiner,
    until,
    async newMerchant(name) {
      const m = await createMerchant(t.db, box, { name, webhookUrl: null });
      const { account_index: account } = await t.db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', m.merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      const hot = {} as Record<NetworkId, string>;
      for (const network of ['ethereum', 'bsc', 'tron', 'solana'] as const)
        hot[network] = (await service.adapters.require(network, 'test').deriveHotWallet(signer, account, HOT_WALLET_SLOT.refunds)).address;
      return { id: m.merchantId, client: new SignedClient(base, { key: m.testKey.key, secret: m.testKey.secret }), account, hot };
    },
    async selectSession(m, network, s) {
      const created = await m.client.post('/api/v1/checkout/sessions/create', {
        amount: s.amount,
        currency: 'USD',
        order_id: `day-${randomBytes(6).toString('hex')}`,
      });
      if (created.status !== 200) throw new Error(`create failed: ${created.text}`);
      const sel = await fetch(`${base}/checkout/sessions/${created.json.id}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network, token: s.token }),
      });
      const raw = (await sel.json()) as { deposit_address: string; amount_due_base: string };
      if (sel.status !== 200) throw new Error(`select failed: ${sel.status} ${JSON.stringify(raw)}`);
      return { id: created.json.id as string, depositAddress: raw.deposit_address, due: BigInt(raw.amount_due_base) };
    },
    async solanaTransfer(mint, owner, amount) {
      const payer = Keypair.generate();
      sol.validator.airdrop(payer.publicKey.toBase58(), 1_000_000_000n);
      sol.validator.setTokenAccount({ mint, owner: payer.publicKey.toBase58(), amount });
      const { blockhash } = await conn.getLatestBlockhash('confirmed');
      const msg = new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata(mint, owner), new PublicKey(owner), new PublicKey(mint)),
          createTransferCheckedInstruction(
            ata(mint, payer.publicKey.toBase58()),
            new PublicKey(mint),
            ata(mint, owner),
            payer.publicKey,
            amount,
            6,
          ),
        ],
      }).compileToV0Message();
      const tx = new VersionedTransaction(msg);
      tx.sign([payer]);
      return { payer: payer.publicKey.toBase58(), tx: await conn.sendTransaction(tx, { preflightCommitment: 'confirmed' }) };
    },
    async close() {
      for (const net of [...miners.keys()]) pauseMiner(net);
      try {
        await service.stop();
      } finally {
        const redis = new Redis(REDIS_URL);
        const keys = await redis.keys(`${prefix}:*`);
        for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
        redis.disconnect();
        await stopAll();
        await t.destroy();
      }
    },
  };
}
