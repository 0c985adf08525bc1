import { Transaction } from 'ethers';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter, TokenContract } from '../../chains/types.js';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import type { SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// The EVM checks every justification shares: the signed bytes are one canonical unsigned transaction of an allowed
// type, on the configured chain id (the signer takes no node's word for it); and, for a token call, to the registry's
// contract with no native value.

/**
 * The unsigned EVM transaction the preimage is: canonical serialization, unsigned, of one of `types`, on the chain id
 * configured for `chain` (CHAIN_<NET>_<MODE>_CHAIN_ID). Refuses anything else.
 */
export function unsignedEvmTransaction(
  adapters: ChainRegistry,
  chain: { network: NetworkId; mode: Mode },
  preimage: SignedPreimage,
  types: readonly number[] = [0, 1, 2],
): Transaction {
  if (preimage.kind !== 'evm-transaction') refuse('wrong_method', `an EVM send signs an EVM transaction, not an ${preimage.kind}`);
  let tx: Transaction;
  try {
    tx = Transaction.from(preimage.unsignedSerialized);
  } catch {
    refuse('undecodable_transaction', 'the preimage is not an EVM transaction');
  }
  if (tx.signature !== null || tx.unsignedSerialized.toLowerCase() !== preimage.unsignedSerialized.toLowerCase())
    refuse('undecodable_transaction', 'the preimage is not an unsigned transaction in its canonical serialization');
  if (tx.type === null || !types.includes(tx.type)) refuse('wrong_method', `this send is not a type ${tx.type} transaction`);
  const chainId = adapters.chainId(chain.network, chain.mode);
  if (chainId === undefined)
    refuse('wrong_chain', `the signer has no CHAIN_${chain.network.toUpperCase()}_${chain.mode.toUpperCase()}_CHAIN_ID configured`);
  if (tx.chainId !== chainId) refuse('wrong_chain', `chain id ${tx.chainId}, ${chain.network} is ${chainId}`);
  return tx;
}

/**
 * The calldata of an unsigned EVM transaction that calls `token` on the configured chain with no native value: a
 * canonical unsigned type 0, 1 or 2 transaction, the configured chain id, the registry's contract. Refuses anything
 * else; the caller reads the call itself.
 */
export function evmTokenCallData(
  adapters: ChainRegistry,
  adapter: ChainAdapter,
  chain: { network: NetworkId; mode: Mode; token: string },
  token: TokenContract,
  preimage: SignedPreimage,
): string {
  const tx = unsignedEvmTransaction(adapters, chain, preimage);
  if (tx.to === null || adapter.normalizeAddress(tx.to) !== adapter.normalizeAddress(token.address))
    refuse('wrong_contract', `the transaction calls ${tx.to ?? 'no contract'}, not the ${chain.token} contract`);
  if (tx.value !== 0n) refuse('native_value', `the transaction carries ${tx.value} wei`);
  return tx.data;
}
