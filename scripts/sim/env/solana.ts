import { createHash } from 'node:crypto';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, type TransactionInstruction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { startFaultProxy } from '../../../test/support/rpc-fault-proxy.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../devnet/solana-rpc/rpc-server.js';
import type { SimChains } from '../contract.js';
import { healedRates, type SimOtherChain } from './chain.js';

// Solana for the simulator: the LiteSVM-backed JSON-RPC endpoint of the tests and the local demo
// (scripts/devnet/solana-rpc), in this process, its slot clock running (a slot every 100 ms, so `finalized`, 32 slots
// behind, is about 3 s old and a blockhash lives 15 s), with 6-decimal USDT and USDC mints. The service reaches it
// through a JSON-RPC fault proxy and requires `finalized`; the simulator and the invariants talk to it directly.
// The payer behaves as a wallet: it signs with a recent blockhash, waits for the transaction to be confirmed, and when
// it never lands (a dropped transaction, an expired blockhash) signs again with a fresh blockhash once the old one can
// no longer land: each payment lands at most once.

const SLOT_MS = 100;
const DECIMALS = 6;
/** The decimals of the simulator's USDT and USDC mints. */
export const SOLANA_SIM_DECIMALS = DECIMALS;
/** Lamports a fresh refund hot wallet gets (fees and deposit-account rent): set from outside, acknowledged. */
export const SOLANA_HOT_WALLET_LAMPORTS = 10_000_000_000n;
/** Lamports a merchant's subscription charger gets (each charge's fee; the settlement ATA's rent once): acknowledged. */
export const SOLANA_CHARGER_LAMPORTS = 2_000_000_000n;

const seeded = (label: string) => Keypair.fromSeed(createHash('sha256').update(`stablepay simulator ${label}`).digest());

export interface SimSolana extends SimOtherChain {
  network: 'solana';
  rpc: FakeSolanaRpc;
  contract: NonNullable<SimChains['solana']>;
}

export async function startSimSolana(seed: number): Promise<SimSolana> {
  const rpc = await startFakeSolanaRpc({ slotIntervalMs: SLOT_MS });
  const proxy = await startFaultProxy({ upstream: rpc.url, seed });
  const mints = { USDT: seeded('USDT mint').publicKey.toBase58(), USDC: seeded('USDC mint').publicKey.toBase58() };
  const payer = seeded('solana payer');
  rpc.validator.airdrop(payer.publicKey.toBase58(), 100n * 10n ** 9n);
  for (const mint of Object.values(mints)) {
    rpc.validator.createMint({ address: mint, decimals: DECIMALS });
    rpc.validator.setTokenAccount({ mint, owner: payer.publicKey.toBase58(), amount: 10n ** 15n });
  }
  const conn = new Connection(rpc.url, 'confirmed');
  const ata = (mint: string, owner: string) => getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true);

  const pay = (token: 'USDT' | 'USDC', to: string, amount: bigint): Promise<string> => {
    const mint = mints[token];
    return sendUntilLanded(
      conn,
      [payer],
      [
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata(mint, to), new PublicKey(to), new PublicKey(mint)),
        createTransferCheckedInstruction(
          ata(mint, payer.publicKey.toBase58()),
          new PublicKey(mint),
          ata(mint, to),
          payer.publicKey,
          amount,
          DECIMALS,
        ),
      ],
      `solana payment to ${to}`,
    );
  };
  return {
    network: 'solana',
    rpc,
    proxies: [{ proxy, protocol: 'jsonrpc' }],
    env: {
      CHAIN_SOLANA_TEST_RPC_URL: proxy.url,
      CHAIN_SOLANA_TEST_CONFIRMATIONS: 'finalized',
      CHAIN_SOLANA_TEST_POLL_INTERVAL_MS: '300',
      CHAIN_SOLANA_TEST_USDT_CONTRACT: mints.USDT,
      CHAIN_SOLANA_TEST_USDT_DECIMALS: String(DECIMALS),
      CHAIN_SOLANA_TEST_USDC_CONTRACT: mints.USDC,
      CHAIN_SOLANA_TEST_USDC_DECIMALS: String(DECIMALS),
    },
    contract: { rpcUrl: rpc.url, mints, confirmations: 'finalized' },
    startBlockEnv: async () => ({ CHAIN_SOLANA_TEST_START_BLOCK: String(rpc.validator.slot('finalized')) }),
    pay,
    async fundHotWallet(address, tokenUnits) {
      rpc.validator.airdrop(address, SOLANA_HOT_WALLET_LAMPORTS);
      // The signatures exactly as the journal names them: base58 is case-sensitive, never lowercased.
      const txIds: string[] = [];
      for (const t of ['USDT', 'USDC'] as const) txIds.push(await pay(t, address, tokenUnits * 10n ** BigInt(DECIMALS)));
      return { txIds, native: SOLANA_HOT_WALLET_LAMPORTS };
    },
    async heal() {
      proxy.setFaults(healedRates);
      rpc.validator.resumeLanding();
    },
    async stop() {
      await proxy.close();
      await rpc.close();
    },
  };
}

/**
 * Sends `instructions` as a wallet does (fee payer `signers[0]`, every signer signing): signed with a recent
 * blockhash, sent once, then waited for until confirmed; one that never lands (a dropped transaction, an expired
 * blockhash, a stalled leader holding it past its blockhash) is signed again with a fresh blockhash only once the old
 * one can no longer land, so the instructions land at most once. Resolves with the signature that landed; throws when
 * it failed on chain, or did not land after `attempts` signings. The payer's payments and the subscription customers'
 * approvals (../scenario-subscriptions-solana.ts) go through it.
 */
export async function sendUntilLanded(
  conn: Connection,
  signers: Keypair[],
  instructions: TransactionInstruction[],
  what: string,
  attempts = 6,
): Promise<string> {
  const errors: string[] = [];
  for (let i = 0; i < attempts; i++) {
    const r = await landOnce(conn, signers, instructions, what);
    if (r.signature) return r.signature;
    errors.push(r.error ?? 'not landed');
  }
  throw new Error(`${what} never landed: ${errors.join('; ')}`);
}

/** One signing with a fresh blockhash; its signature once confirmed, or null when its blockhash expired without it
 * landing (then it never can). */
async function landOnce(
  conn: Connection,
  signers: Keypair[],
  instructions: TransactionInstruction[],
  what: string,
): Promise<{ signature: string | null; error?: string }> {
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
  const msg = new TransactionMessage({ payerKey: signers[0]!.publicKey, recentBlockhash: blockhash, instructions }).compileToV0Message();
  const tx = new VersionedTransaction(msg);
  tx.sign(signers);
  let signature: string;
  try {
    signature = await conn.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed', maxRetries: 0 });
  } catch (e) {
    // A blockhash expired between the read and the send (a blockhash-expiry fault): sign again.
    return { signature: null, error: (e as Error).message };
  }
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    const st = (await conn.getSignatureStatuses([signature])).value[0];
    if (st?.err) throw new Error(`${what}: ${signature} failed: ${JSON.stringify(st.err)}`);
    if (st && (st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized')) return { signature };
    if ((await conn.getBlockHeight('confirmed')) > lastValidBlockHeight) {
      // Expired: it can no longer land, unless it landed in the meantime.
      const again = (await conn.getSignatureStatuses([signature])).value[0];
      if (again && !again.err) return { signature };
      return { signature: null, error: `${signature} never landed before its blockhash expired` };
    }
  }
}
