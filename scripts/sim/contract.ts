// The contract between the simulator's runner (scenario, environment, processes, schedule) and its checkers
// (invariants, chain-level faults, shrinking). Issue #20; docs/simulation.md. The runner builds an InvariantContext at
// the end of every seed (and, where cheap, during it) and runs every Invariant; a Violation fails the seed.

import type { Db } from '../../src/db/database.js';
import type { NetworkId } from '../../chains/types.js';

/** One line of a seed's event log: what the runner did or injected, in order (replay prints it). */
export interface SimEvent {
  /** Milliseconds since the seed started. */
  at: number;
  kind: string;
  detail: Record<string, unknown>;
}

export interface SimEvmChain {
  /** An EVM network of the registry. */
  network: NetworkId;
  /** The node's own URL (not through a fault proxy): invariants read the canonical chain here. */
  rpcUrl: string;
  chainId: number;
  /** Token symbol (USDT, USDC) → contract address on this node. */
  tokens: Record<string, string>;
  /** Confirmations the service requires on this network. */
  confirmations: number;
  /** Token symbol → decimals as configured for the service (optional: the invariants read `decimals()` on chain). */
  decimals?: Record<string, number>;
}

export interface SimChains {
  evm: SimEvmChain[];
  /** The LiteSVM JSON-RPC endpoint's own URL, when the seed runs Solana. */
  solana?: { rpcUrl: string; mints: Record<string, string>; confirmations: 'finalized' | 'confirmed' };
  /** The fake java-tron, when the seed runs TRON: wallet API and its /jsonrpc (backed by an Anvil node). */
  tron?: { walletApiUrl: string; jsonRpcUrl: string; tokens: Record<string, string>; confirmations: number };
}

/** One HTTP delivery the simulator's webhook receiver got, whatever it answered. */
export interface ReceivedDelivery {
  /** The event id from the body (`id`). */
  eventId: string;
  type: string;
  /** The business object the event is about (session, refund, subscription, invoice id), from the body. */
  objectId: string;
  /** The raw body, byte for byte. */
  body: string;
  /** The status the receiver answered (0 when it hung up or let the request time out). */
  answered: number;
  /** Receiver-local arrival order (monotonic across the seed). */
  seq: number;
}

export interface InvariantContext {
  /** The seed's database (the runner's private PostgreSQL), migrated, after the service has drained. */
  db: Db;
  chains: SimChains;
  deliveries: ReceivedDelivery[];
  events: SimEvent[];
  /** The seed's BullMQ prefix and Redis URL, to look for jobs nobody will resume. */
  redis: { url: string; prefix: string };
  /** How the roles signed: a separate signer process (the default, docs/signer.md) or each role in process. */
  signer?: 'remote' | 'in-process';
}

export interface Violation {
  invariant: string;
  message: string;
  /** The business object or on-chain id the violation is about, when there is one. */
  subject?: string;
}

export type Invariant = (ctx: InvariantContext) => Promise<Violation[]>;

/** One scheduled fault; the runner injects it at `at` ms into the seed. Shrinking removes entries. */
export interface ScheduledFault {
  at: number;
  kind: string;
  params: Record<string, unknown>;
}
