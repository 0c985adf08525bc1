import { explorerTxLink } from './explorers.js';
import type { ChainAdapter, LookalikeContract, Mode, NetworkId, TokenContract, TokenSymbol } from './types.js';

// The configured chains of a deployment, one adapter per (network, mode): the only place that keys chains by name.
// Lookups take the text stored in rows or sent by a payer; a network, mode or token this deployment does not configure
// answers undefined (or ChainNotConfiguredError from `require`), never another chain's adapter.

/** An adapter with what its settings add for the hosted pages. */
export interface RegisteredChain {
  adapter: ChainAdapter;
  /** Confirmation depth shown to payers ("n of N"); null or absent when finality is not a depth. */
  confirmations?: number | null;
  /** The configured EIP-155 chain id (CHAIN_<NETWORK>_<MODE>_CHAIN_ID), when one is. */
  chainId?: bigint;
  /** Explorer page template of a transaction, `{tx}` for the hash (chains/explorers.ts); absent or null: no link. */
  explorerTxUrl?: string | null;
}

export class ChainNotConfiguredError extends Error {
  constructor(
    readonly network: string,
    readonly mode: Mode,
  ) {
    super(`${network} (${mode}) is not configured`);
  }
}

export class ChainRegistry implements Iterable<ChainAdapter> {
  readonly #chains = new Map<string, RegisteredChain>();

  /** Throws on two adapters of one network and mode. */
  constructor(chains: Iterable<ChainAdapter | RegisteredChain> = []) {
    for (const c of chains) {
      const entry = 'adapter' in c ? c : { adapter: c };
      const key = keyOf(entry.adapter.network, entry.adapter.mode);
      if (this.#chains.has(key)) throw new Error(`two adapters for ${entry.adapter.network} (${entry.adapter.mode})`);
      this.#chains.set(key, entry);
    }
  }

  get size(): number {
    return this.#chains.size;
  }

  [Symbol.iterator](): Iterator<ChainAdapter> {
    return [...this.#chains.values()].map((c) => c.adapter)[Symbol.iterator]();
  }

  /** The configured networks, as `network:mode` labels for logs. */
  labels(): string[] {
    return [...this.#chains.keys()];
  }

  get(network: NetworkId | string, mode: Mode): ChainAdapter | undefined {
    return this.#chains.get(keyOf(network, mode))?.adapter;
  }

  require(network: NetworkId | string, mode: Mode): ChainAdapter {
    const adapter = this.get(network, mode);
    if (!adapter) throw new ChainNotConfiguredError(network, mode);
    return adapter;
  }

  /** The registry's contract (or mint) and decimals of `symbol` on that chain. */
  token(network: NetworkId | string, mode: Mode, symbol: TokenSymbol | string): TokenContract | undefined {
    return this.get(network, mode)?.tokens.find((t) => t.symbol === symbol);
  }

  /**
   * The look-alike at `contract` (as stored in a deposit row) on that chain: its symbol, decimals and the registry's
   * note, for operator views of unsupported-token deposits. Never a settlement token: tokenDecimals does not know it.
   */
  lookalike(network: NetworkId | string, mode: Mode, contract: string): LookalikeContract | undefined {
    const adapter = this.get(network, mode);
    if (!adapter) return undefined;
    const canonical = adapter.normalizeAddress(contract) ?? contract;
    return adapter.lookalikes?.find((l) => l.address === canonical);
  }

  /** chains/vocabulary.ts TokenDecimals; an arrow so that it can be passed on its own. */
  readonly tokenDecimals = (network: string, mode: Mode, token: string): number | undefined => this.token(network, mode, token)?.decimals;

  /** Canonical form of `text` on that chain, or null when it is not an address there (or the chain is not configured). */
  normalizeAddress(network: string, mode: Mode, text: string): string | null {
    return this.get(network, mode)?.normalizeAddress(text) ?? null;
  }

  /** The display form of a canonical address; the canonical text itself when the chain is not configured. */
  displayAddress(network: string, mode: Mode, canonical: string): string {
    return this.get(network, mode)?.displayAddress(canonical) ?? canonical;
  }

  confirmations(network: NetworkId | string, mode: Mode): number | null {
    return this.#chains.get(keyOf(network, mode))?.confirmations ?? null;
  }

  chainId(network: NetworkId | string, mode: Mode): bigint | undefined {
    return this.#chains.get(keyOf(network, mode))?.chainId;
  }

  /** The explorer page of a transaction on that chain, or null when none is configured. */
  explorerTxUrl(network: NetworkId | string, mode: Mode, hash: string): string | null {
    const template = this.#chains.get(keyOf(network, mode))?.explorerTxUrl;
    return template ? explorerTxLink(template, network, hash) : null;
  }
}

const keyOf = (network: string, mode: Mode): string => `${network}:${mode}`;

/**
 * Decimals of a configured token by (network, mode, symbol), from settings alone (no RPC): for commands that only read
 * the ledger (exports). The service itself asks the verified ChainRegistry.
 */
export function configuredTokenDecimals(
  chains: ReadonlyArray<{ network: string; mode: Mode; tokens: ReadonlyArray<{ symbol: string; decimals: number }> }>,
): (network: string, mode: Mode, token: string) => number | undefined {
  const byKey = new Map<string, number>();
  for (const c of chains) for (const t of c.tokens) byKey.set(`${keyOf(c.network, c.mode)}:${t.symbol}`, t.decimals);
  return (network, mode, token) => byKey.get(`${keyOf(network, mode)}:${token}`);
}
