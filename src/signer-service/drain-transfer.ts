import type { ChainRegistry } from '../../chains/chain-registry.js';
import { decodeTokenMessage, type TokenMessage } from '../../chains/solana/token-message.js';
import { contractTypeOf, decodeSystemRawData, type SystemRawData } from '../../chains/tron/system-contracts.js';
import type { ChainFamily } from '../../chains/types.js';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import { unsignedEvmTransaction } from './evm-token-call.js';
import type { SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// The one native transfer a gas-station drain's signed bytes make, read per family for justify-drain.ts (docs/signer.md,
// "What is justified"), refusing any other shape before the caller checks who pays whom:
// - EVM: a plain value transfer (no calldata, no contract creation) on the configured chain id; the sender is the key's;
// - TRON: a raw_data of exactly one TransferContract (no smart-contract call, no other system contract);
// - Solana: a message without lookup tables, signed by its fee payer alone, whose instructions are compute budget and
//   exactly one SystemProgram transfer.
// `payers`: the addresses the bytes spend from (EVM: none named; the key signing is the sender).

export interface DrainTransfer {
  /** Addresses the transaction takes coin or fees from: each must be the retired gas station. */
  payers: string[];
  /** The recipient as written (null: an EVM contract creation). */
  to: string | null;
  amount: bigint;
  /** Native decimals (the audit's amount). */
  decimals: number;
}

export function readDrainTransfer(
  family: ChainFamily,
  adapters: ChainRegistry,
  chain: { network: NetworkId; mode: Mode },
  preimage: SignedPreimage,
): DrainTransfer {
  if (family === 'evm') {
    const tx = unsignedEvmTransaction(adapters, chain, preimage);
    if (tx.data !== '0x') refuse('wrong_method', 'a drain is a plain transfer of the native coin, with no calldata');
    return { payers: [], to: tx.to, amount: tx.value, decimals: 18 };
  }
  if (family === 'tron') {
    if (preimage.kind !== 'tron-transaction') refuse('wrong_method', `a TRON drain signs a TRON transaction, not an ${preimage.kind}`);
    let raw: SystemRawData;
    try {
      contractTypeOf(preimage.rawDataHex);
    } catch {
      refuse('undecodable_transaction', 'raw_data is not a TRON transaction with a contract');
    }
    try {
      raw = decodeSystemRawData(preimage.rawDataHex);
    } catch {
      refuse('wrong_method', 'a drain is one TRX TransferContract, not a contract call');
    }
    if (raw.contractCount !== 1 || raw.name !== 'TransferContract')
      refuse('wrong_method', `a drain is exactly one TransferContract, not ${raw.contractCount} contract(s) starting with a ${raw.name}`);
    return { payers: [raw.owner], to: raw.to, amount: raw.amount, decimals: 6 };
  }
  if (preimage.kind !== 'solana-message') refuse('wrong_method', `a Solana drain signs a Solana message, not an ${preimage.kind}`);
  let m: TokenMessage;
  try {
    m = decodeTokenMessage(preimage.message);
  } catch {
    refuse('undecodable_transaction', 'the message is not a Solana transaction message');
  }
  if (m.usesLookupTables) refuse('wrong_method', 'a drain uses no address lookup table');
  const other = m.instructions.find((i) => i.kind !== 'compute-budget' && i.kind !== 'system-transfer');
  if (other) refuse('wrong_method', `a drain holds ${other.kind === 'other' ? `a call of ${other.program}` : `a ${other.kind}`}`);
  const transfers = m.instructions.flatMap((i) => (i.kind === 'system-transfer' ? [i] : []));
  if (transfers.length !== 1) refuse('wrong_method', `a drain is exactly one SystemProgram transfer, not ${transfers.length}`);
  const t = transfers[0]!;
  // The fee payer and every signer are payers too: the retired station must be the only one.
  return { payers: [...new Set([m.feePayer, ...m.requiredSigners, t.from])], to: t.to, amount: t.lamports, decimals: 9 };
}
