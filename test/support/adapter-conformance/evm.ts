import { Wallet } from 'ethers';
import type { EvmChainAdapter } from '../../../chains/evm/adapter.js';
import { HOT_WALLET_SLOT, type TokenSymbol } from '../../../chains/types.js';
import type { AnvilNode } from '../anvil.js';
import { createTestDatabase } from '../db.js';
import { startAnvil } from '../anvil.js';
import { createMerchant, deployTokens, fund, makeAdapter, signer, type DeployedToken } from '../evm-tokens/scenario.js';
import { anvilPayer, erc20Balance, minedReceipt, whileTokenPaused } from './anvil-payer.js';
import type { ConformanceFixture } from './fixture.js';

// Ethereum on Anvil, 3 confirmations: USDT Tether-style, USDC FiatToken-style, a look-alike "USDT" elsewhere.
export async function evmFixture(): Promise<ConformanceFixture> {
  const node = await startAnvil({ chainId: 1 });
  return evmFixtureOn(node, {
    adapter: (tokens) => makeAdapter(node, tokens),
    stepsToFinal: 2,
    advance: (steps) => node.mine(steps),
  });
}

/** How an EVM fixture's chain is read and moved: the adapter over given tokens, and what one advance() step mines. */
export interface EvmFixtureChain {
  adapter(tokens: DeployedToken[]): EvmChainAdapter;
  stepsToFinal: number;
  advance(steps: number): Promise<void>;
}

/** The EVM fixture over a started Anvil node (stopped by close()). */
export async function evmFixtureOn(node: AnvilNode, chain: EvmFixtureChain): Promise<ConformanceFixture> {
  const tdb = await createTestDatabase();
  const [usdt, usdc, lookAlike] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
  ])) as [DeployedToken, DeployedToken, DeployedToken];
  const payer = anvilPayer(node);
  for (const t of [usdt, usdc, lookAlike]) await fund(t, payer.address, 10n ** 12n);
  const adapter = chain.adapter([usdt, usdc]);
  const merchant = await createMerchant(tdb.db);
  const hotWallet = await adapter.deriveHotWallet(signer, merchant.account, HOT_WALLET_SLOT.refunds);
  const setNativeBalance = (address: string, amount: bigint) =>
    node.rpc('anvil_setBalance', [address, `0x${amount.toString(16)}`]).then(() => undefined);
  await setNativeBalance(hotWallet.address, 10n ** 19n);
  await fund(usdt, hotWallet.address, 10n ** 9n);
  await fund(usdc, hotWallet.address, 10n ** 9n);
  const token = (s: TokenSymbol) => (s === 'USDT' ? usdt : usdc);

  return {
    adapter,
    db: tdb.db,
    merchant,
    addressPattern: /^0x[0-9a-f]{40}$/,
    txHashPattern: /^0x[0-9a-f]{64}$/,
    payer: payer.address,
    stepsToFinal: chain.stepsToFinal,
    adapterWith: (tokens) => chain.adapter(tokens.map((t) => ({ ...(t.symbol === 'USDT' ? usdt : usdc), decimals: t.decimals }))),
    pay: (s, transfers) => payer.pay(token(s), transfers),
    payLookAlike: (to, amount) => payer.pay(lookAlike, [{ to, amount }]).then(() => undefined),
    payFailing: (s, to, amount) => payer.payFailing(token(s), to, amount),
    // Automine: the transaction is mined at broadcast, but Anvil can answer eth_sendRawTransaction before the block is
    // sealed: wait until its pool is empty (a loaded machine showed the outcome still pending right after).
    land: async () => {
      for (let i = 0; ; i++) {
        const pool = await node.rpc<{ pending: string }>('txpool_status', []);
        if (BigInt(pool.pending) === 0n) return;
        if (i > 200) throw new Error('transaction still pending on Anvil after 10 s');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    advance: (steps) => chain.advance(steps),
    nativeBalance: async (address) => BigInt(await node.rpc<string>('eth_getBalance', [address, 'latest'])),
    reorg: (s, to, amount) => payer.reorg(token(s), to, amount),
    hotWallet,
    newDestination: () => Wallet.createRandom().address,
    tokenBalance: (s, owner) => erc20Balance(node, token(s), owner),
    setNativeBalance,
    landFailing: (signed, s) =>
      whileTokenPaused(token(s), async () => {
        const r = await adapter.broadcast(signed);
        if (r.status !== 'accepted') throw new Error(`broadcast: ${JSON.stringify(r)}`);
        await minedReceipt(node, signed.hash);
      }),
    outlive: async (signed) => {
      // Another transaction takes the nonce: the stale bytes can never be mined.
      const other = await adapter.buildTokenTransfer({
        from: hotWallet,
        to: Wallet.createRandom().address,
        token: 'USDT',
        amount: 1n,
        nonce: BigInt(signed.nonce!),
      });
      const taken = await adapter.signTransfer(other, signer);
      await adapter.broadcast(taken);
      await minedReceipt(node, taken.hash);
    },
    close: async () => {
      await node.stop();
      await tdb.destroy();
    },
  };
}
