import { OPERATOR_SLOT, isSweeper, type KeyDeriver } from '../../chains/types.js';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import type { Db } from '../../src/db/database.js';
import { setSweepPolicy } from '../../src/ledger/treasury/destinations.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import type { DevEvmChain } from './evm.js';
import { EVM_GAS_WEI } from './fund.js';

// What the demo's operator has set up before anyone sweeps, on every local EVM chain, so that a sweep started from the
// console or `npm run cli -- sweep run` works at once (docs/checkout.md, "The local demo"):
// - the gas station (OPERATOR_SLOT.gasStation, generation 0) holds 10 of the fee coin: it pays the top-ups and the
//   EIP-7702 batches. Set before any sweep registers the station, the gas is part of its opening balance (docs/journal.md,
//   "Native balances"): reconcile stays exact.
// - a test-mode sweep policy per token: minimum DEMO_MIN_MINOR, fees up to DEMO_MAX_FEE_BPS. The default (10 tokens,
//   1 %) would hold the demo's 12.34 and 25.00 sessions back: Anvil's gas prices and the demo's fixed ETH price make a
//   one-address sweep cost several per cent. Demo-only figures, in test mode only.
// - no treasury destination: a sweep goes to the merchant's refunds hot wallet (docs/treasury.md, "Destinations").

/** 1.00 token: any demo payment is swept. */
const DEMO_MIN_MINOR = 100n;
/** Fees up to half of what is swept: a single small demo deposit is worth sweeping on every local chain. */
export const DEMO_MAX_FEE_BPS = 5000;

export async function setUpDemoOperator(i: {
  env: Record<string, string | undefined>;
  keys: KeyDeriver;
  evm: DevEvmChain[];
  db: Db;
}): Promise<{ stations: string[] }> {
  const stations: string[] = [];
  for (const chain of i.evm) {
    const settings = loadChainSettings(i.env, chain.network, 'test');
    if (!settings) throw new Error(`no test settings for ${chain.network}`);
    const adapter = createChainAdapter(settings, i.env);
    if (!isSweeper(adapter)) continue;
    const station = await adapter.deriveOperatorWallet(i.keys, OPERATOR_SLOT.gasStation);
    await chain.node.provider.send('anvil_setBalance', [station.address, `0x${EVM_GAS_WEI.toString(16)}`]);
    for (const [token, t] of Object.entries(chain.tokens) as Array<[keyof DevEvmChain['tokens'], { decimals: number }]>) {
      await setSweepPolicy(i.db, {
        network: chain.network,
        mode: 'test',
        token,
        minAmountBase: DEMO_MIN_MINOR * 10n ** BigInt(t.decimals - STABLECOIN_EXPONENT),
        maxFeeBps: DEMO_MAX_FEE_BPS,
        actor: 'npm run dev',
      });
    }
    stations.push(chain.network);
  }
  return { stations };
}
