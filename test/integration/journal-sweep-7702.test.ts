import { journalSweepScenario } from './journal-sweep-scenario.js';

// Sweeps in the journal on the EIP-7702 path: a default (Prague) Anvil, one type-4 batch per sweep from the gas
// station. The scenario: journal-sweep-scenario.ts.
journalSweepScenario({ method: 'evm-7702-batch' });
