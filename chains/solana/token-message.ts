import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { ComputeBudgetProgram, PublicKey, SystemProgram, VersionedMessage } from '@solana/web3.js';

// A Solana message read back into what it does, for a signer that does not trust its caller (docs/signer.md): the fee
// payer, the keys that must sign (one or several: a sweep batch is signed by its fee payer and each deposit owner), and
// each instruction as one of the few kinds our senders build (compute budget, an idempotent associated-token-account
// creation, an SPL TransferChecked or CloseAccount, each with a single-key authority; a SystemProgram transfer, a drain) or `other`. Only static account keys: a
// message using address lookup tables cannot be read without the chain, so it is reported as such.

export type TokenMessageInstruction =
  | { kind: 'compute-budget' }
  | { kind: 'create-ata'; payer: string; ata: string; owner: string; mint: string; tokenProgram: string }
  | {
      kind: 'transfer-checked';
      source: string;
      mint: string;
      destination: string;
      authority: string;
      amount: bigint;
      decimals: number;
      tokenProgram: string;
    }
  | { kind: 'close-account'; account: string; destination: string; authority: string; tokenProgram: string }
  | { kind: 'system-transfer'; from: string; to: string; lamports: bigint }
  | { kind: 'other'; program: string };

export interface TokenMessage {
  feePayer: string;
  requiredSigners: string[];
  usesLookupTables: boolean;
  instructions: TokenMessageInstruction[];
}

const TRANSFER_CHECKED = 12;
const CLOSE_ACCOUNT = 9;
const CREATE_IDEMPOTENT = 1;
/** SystemProgram's Transfer: a u32 instruction index 2, then the u64 lamports (a gas-station drain). */
const SYSTEM_TRANSFER = 2;
const SYSTEM_PROGRAM = SystemProgram.programId.toBase58();
/** SetComputeUnitLimit (2) and SetComputeUnitPrice (3): the only compute-budget instructions our senders write. */
const BUDGET_KINDS = new Set([2, 3]);

/** Throws on bytes that are not a Solana message. */
export function decodeTokenMessage(bytes: Uint8Array): TokenMessage {
  const message = VersionedMessage.deserialize(bytes);
  const keys = message.staticAccountKeys.map((k) => k.toBase58());
  const at = (i: number | undefined): string => {
    const k = i === undefined ? undefined : keys[i];
    if (k === undefined) throw new Error('an instruction names an account outside the static keys');
    return k;
  };
  const instructions = message.compiledInstructions.map((ix): TokenMessageInstruction => {
    const program = at(ix.programIdIndex);
    const data = Buffer.from(ix.data);
    const acc = ix.accountKeyIndexes;
    if (program === ComputeBudgetProgram.programId.toBase58() && data.length > 0 && BUDGET_KINDS.has(data[0]!))
      return { kind: 'compute-budget' };
    if (program === ASSOCIATED_TOKEN_PROGRAM_ID.toBase58() && data.length === 1 && data[0] === CREATE_IDEMPOTENT && acc.length === 6)
      return { kind: 'create-ata', payer: at(acc[0]), ata: at(acc[1]), owner: at(acc[2]), mint: at(acc[3]), tokenProgram: at(acc[5]) };
    if (program === TOKEN_PROGRAM_ID.toBase58() && data.length === 10 && data[0] === TRANSFER_CHECKED && acc.length === 4)
      return {
        kind: 'transfer-checked',
        source: at(acc[0]),
        mint: at(acc[1]),
        destination: at(acc[2]),
        authority: at(acc[3]),
        amount: data.readBigUInt64LE(1),
        decimals: data[9]!,
        tokenProgram: program,
      };
    if (program === TOKEN_PROGRAM_ID.toBase58() && data.length === 1 && data[0] === CLOSE_ACCOUNT && acc.length === 3)
      return { kind: 'close-account', account: at(acc[0]), destination: at(acc[1]), authority: at(acc[2]), tokenProgram: program };
    if (program === SYSTEM_PROGRAM && data.length === 12 && data.readUInt32LE(0) === SYSTEM_TRANSFER && acc.length === 2)
      return { kind: 'system-transfer', from: at(acc[0]), to: at(acc[1]), lamports: data.readBigUInt64LE(4) };
    return { kind: 'other', program };
  });
  return {
    feePayer: at(0),
    requiredSigners: keys.slice(0, message.header.numRequiredSignatures),
    usesLookupTables: message.addressTableLookups.length > 0,
    instructions,
  };
}

/** The associated token account of `owner` for `mint` under the SPL Token program (owners off the curve allowed). */
export function associatedTokenAccount(owner: string, mint: string): string {
  return getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true, TOKEN_PROGRAM_ID).toBase58();
}

export const SPL_TOKEN_PROGRAM = TOKEN_PROGRAM_ID.toBase58();
