import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { startChainServiceHarness, type ChainHarnessMerchant, type ChainServiceHarness } from './chain-service-harness.js';

// The whole service configured for Solana in test mode: CHAIN_SOLANA_TEST_RPC_URL points at the LiteSVM fake
// (scripts/devnet/solana-rpc), with two local 6-decimal mints for USDT and USDC. The fake's slot clock runs, so
// transactions reach `finalized` (32 slots) on their own; blockhashes stay valid long enough for a worker restart.
export interface SolanaServiceHarness extends ChainServiceHarness {
  rpc: FakeSolanaRpc;
  conn: Connection;
  mints: { USDT: string; USDC: string };
  fundHotWallet(m: ChainHarnessMerchant, o?: { lamports?: bigint; usdt?: bigint; usdc?: bigint }): void;
  /** A session paid on Solana by a fresh payer (exact amount unless `paid`), seen `paid` through the API. */
  paidSession(
    m: ChainHarnessMerchant,
    o: { amount: string; token?: 'USDT' | 'USDC'; paid?: bigint },
  ): Promise<{ id: string; payer: string; depositOwner: string; paymentTx: string }>;
  /** Landed token transfers whose fee payer is `from` and that credited `toOwner`'s account of `mint`. */
  transfersFrom(mint: string, from: string, toOwner: string): Promise<Array<{ to: string; amount: bigint; tx: string }>>;
  tokenBalance(mint: string, owner: string): Promise<bigint>;
}

export async function startSolanaServiceHarness(
  o: { extraEnv?: Record<string, string>; slotIntervalMs?: number; blockhashValidity?: number } = {},
): Promise<SolanaServiceHarness> {
  const rpc = await startFakeSolanaRpc({ slotIntervalMs: o.slotIntervalMs ?? 25, blockhashValidity: o.blockhashValidity ?? 2_000 });
  const mints = { USDT: Keypair.generate().publicKey.toBase58(), USDC: Keypair.generate().publicKey.toBase58() };
  rpc.validator.createMint({ address: mints.USDT, decimals: 6 });
  rpc.validator.createMint({ address: mints.USDC, decimals: 6 });
  let h: ChainServiceHarness;
  try {
    h = await startChainServiceHarness({
      network: 'solana',
      chainEnv: {
        CHAIN_SOLANA_TEST_RPC_URL: rpc.url,
        CHAIN_SOLANA_TEST_POLL_INTERVAL_MS: '150',
        CHAIN_SOLANA_TEST_USDT_CONTRACT: mints.USDT,
        CHAIN_SOLANA_TEST_USDT_DECIMALS: '6',
        CHAIN_SOLANA_TEST_USDC_CONTRACT: mints.USDC,
        CHAIN_SOLANA_TEST_USDC_DECIMALS: '6',
      },
      extraEnv: o.extraEnv,
    });
  } catch (e) {
    await rpc.close();
    throw e;
  }
  const conn = new Connection(rpc.url, 'confirmed');
  const ata = (mint: string, owner: string) => getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true);

  const tokenBalance = async (mint: string, owner: string): Promise<bigint> => {
    const info = await conn.getAccountInfo(ata(mint, owner), 'confirmed');
    return info && info.data.length >= 72 ? info.data.readBigUInt64LE(64) : 0n;
  };

  return {
    ...h,
    rpc,
    conn,
    mints,
    tokenBalance,
    fundHotWallet(m, f = {}) {
      const lamports = f.lamports ?? 10n * BigInt(LAMPORTS_PER_SOL);
      if (lamports > 0n) rpc.validator.airdrop(m.hotWallet, lamports);
      rpc.validator.setTokenAccount({ mint: mints.USDT, owner: m.hotWallet, amount: f.usdt ?? 1_000_000_000n });
      rpc.validator.setTokenAccount({ mint: mints.USDC, owner: m.hotWallet, amount: f.usdc ?? 1_000_000_000n });
    },
    async paidSession(m, p) {
      const token = p.token ?? 'USDC';
      const sel = await h.selectSession(m, { amount: p.amount, token });
      const mint = mints[token];
      const payer = Keypair.generate();
      const amount = p.paid ?? BigInt(sel.amount_due_base);
      rpc.validator.airdrop(payer.publicKey.toBase58(), BigInt(LAMPORTS_PER_SOL));
      rpc.validator.setTokenAccount({ mint, owner: payer.publicKey.toBase58(), amount });
      const owner = new PublicKey(sel.deposit_address);
      const dest = ata(mint, sel.deposit_address);
      const { blockhash } = await conn.getLatestBlockhash('confirmed');
      const msg = new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, dest, owner, new PublicKey(mint)),
          createTransferCheckedInstruction(ata(mint, payer.publicKey.toBase58()), new PublicKey(mint), dest, payer.publicKey, amount, 6),
        ],
      }).compileToV0Message();
      const tx = new VersionedTransaction(msg);
      tx.sign([payer]);
      const paymentTx = await conn.sendTransaction(tx, { preflightCommitment: 'confirmed' });
      await h.waitPaid(m, sel.id);
      return { id: sel.id, payer: payer.publicKey.toBase58(), depositOwner: sel.deposit_address, paymentTx };
    },
    async transfersFrom(mint, from, toOwner) {
      const sigs = await conn.getSignaturesForAddress(ata(mint, toOwner), { limit: 1000 }, 'confirmed');
      const out: Array<{ to: string; amount: bigint; tx: string }> = [];
      for (const s of [...sigs].reverse()) {
        if (s.err !== null) continue;
        const tx = await conn.getTransaction(s.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
        if (!tx || tx.meta?.err) continue;
        if (tx.transaction.message.staticAccountKeys[0]!.toBase58() !== from) continue;
        const pick = (bs: Array<{ mint: string; owner?: string; uiTokenAmount: { amount: string } }> | null | undefined) =>
          BigInt(bs?.find((b) => b.mint === mint && b.owner === toOwner)?.uiTokenAmount.amount ?? '0');
        const delta = pick(tx.meta!.postTokenBalances) - pick(tx.meta!.preTokenBalances);
        if (delta > 0n) out.push({ to: toOwner, amount: delta, tx: s.signature });
      }
      return out;
    },
    async close() {
      try {
        await h.close();
      } finally {
        await rpc.close();
      }
    },
  };
}
