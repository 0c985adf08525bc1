import { readFileSync } from 'node:fs';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  unpackMint,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { base58Decode } from '../../chains/solana/base58.js';
import { paymentReference } from '../../chains/solana/solana-pay.js';
import { devnetSolanaPayer } from '../../src/cli/devnet.js';
import type { ChainFactory, PayerChain } from './chain.js';
import { payerSecretNames } from './chain.js';
import type { TokenSpec } from './profiles.js';

// Solana Devnet, a local solana-test-validator, or the demo's LiteSVM endpoint: the same calls on all three.
// Token accounts are the owners' associated token accounts, under the mint's own token program.

export const createSolanaChain: ChainFactory = async (profile, env) => {
  const connection = new Connection(profile.rpcUrl, 'confirmed');
  const payer = profile.local ? devnetSolanaPayer() : payerKeypair(payerSecretNames(profile), env);
  const programs = new Map<string, PublicKey>();
  const programOf = async (t: TokenSpec): Promise<PublicKey> => {
    const known = programs.get(t.address);
    if (known) return known;
    const info = await connection.getAccountInfo(new PublicKey(t.address));
    if (!info) throw new Error(`no mint at ${t.address}`);
    programs.set(t.address, info.owner);
    return info.owner;
  };
  const ata = async (t: TokenSpec, owner: string) =>
    getAssociatedTokenAddressSync(new PublicKey(t.address), new PublicKey(owner), true, await programOf(t));

  const confirm = async (signature: string): Promise<string> => {
    for (let i = 0; i < 300; i++) {
      const st = (await connection.getSignatureStatuses([signature])).value[0];
      if (st?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(st.err)}`);
      if (st?.confirmationStatus === 'confirmed' || st?.confirmationStatus === 'finalized') return signature;
      await new Promise((r) => setTimeout(r, profile.local ? 200 : 1000));
    }
    throw new Error(`transaction ${signature} not confirmed`);
  };
  const submit = async (tx: Transaction): Promise<string> => {
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
    tx.feePayer = payer.publicKey;
    tx.recentBlockhash = blockhash;
    tx.lastValidBlockHeight = lastValidBlockHeight;
    tx.sign(payer);
    return confirm(await connection.sendRawTransaction(tx.serialize()));
  };
  const tokenTransfer = async (t: TokenSpec, to: string, amount: bigint, reference: string | null): Promise<string> => {
    const program = await programOf(t);
    const mint = new PublicKey(t.address);
    const destination = await ata(t, to);
    const ix = createTransferCheckedInstruction(
      await ata(t, payer.publicKey.toBase58()),
      mint,
      destination,
      payer.publicKey,
      amount,
      t.decimals,
      [],
      program,
    );
    if (reference) ix.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
    return submit(
      new Transaction().add(
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, destination, new PublicKey(to), mint, program),
        ix,
      ),
    );
  };

  const chain: PayerChain = {
    payer: payer.publicKey.toBase58(),
    async identity() {
      return { value: await connection.getGenesisHash(), method: 'getGenesisHash' };
    },
    async tokenDecimals(t) {
      const info = await connection.getAccountInfo(new PublicKey(t.address));
      if (!info) return null;
      try {
        return unpackMint(new PublicKey(t.address), info, info.owner).decimals;
      } catch {
        return null;
      }
    },
    async tokenBalance(t, owner) {
      const account = await ata(t, owner);
      if (!(await connection.getAccountInfo(account))) return 0n;
      return BigInt((await connection.getTokenAccountBalance(account)).value.amount);
    },
    nativeBalance: async (owner) => BigInt(await connection.getBalance(new PublicKey(owner))),
    // A Solana Pay transfer: the session's reference key rides along read-only, as a wallet paying the page's link sends it.
    pay: (t, depositOwner, amount) => tokenTransfer(t, depositOwner, amount, paymentReference(depositOwner)),
    transferToken: (t, to, amount) => tokenTransfer(t, to, amount, null),
    sendNative: (to, lamports) =>
      submit(new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(to), lamports }))),
    async authorize(_t, _spender, _amount, o) {
      // The page prepares the ApproveChecked transaction (fee payer: the customer); the wallet signs and sends it.
      if (o.walletTransactions.length === 0) throw new Error('the subscription page prepared no Solana transaction');
      const out: string[] = [];
      for (const w of o.walletTransactions) {
        const prepared = w as { kind?: string; transaction?: string };
        if (prepared.kind !== 'solana' || typeof prepared.transaction !== 'string')
          throw new Error(`unexpected wallet transaction ${JSON.stringify(w)}`);
        const tx = Transaction.from(Buffer.from(prepared.transaction, 'base64'));
        tx.partialSign(payer);
        out.push(await confirm(await connection.sendRawTransaction(tx.serialize())));
      }
      return out;
    },
    async succeeded(signature) {
      const st = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
      return st !== null && st !== undefined && st.err === null;
    },
    async close() {},
  };
  return chain;
};

/** `<P>_PAYER_KEYPAIR`: a solana-keygen file; `<P>_PAYER_KEY`: its JSON array of 64 bytes, or the base58 secret key. */
function payerKeypair(names: string[], env: Record<string, string | undefined>): Keypair {
  const [fileName, keyName] = names as [string, string];
  const file = env[fileName]?.trim();
  const raw = file ? readFileSync(file.replace(/^~(?=\/)/, process.env.HOME ?? '~'), 'utf8').trim() : env[keyName]?.trim();
  if (!raw) throw new Error(`no payer wallet: set ${fileName} (a solana-keygen JSON file) or ${keyName}`);
  try {
    const bytes = raw.startsWith('[') ? Uint8Array.from(JSON.parse(raw) as number[]) : base58Decode(raw);
    return Keypair.fromSecretKey(bytes);
  } catch {
    throw new Error(`${file ? fileName : keyName} does not hold a 64-byte Solana secret key`);
  }
}
