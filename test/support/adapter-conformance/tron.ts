import { Wallet } from 'ethers';
import { createTestDatabase } from '../db.js';
import { startAnvil } from '../anvil.js';
import { createMerchant, deployTokens, fund, signer, type DeployedToken } from '../evm-tokens/scenario.js';
import { startFakeJavaTron } from '../../../scripts/devnet/fake-java-tron/server.js';
import { TronChainAdapter } from '../../../chains/tron/adapter.js';
import { evmHexToTron, normalizeTronAddress, tronBase58, tronToEvmHex } from '../../../chains/tron/address.js';
import { HOT_WALLET_SLOT, type TokenContract, type TokenSymbol } from '../../../chains/types.js';
import { anvilPayer, erc20Balance } from './anvil-payer.js';
import type { ConformanceFixture } from './fixture.js';

// TRON, 3 blocks deep: Anvil stands in for java-tron's Ethereum-compatible JSON-RPC (detection), the fake java-tron
// wallet API (scripts/devnet/fake-java-tron) signs-checks, expires and executes payouts on the same Anvil.
const CHAIN_ID = 0x2b6653dcn;
const TRX = 1_000_000n;

export async function tronFixture(): Promise<ConformanceFixture> {
  const [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: Number(CHAIN_ID) })]);
  const [usdt, usdc, lookAlike] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
  ])) as [DeployedToken, DeployedToken, DeployedToken];
  const fake = await startFakeJavaTron(node, { solidifyDepth: 3 });
  const payer = anvilPayer(node);
  for (const t of [usdt, usdc, lookAlike]) await fund(t, payer.address, 10n ** 12n);
  const registry: TokenContract[] = [
    { symbol: 'USDT', address: tronBase58(evmHexToTron(usdt.address)), decimals: 6 }, // both address forms configure
    { symbol: 'USDC', address: evmHexToTron(usdc.address), decimals: 6 },
  ];
  const makeAdapter = (tokens: readonly TokenContract[]) =>
    new TronChainAdapter({
      mode: 'test',
      jsonRpcUrl: node.url,
      fullHost: fake.url,
      chainId: CHAIN_ID,
      tokens,
      confirmation: { kind: 'depth', confirmations: 3 },
    });
  const adapter = makeAdapter(registry);
  const merchant = await createMerchant(tdb.db);
  const hotWallet = await adapter.deriveHotWallet(signer, merchant.account, HOT_WALLET_SLOT.refunds);
  const canonical = (address: string) => {
    const c = normalizeTronAddress(address);
    if (!c) throw new Error(`not a TRON address: ${address}`);
    return c;
  };
  /** The 20 bytes behind a TRON address, as Anvil (the node) sees them. */
  const hex = (address: string) => tronToEvmHex(canonical(address));
  fake.chain.setTrx(canonical(hotWallet.address), 100n * TRX);
  await fund(usdt, hex(hotWallet.address), 10n ** 9n);
  await fund(usdc, hex(hotWallet.address), 10n ** 9n);
  const token = (s: TokenSymbol) => (s === 'USDT' ? usdt : usdc);
  const tronTx = (hash: string) => hash.slice(2).toLowerCase();

  return {
    adapter,
    db: tdb.db,
    merchant,
    addressPattern: /^41[0-9a-f]{40}$/,
    txHashPattern: /^[0-9a-f]{64}$/,
    payer: evmHexToTron(payer.address),
    stepsToFinal: 2,
    adapterWith: (tokens) => makeAdapter(tokens),
    pay: async (s, transfers) =>
      tronTx(
        await payer.pay(
          token(s),
          transfers.map((t) => ({ to: hex(t.to), amount: t.amount })),
        ),
      ),
    payLookAlike: (to, amount) => payer.pay(lookAlike, [{ to: hex(to), amount }]).then(() => undefined),
    payFailing: (s, to, amount) => payer.payFailing(token(s), hex(to), amount),
    land: async () => {},
    advance: (steps) => node.mine(steps),
    reorg: async (s, to, amount) => {
      const t = await payer.reorg(token(s), hex(to), amount);
      return { ...t, txHash: tronTx(t.txHash) };
    },
    hotWallet,
    newDestination: () => tronBase58(evmHexToTron(Wallet.createRandom().address)),
    tokenBalance: (s, owner) => erc20Balance(node, token(s), hex(owner)),
    setNativeBalance: async (address, amount) => fake.chain.setTrx(canonical(address), amount),
    landFailing: async (signed) => {
      fake.forceNextResult('REVERT'); // a receipt java-tron gives a reverted call: energy spent, nothing moved
      const r = await adapter.broadcast(signed);
      if (r.status !== 'accepted') throw new Error(`broadcast: ${JSON.stringify(r)}`);
    },
    outlive: async () => {
      // Past the expiration (60 s after signing), then solidified: the bytes can never be included.
      const head = await node.provider.getBlock('latest');
      await node.rpc('evm_setNextBlockTimestamp', [head!.timestamp + 90]);
      await node.mine(4);
    },
    close: async () => {
      await fake.close();
      await node.stop();
      await tdb.destroy();
    },
  };
}
