import { journalSweepScenario } from './journal-sweep-scenario.js';

// Sweeps in the journal on the gas top-up path: a pre-Prague Anvil (no EIP-7702). The scenario: journal-sweep-scenario.ts.
journalSweepScenario({ anvilArgs: ['--hardfork', 'cancun'], method: 'evm-gas-topup' });
