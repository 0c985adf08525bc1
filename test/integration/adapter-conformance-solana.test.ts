import { describeAdapterConformance } from '../support/adapter-conformance/scenarios.js';
import { solanaFixture } from '../support/adapter-conformance/solana.js';

// The shared adapter scenarios (test/support/adapter-conformance) against the Solana adapter over the fake LiteSVM RPC.
describeAdapterConformance('Solana (fake LiteSVM RPC, final at finalized)', solanaFixture);
