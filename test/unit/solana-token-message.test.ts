import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemProgram,
  TransactionMessage,
  type TransactionInstruction,
} from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { SPL_TOKEN_PROGRAM, associatedTokenAccount, decodeTokenMessage } from '../../chains/solana/token-message.js';

// The signer's Solana message reader (chains/solana/token-message.ts) on messages compiled by @solana/web3.js and
// @solana/spl-token as our senders compile them: a sweep batch signed by a fee payer and several deposit owners, a
// close step (CloseAccount, rent to the fee payer), a drain's SystemProgram transfer, and what it must not read as ours (a multisig authority).

const key = () => Keypair.generate().publicKey;
const compile = (payer: PublicKey, instructions: TransactionInstruction[]) =>
  new TransactionMessage({ payerKey: payer, recentBlockhash: key().toBase58(), instructions }).compileToV0Message().serialize();

describe('decodeTokenMessage', () => {
  const mint = key();
  const payer = key();
  const dest = key();
  const destAta = getAssociatedTokenAddressSync(mint, dest, true);

  it('reads a batch signed by the fee payer and every deposit owner: each transfer with its own authority', () => {
    const owners = [key(), key(), key()];
    const bytes = compile(payer, [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 71_000 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5n }),
      createAssociatedTokenAccountIdempotentInstruction(payer, destAta, dest, mint),
      ...owners.map((o, i) =>
        createTransferCheckedInstruction(getAssociatedTokenAddressSync(mint, o, true), mint, destAta, o, BigInt(i + 1) * 1000n, 6),
      ),
    ]);
    const m = decodeTokenMessage(bytes);
    expect(m.feePayer).toBe(payer.toBase58());
    expect(new Set(m.requiredSigners)).toEqual(new Set([payer, ...owners].map((k) => k.toBase58())));
    expect(m.requiredSigners[0]).toBe(payer.toBase58());
    expect(m.instructions.map((i) => i.kind)).toEqual([
      'compute-budget',
      'compute-budget',
      'create-ata',
      'transfer-checked',
      'transfer-checked',
      'transfer-checked',
    ]);
    const transfers = m.instructions.filter((i) => i.kind === 'transfer-checked');
    expect(transfers.map((t) => [t.source, t.authority, t.destination, t.amount])).toEqual(
      owners.map((o, i) => [
        associatedTokenAccount(o.toBase58(), mint.toBase58()),
        o.toBase58(),
        destAta.toBase58(),
        BigInt(i + 1) * 1000n,
      ]),
    );
  });

  it('reads CloseAccount: the account, where its rent goes, and the authority', () => {
    const owner = key();
    const account = getAssociatedTokenAddressSync(mint, owner, true);
    const m = decodeTokenMessage(compile(payer, [createCloseAccountInstruction(account, payer, owner)]));
    expect(m.instructions).toEqual([
      {
        kind: 'close-account',
        account: account.toBase58(),
        destination: payer.toBase58(),
        authority: owner.toBase58(),
        tokenProgram: SPL_TOKEN_PROGRAM,
      },
    ]);
    expect(m.requiredSigners).toEqual([payer.toBase58(), owner.toBase58()]);
  });

  it('reads a multisig-authorised close or transfer, and any other program, as `other`', () => {
    const owner = key();
    const account = getAssociatedTokenAddressSync(mint, owner, true);
    const m = decodeTokenMessage(
      compile(payer, [
        createCloseAccountInstruction(account, payer, owner, [key()]),
        createTransferCheckedInstruction(account, mint, destAta, owner, 1n, 6, [key()]),
        SystemProgram.assign({ accountPubkey: payer, programId: key() }),
      ]),
    );
    expect(m.instructions.map((i) => i.kind)).toEqual(['other', 'other', 'other']);
  });

  it('reads a SystemProgram transfer (a gas-station drain): source, recipient and lamports; any other system call is `other`', () => {
    const m = decodeTokenMessage(
      compile(payer, [
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5n }),
        SystemProgram.transfer({ fromPubkey: payer, toPubkey: dest, lamports: 4_999_995_000n }),
        SystemProgram.allocate({ accountPubkey: payer, space: 8 }),
      ]),
    );
    expect(m.instructions).toEqual([
      { kind: 'compute-budget' },
      { kind: 'system-transfer', from: payer.toBase58(), to: dest.toBase58(), lamports: 4_999_995_000n },
      { kind: 'other', program: SystemProgram.programId.toBase58() },
    ]);
    expect(m.requiredSigners).toEqual([payer.toBase58()]);
  });
});
