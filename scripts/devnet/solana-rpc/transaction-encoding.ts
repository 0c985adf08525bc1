// The `getTransaction` answer of a validator's RPC for one landed transaction, in the `json`, `jsonParsed` and
// `base64` encodings (shapes from the Solana RPC documentation: EncodedConfirmedTransactionWithStatusMeta).
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { SystemProgram } from '@solana/web3.js';
import bs58 from './base58.js';
import type { LandedTransaction } from './fake-validator.js';
import { uiTokenAmount } from './token-layouts.js';

export type TransactionEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

export function encodeTransaction(rec: LandedTransaction, encoding: TransactionEncoding, decimalsOf: (mint: string) => number | null) {
  const msg = rec.tx.message;
  const version = msg.version;
  const header = msg.header;
  const keys = rec.accountKeys;
  const compiled = msg.compiledInstructions.map((ix) => ({
    programIdIndex: ix.programIdIndex,
    accounts: [...ix.accountKeyIndexes],
    data: bs58.encode(ix.data),
    stackHeight: null as number | null,
  }));
  const lookups =
    version === 0
      ? msg.addressTableLookups.map((l) => ({
          accountKey: l.accountKey.toBase58(),
          writableIndexes: [...l.writableIndexes],
          readonlyIndexes: [...l.readonlyIndexes],
        }))
      : undefined;

  const isWritable = (i: number) => {
    const staticCount = msg.staticAccountKeys.length;
    if (i < staticCount) return msg.isAccountWritable(i);
    return i < staticCount + rec.loadedAddresses.writable.length;
  };

  let transaction: unknown;
  let innerInstructions: unknown = rec.innerInstructions;
  if (encoding === 'base64' || encoding === 'base58') {
    transaction = [encoding === 'base64' ? Buffer.from(rec.wire).toString('base64') : bs58.encode(rec.wire), encoding];
  } else if (encoding === 'json') {
    transaction = {
      signatures: rec.tx.signatures.map((s) => bs58.encode(s)),
      message: {
        accountKeys: msg.staticAccountKeys.map((k) => k.toBase58()),
        header,
        recentBlockhash: msg.recentBlockhash,
        instructions: compiled,
        ...(lookups ? { addressTableLookups: lookups } : {}),
      },
    };
  } else {
    const parse = (ix: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number | null }) =>
      parseInstruction(keys, ix, decimalsOf);
    transaction = {
      signatures: rec.tx.signatures.map((s) => bs58.encode(s)),
      message: {
        accountKeys: keys.map((pubkey, i) => ({
          pubkey,
          signer: i < header.numRequiredSignatures,
          writable: isWritable(i),
          source: i < msg.staticAccountKeys.length ? 'transaction' : 'lookupTable',
        })),
        recentBlockhash: msg.recentBlockhash,
        instructions: compiled.map(parse),
        ...(lookups ? { addressTableLookups: lookups } : {}),
      },
    };
    innerInstructions = rec.innerInstructions.map((g) => ({ index: g.index, instructions: g.instructions.map(parse) }));
  }

  return {
    slot: rec.slot,
    blockTime: rec.blockTime,
    version: version === 'legacy' ? 'legacy' : version,
    transaction,
    meta: {
      err: rec.err,
      status: rec.err === null ? { Ok: null } : { Err: rec.err },
      fee: rec.fee,
      preBalances: rec.preBalances,
      postBalances: rec.postBalances,
      innerInstructions,
      logMessages: rec.logMessages,
      preTokenBalances: rec.preTokenBalances,
      postTokenBalances: rec.postTokenBalances,
      rewards: [],
      loadedAddresses: rec.loadedAddresses,
      computeUnitsConsumed: rec.computeUnitsConsumed,
    },
  };
}

const TOKEN_PROGRAM_IDS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);

/** Parses the instructions a payment gateway cares about (SPL Token transfers, system transfers); every other
 * instruction is returned partially decoded ({programId, accounts, data}), which is what the RPC does too for
 * programs it has no parser for. */
function parseInstruction(
  keys: string[],
  ix: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number | null },
  decimalsOf: (mint: string) => number | null,
) {
  const programId = keys[ix.programIdIndex]!;
  const accounts = ix.accounts.map((i) => keys[i]!);
  const data = Buffer.from(bs58.decode(ix.data));
  if (TOKEN_PROGRAM_IDS.has(programId)) {
    const program = programId === TOKEN_PROGRAM_ID.toBase58() ? 'spl-token' : 'spl-token-2022';
    if (data[0] === 3 && data.length >= 9) {
      return {
        program,
        programId,
        parsed: {
          type: 'transfer',
          info: { source: accounts[0], destination: accounts[1], authority: accounts[2], amount: data.readBigUInt64LE(1).toString() },
        },
        stackHeight: ix.stackHeight,
      };
    }
    if (data[0] === 12 && data.length >= 10) {
      const amount = data.readBigUInt64LE(1);
      const decimals = data[9]!;
      return {
        program,
        programId,
        parsed: {
          type: 'transferChecked',
          info: {
            source: accounts[0],
            mint: accounts[1],
            destination: accounts[2],
            authority: accounts[3],
            tokenAmount: uiTokenAmount(amount, decimalsOf(accounts[1]!) ?? decimals),
          },
        },
        stackHeight: ix.stackHeight,
      };
    }
  }
  if (programId === SystemProgram.programId.toBase58() && data.length >= 12 && data.readUInt32LE(0) === 2) {
    return {
      program: 'system',
      programId,
      parsed: { type: 'transfer', info: { source: accounts[0], destination: accounts[1], lamports: Number(data.readBigUInt64LE(4)) } },
      stackHeight: ix.stackHeight,
    };
  }
  return { programId, accounts, data: ix.data, stackHeight: ix.stackHeight };
}
