import type { Mode } from './vocabulary.js';

// Settings of one network and mode are environment variables named CHAIN_<NETWORK>_<MODE>_<SETTING> (README, "Chains"),
// <NETWORK> the registry id in capitals: a new registry entry gets its settings with no code naming it.

/** `CHAIN_<NETWORK>_<MODE>_`; without a mode, `<MODE>` stays a placeholder (for messages and docs). */
export function chainEnvPrefix(network: string, mode?: Mode): string {
  return `CHAIN_${network.toUpperCase()}_${mode ? mode.toUpperCase() : '<MODE>'}_`;
}
