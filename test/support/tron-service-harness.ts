import { backgroundMiner, transfersFrom } from './chain-watch.js';
import { startAnvil, type AnvilNode } from './anvil.js';
import { deployTokens, fund, payFrom, walletAt, type DeployedToken } from './evm-tokens/scenario.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { evmHexToTron, normalizeTronAddress, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import { startChainServiceHarness, type ChainHarnessMerchant, type ChainServiceHarness } from './chain-service-harness.js';

// The whole service configured for TRON in test mode: CHAIN_TRON_TEST_RPC_URL is the fake's /jsonrpc, Anvil's JSON-RPC
// standing in for java-tron's with transaction hashes shown as TRON txIDs, as java-tron names them (detection), CHAIN_TRON_TEST_FULL_HOST the fake java-tron wallet API (scripts/devnet/fake-java-tron, payouts
// executed on that same Anvil), Tether-style USDT and FiatToken-style USDC deployed there and named in configuration.
/** The 0x EVM form of a TRON address given in any TRON form. */
export function tronEvm(address: string): string {
  const c = normalizeTronAddress(address);
  if (!c) throw new Error(`not a TRON address: ${address}`);
  return tronToEvmHex(c);
}

export interface TronServiceHarness extends ChainServiceHarness {
  node: AnvilNode;
  fake: FakeJavaTron;
  tokens: { USDT: DeployedToken; USDC: DeployedToken };
  /** TRX (activates the account) and tokens for the merchant's hot wallet. */
  fundHotWallet(m: ChainHarnessMerchant, o?: { trxSun?: bigint; usdt?: bigint; usdc?: bigint; energy?: bigint }): Promise<void>;
  /** A session paid on TRON by a fresh payer through the selection endpoint, seen `paid` through the API. */
  paidSession(
    m: ChainHarnessMerchant,
    o: { amount: string; token?: 'USDT' | 'USDC'; paid?: bigint },
  ): Promise<{ id: string; payer: string; payerBase58: string; depositAddress: string }>;
  /** Transfer logs of `token` from one TRON address to another (any TRON form), read from the node. */
  transfers(token: 'USDT' | 'USDC', from: string, to: string): Promise<Array<{ amount: bigint; evmTx: string }>>;
  stopMiner(): void;
}

export async function startTronServiceHarness(
  o: { extraEnv?: Record<string, string>; solidifyDepth?: number; minerMs?: number } = {},
): Promise<TronServiceHarness> {
  const node = await startAnvil({ chainId: 0x2b6653dc });
  const [USDT, USDC] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  const depth = o.solidifyDepth ?? 3;
  const fake = await startFakeJavaTron(node, { solidifyDepth: depth });
  let h: ChainServiceHarness;
  try {
    h = await startChainServiceHarness({
      network: 'tron',
      chainEnv: {
        CHAIN_TRON_TEST_RPC_URL: `${fake.url}/jsonrpc`,
        CHAIN_TRON_TEST_FULL_HOST: fake.url,
        CHAIN_TRON_TEST_CHAIN_ID: String(0x2b6653dc),
        CHAIN_TRON_TEST_CONFIRMATIONS: String(depth),
        CHAIN_TRON_TEST_POLL_INTERVAL_MS: '150',
        CHAIN_TRON_TEST_USDT_CONTRACT: tronBase58(evmHexToTron(USDT.address)),
        CHAIN_TRON_TEST_USDT_DECIMALS: '6',
        CHAIN_TRON_TEST_USDC_CONTRACT: tronBase58(evmHexToTron(USDC.address)),
        CHAIN_TRON_TEST_USDC_DECIMALS: '6',
      },
      extraEnv: o.extraEnv,
    });
  } catch (e) {
    await fake.close();
    await node.stop();
    throw e;
  }
  let miner = backgroundMiner(node, o.minerMs ?? 150);
  let payerIndex = 20;
  const tokens = { USDT, USDC };

  return {
    ...h,
    node,
    fake,
    tokens,
    stopMiner: () => miner.stop(),
    async fundHotWallet(m, f = {}) {
      fake.chain.setTrx(m.hotWallet, f.trxSun ?? 100_000_000n);
      if (f.energy !== undefined) fake.chain.setStaked(m.hotWallet, { energy: f.energy });
      const evm = tronEvm(m.hotWallet);
      if ((f.usdt ?? 1_000_000_000n) > 0n) await fund(USDT, evm, f.usdt ?? 1_000_000_000n);
      if ((f.usdc ?? 1_000_000_000n) > 0n) await fund(USDC, evm, f.usdc ?? 1_000_000_000n);
    },
    async paidSession(m, p) {
      const token = p.token ?? 'USDT';
      const sel = await h.selectSession(m, { amount: p.amount, token });
      const payer = walletAt(payerIndex++, node.provider);
      const amount = p.paid ?? BigInt(sel.amount_due_base);
      await node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
      await fund(tokens[token], payer.address, amount);
      await payFrom(payer, tokens[token], tronEvm(sel.deposit_address), amount);
      await h.waitPaid(m, sel.id);
      const canonical = evmHexToTron(payer.address);
      return { id: sel.id, payer: canonical, payerBase58: tronBase58(canonical), depositAddress: sel.deposit_address };
    },
    async transfers(token, from, to) {
      const logs = await transfersFrom(node, tokens[token].address, tronEvm(from), tronEvm(to));
      return logs.map((l) => ({ amount: l.amount, evmTx: l.tx }));
    },
    async close() {
      miner.stop();
      miner = { stop() {} };
      try {
        await h.close();
      } finally {
        await fake.close();
        await node.stop();
      }
    },
  };
}
