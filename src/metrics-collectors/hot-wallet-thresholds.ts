import { NETWORKS } from '../../chains/registry.js';
import { NETWORK_IDS } from '../../chains/types.js';
import { metrics } from '../metrics/registry.js';

// The native balance under which a hot wallet is low, per network: the registry's `lowNativeBalance` (the fee coin of
// a few payouts), exported once at start so that the HotWalletLow alert (deploy/prometheus/alerts.yml) compares each
// wallet's minimum with it and names no network itself. Whole coins, a float: monitoring only.

const threshold = metrics.gauge<'network'>({
  name: 'stablepay_hot_wallet_low_native_threshold',
  help: 'Native balance (whole coins) under which a hot wallet of the network is low (the HotWalletLow alert).',
  labels: ['network'],
  values: { network: NETWORK_IDS },
});

for (const n of NETWORKS) threshold.set({ network: n.id }, Number(n.lowNativeBalance));
