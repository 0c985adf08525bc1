import { describeAdapterConformance } from '../support/adapter-conformance/scenarios.js';
import { tronFixture } from '../support/adapter-conformance/tron.js';

// The shared adapter scenarios (test/support/adapter-conformance) against the TRON adapter: Anvil as java-tron's
// JSON-RPC for detection, the fake java-tron wallet API for payouts.
describeAdapterConformance('TRON (Anvil as java-tron JSON-RPC, fake wallet API; 3 blocks deep)', tronFixture);
