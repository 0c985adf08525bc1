import { normalizeTronAddress, tronToEvmHex } from '../../../chains/tron/address.js';
import type { SimChains } from '../contract.js';
import { type EvmLike, evmChain } from './evm-chain.js';

// TRON for the invariants: java-tron's Ethereum-compatible JSON-RPC (`SimChains.tron.jsonRpcUrl`, the fake's /jsonrpc
// over Anvil in the simulator) read like an EVM chain, addresses converted between the ledger's canonical `41…` hex
// and the 0x form the JSON-RPC speaks (chains/tron/address.ts).

/** The 0x form of a TRON address given as base58 `T…`, canonical `41…` or already 0x hex; null when none of these. */
export function tronHex(address: string): string | null {
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return address.toLowerCase();
  const c = normalizeTronAddress(address);
  return c ? tronToEvmHex(c).toLowerCase() : null;
}

/** The TRON ledger as an EVM-like chain (tokens in 0x form), or undefined when the seed runs no TRON. */
export function tronAsEvm(chains: SimChains): EvmLike | undefined {
  const t = chains.tron;
  if (!t) return undefined;
  const tokens: Record<string, string> = {};
  for (const [symbol, address] of Object.entries(t.tokens)) {
    const hex = tronHex(address);
    if (!hex) throw new Error(`tron: ${symbol} contract ${address} is not a TRON address`);
    tokens[symbol] = hex;
  }
  return { network: 'tron', rpcUrl: t.jsonRpcUrl, tokens, confirmations: t.confirmations };
}

/**
 * The chain a ledger row of `network` lives on, read like EVM (Ethereum, BSC, and TRON through its JSON-RPC), with the
 * 0x form its addresses take there (TRON: from base58 or canonical `41…`); undefined for Solana or a network not run.
 */
export function evmLikeOf(chains: SimChains, network: string): { chain: EvmLike; hex(address: string): string } | undefined {
  if (network === 'tron') {
    const chain = tronAsEvm(chains);
    return chain ? { chain, hex: (a) => tronHex(a) ?? a.toLowerCase() } : undefined;
  }
  const chain = evmChain(chains.evm, network);
  return chain ? { chain, hex: (a) => a.toLowerCase() } : undefined;
}

/**
 * Whether TRON transaction `txId` (bare or 0x hex) is solidified and succeeded, read as java-tron documents it:
 * `walletsolidity/gettransactionbyid` answers `{}` for a transaction unknown or not yet solidified, otherwise the
 * transaction with `ret[0].contractRet` (`SUCCESS`, or the failure: `OUT_OF_ENERGY`, `REVERT`…). Any transaction kind
 * (TRX transfers, (un)delegations, TRC-20 calls), which java-tron's JSON-RPC does not all show as receipts.
 */
export async function tronSucceeded(walletApiUrl: string, txId: string): Promise<boolean> {
  const value = txId.replace(/^0x/i, '').toLowerCase();
  const res = await fetch(`${walletApiUrl}/walletsolidity/gettransactionbyid`, { method: 'POST', body: JSON.stringify({ value }) });
  if (!res.ok) throw new Error(`tron: walletsolidity/gettransactionbyid answered ${res.status}`);
  const tx = (await res.json()) as { txID?: string; ret?: Array<{ contractRet?: string }> };
  return tx.txID !== undefined && tx.ret?.[0]?.contractRet === 'SUCCESS';
}
