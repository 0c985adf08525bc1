import { Contract, parseUnits } from 'ethers';
import { startAnvil, type AnvilNode } from '../../test/support/anvil.js';
import { deployBatcher } from '../../test/support/evm-tokens/deploy.js';
import { deployTokens, fund, walletAt, type DeployedToken } from '../../test/support/evm-tokens/scenario.js';
import type { TokenSymbol } from '../../chains/types.js';

// The EVM benchmarks' chain (evm-watcher.ts, reconcile.ts, scale/measure-chain.ts): Anvil on a random port with the
// given tokens, a payer (Anvil's account 1) holding 100,000,000 of each, and the batch payer contract approved to
// spend them, so that one transaction pays up to 1,000 addresses. Automine is on when this returns.

export interface PayerChain {
  node: AnvilNode;
  tokens: DeployedToken[];
  /** Sends one batch payment of `token` (to[i] receives amounts[i]); mined at once under automine, else by node.mine. */
  pay(token: DeployedToken, to: string[], amounts: bigint[], gasLimit?: bigint): Promise<{ hash: string; wait(): Promise<unknown> }>;
}

export async function startPayerChain(
  specs: Array<{ symbol: TokenSymbol; decimals: number }>,
  extraArgs: string[],
  payerTokens = 100_000_000n,
): Promise<PayerChain> {
  const node = await startAnvil({ chainId: 1, extraArgs: ['--gas-limit', '2000000000', ...extraArgs] });
  try {
    await node.rpc('evm_setAutomine', [true]);
    const tokens = await deployTokens(
      node,
      specs.map((s) => ({ symbol: s.symbol, shape: 'fiat' as const, decimals: s.decimals })),
    );
    const payer = walletAt(1, node.provider);
    const batcher = await deployBatcher(walletAt(0, node.provider));
    for (const token of tokens) {
      const amount = parseUnits(payerTokens.toString(), token.decimals);
      await fund(token, payer.address, amount);
      const approve = new Contract(token.address, ['function approve(address,uint256) returns (bool)'], payer);
      await (
        await (approve.getFunction('approve') as (a: string, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(
          await batcher.getAddress(),
          amount,
        )
      ).wait();
    }
    const payContract = batcher.connect(payer) as Contract;
    const payFn = payContract.getFunction('pay') as (
      t: string,
      a: string[],
      b: bigint[],
      o: object,
    ) => Promise<{ hash: string; wait(): Promise<unknown> }>;
    return {
      node,
      tokens,
      pay: (token, to, amounts, gasLimit = 60_000_000n * BigInt(Math.ceil(to.length / 1000))) =>
        payFn(token.address, to, amounts, { gasLimit }),
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}
