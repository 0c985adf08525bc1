import { describeAdapterConformance } from '../support/adapter-conformance/scenarios.js';
import { evmFixture } from '../support/adapter-conformance/evm.js';

// The shared adapter scenarios (test/support/adapter-conformance) against the EVM adapter on Anvil.
describeAdapterConformance('EVM on Anvil (ethereum, 3 confirmations)', evmFixture);
