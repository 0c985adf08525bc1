import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
  TokenAccountNotFoundError,
} from '@solana/spl-token';
import { createTestDatabase } from '../db.js';
import { createMerchant, signer } from '../evm-tokens/scenario.js';
import { startFakeSolanaRpc } from '../../../scripts/devnet/solana-rpc/rpc-server.js';
import { SolanaChainAdapter } from '../../../chains/solana/adapter.js';
import { MAINNET_TOKENS } from '../../../chains/tokens/registry.js';
import { HOT_WALLET_SLOT, type TokenContract, type TokenSymbol } from '../../../chains/types.js';
import type { ConformanceFixture } from './fixture.js';

// Solana through @solana/web3.js over HTTP against the fake LiteSVM RPC, credits final at `finalized` (32 slots).
// No forks: the leader losing a transaction stands in for a reorg. One payer holds SOL and both mints.
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

export async function solanaFixture(): Promise<ConformanceFixture> {
  const [tdb, rpc] = await Promise.all([createTestDatabase(), startFakeSolanaRpc()]);
  const conn = new Connection(rpc.url, 'confirmed');
  const mints = Object.fromEntries(MAINNET_TOKENS.solana.map((t) => [t.symbol, t.address])) as Record<TokenSymbol, string>;
  for (const t of MAINNET_TOKENS.solana) rpc.validator.createMint({ address: t.address, decimals: t.decimals });
  const lookAlike = rpc.validator.createMint({ decimals: 6 });
  const payer = Keypair.generate();
  rpc.validator.airdrop(payer.publicKey.toBase58(), 100n * BigInt(LAMPORTS_PER_SOL));
  for (const mint of [mints.USDT, mints.USDC, lookAlike])
    rpc.validator.setTokenAccount({ mint, owner: payer.publicKey.toBase58(), amount: 10n ** 12n });
  const makeAdapter = (tokens: readonly TokenContract[]) =>
    new SolanaChainAdapter({ mode: 'test', rpcUrl: rpc.url, tokens: [...tokens], rpcConcurrency: 4 });
  const adapter = makeAdapter(MAINNET_TOKENS.solana);
  const merchant = await createMerchant(tdb.db);
  const hotWallet = await adapter.deriveHotWallet(signer, merchant.account, HOT_WALLET_SLOT.refunds);
  rpc.validator.airdrop(hotWallet.address, 10n * BigInt(LAMPORTS_PER_SOL));
  for (const mint of [mints.USDT, mints.USDC]) rpc.validator.setTokenAccount({ mint, owner: hotWallet.address, amount: 10n ** 9n });

  /** A wallet's transfer: the recipient's ATA created if missing, then TransferChecked from the payer's ATA. */
  function transferIxs(mint: string, transfers: Array<{ to: string; amount: bigint }>): TransactionInstruction[] {
    const m = new PublicKey(mint);
    return transfers.flatMap(({ to, amount }) => {
      const dest = getAssociatedTokenAddressSync(m, new PublicKey(to), true);
      return [
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, dest, new PublicKey(to), m),
        createTransferCheckedInstruction(getAssociatedTokenAddressSync(m, payer.publicKey), m, dest, payer.publicKey, amount, 6),
      ];
    });
  }
  async function signed(ixs: TransactionInstruction[]): Promise<Uint8Array> {
    const { blockhash } = await conn.getLatestBlockhash('confirmed');
    const tx = new VersionedTransaction(
      new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions: ixs }).compileToV0Message(),
    );
    tx.sign([payer]);
    return tx.serialize();
  }
  const send = async (ixs: TransactionInstruction[], skipPreflight = false) =>
    conn.sendRawTransaction(await signed(ixs), { skipPreflight });
  async function tokenBalance(symbol: TokenSymbol, owner: string): Promise<bigint> {
    try {
      return (await getAccount(conn, getAssociatedTokenAddressSync(new PublicKey(mints[symbol]), new PublicKey(owner), true))).amount;
    } catch (e) {
      if (e instanceof TokenAccountNotFoundError) return 0n;
      throw e;
    }
  }

  return {
    adapter,
    db: tdb.db,
    merchant,
    addressPattern: BASE58,
    txHashPattern: BASE58,
    payer: payer.publicKey.toBase58(),
    stepsToFinal: 31, // visible at `confirmed` one slot after landing, `finalized` 32 slots after it
    adapterWith: (tokens) => makeAdapter(tokens),
    pay: (s, transfers) => send(transferIxs(mints[s], transfers)),
    payLookAlike: (to, amount) => send(transferIxs(lookAlike, [{ to, amount }])).then(() => undefined),
    payFailing: async (s, to, amount) => {
      const sig = await send(transferIxs(mints[s], [{ to, amount }]), true);
      if (!(await conn.getSignatureStatuses([sig])).value[0]?.err) throw new Error('the failing transfer did not fail');
    },
    land: async () => void rpc.validator.advanceSlots(1),
    advance: async (steps) => void rpc.validator.advanceSlots(steps),
    drop: async (s, to, amount) => {
      const raw = await signed(transferIxs(mints[s], [{ to, amount }]));
      rpc.validator.pauseLanding('drop'); // a congested leader loses what it is sent
      const txHash = await conn.sendRawTransaction(raw);
      rpc.validator.resumeLanding();
      return { txHash, forget: async () => {}, replay: async () => void (await conn.sendRawTransaction(raw)) };
    },
    hotWallet,
    newDestination: () => Keypair.generate().publicKey.toBase58(),
    tokenBalance,
    setNativeBalance: async (address, lamports) =>
      rpc.validator.setAccount({ address, lamports, data: new Uint8Array(0), owner: SystemProgram.programId.toBase58() }),
    landFailing: async (tx, symbol) => {
      // The hot wallet's tokens vanish after signing and the bytes reach the leader without preflight (as a lagging
      // node forwards them): the transaction lands with an error.
      const held = await tokenBalance(symbol, hotWallet.address);
      rpc.validator.setTokenAccount({ mint: mints[symbol], owner: hotWallet.address, amount: 0n });
      try {
        await conn.sendRawTransaction(Buffer.from(tx.raw, 'base64'), { skipPreflight: true });
      } finally {
        rpc.validator.setTokenAccount({ mint: mints[symbol], owner: hotWallet.address, amount: held });
      }
      rpc.validator.advanceSlots(1);
    },
    outlive: async () => void rpc.validator.expireBlockhashes(),
    close: async () => {
      await rpc.close();
      await tdb.destroy();
    },
  };
}
