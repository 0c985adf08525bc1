import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { Contract, HDNodeWallet, JsonRpcProvider, Wallet } from 'ethers';
import { paymentReference } from '../../chains/solana/solana-pay.js';
import { networkEntry } from '../../chains/registry.js';
import { NETWORK_IDS, networksOfFamily } from '../../chains/vocabulary.js';
import { UsageError, options, print } from './args.js';

// `npm run cli -- devnet pay <session_id> [--network <id>] [--token USDT|USDC] [--amount 12.34]`, any network the demo runs
// (the registry's: every EVM network, Solana, TRON).
// Pays a session on the local chains that `npm run dev` started, from a funded local wallet, the way a payer would:
// it asks the public selection endpoint for the deposit address and exact amount, then sends the token transfer.
// Local devnets only: it reads the state file `npm run dev` writes and refuses anything else.

export const DEVNET_MNEMONIC = 'test test test test test test test test test test test junk';
/** Anvil's funded account 1 (account 0 deployed the tokens); the dev script mints tokens to it. */
export const DEVNET_PAYER_PATH = "m/44'/60'/0'/0/1";

/** The Solana payer of the local devnet: a fixed, public seed (local use only). */
export function devnetSolanaPayer(): Keypair {
  return Keypair.fromSeed(createHash('sha256').update('stablepay devnet solana payer').digest());
}

export interface DevnetTokenState {
  address: string;
  decimals: number;
}

export interface DevnetState {
  /** The service's base URL, e.g. http://localhost:3000. */
  baseUrl: string;
  checkoutBaseUrl: string;
  pid: number;
  evm: Record<string, { rpcUrl: string; chainId: number; tokens: Record<string, DevnetTokenState> }>;
  solana?: { rpcUrl: string; tokens: Record<string, DevnetTokenState> };
  /**
   * The demo's TRON: the FAKE java-tron wallet API (`fullHost`, scripts/devnet/fake-java-tron) over an Anvil node
   * (`rpcUrl`, its Ethereum-compatible JSON-RPC), the demo's TRX faucet, and the token contracts in base58.
   */
  tron?: { fullHost: string; rpcUrl: string; chainId: number; faucetUrl: string; tokens: Record<string, DevnetTokenState> };
  /** The demo's operator settings (DATABASE_URL, MASTER_KEY, SIGNER_SOCKET, REDIS_*, CHAIN_*): demo-only secrets. */
  operatorEnv?: Record<string, string>;
}

/**
 * Where `npm run dev` writes the running demo's settings: `.devnet/state.json` in the project (git- and
 * docker-ignored). Not under node_modules/.cache any more: `npm ci` deletes node_modules, and with it the file of a
 * demo still running.
 */
export function devnetStateFile(env: Record<string, string | undefined> = process.env): string {
  return env.DEVNET_STATE_FILE ?? join(process.cwd(), DEVNET_DIR, 'state.json');
}

/** The project's local data directory of the demo. */
export const DEVNET_DIR = '.devnet';

export function readDevnetState(env: Record<string, string | undefined> = process.env): DevnetState {
  const file = devnetStateFile(env);
  if (!existsSync(file)) throw new UsageError(`no local devnet found (${file}); start one with \`npm run dev\``);
  const state = JSON.parse(readFileSync(file, 'utf8')) as DevnetState;
  try {
    process.kill(state.pid, 0);
  } catch {
    throw new UsageError(`the devnet that wrote ${file} (pid ${state.pid}) is not running; start one with \`npm run dev\``);
  }
  return state;
}

/**
 * The running demo's operator settings, or null when no demo runs (no state file, or its process is gone).
 * They are a whole: a demo MASTER_KEY only opens the demo's database.
 */
export function runningDevnetSettings(
  env: Record<string, string | undefined> = process.env,
): { file: string; pid: number; env: Record<string, string> } | null {
  const file = devnetStateFile(env);
  if (!existsSync(file)) return null;
  const state = JSON.parse(readFileSync(file, 'utf8')) as DevnetState;
  try {
    process.kill(state.pid, 0);
  } catch {
    return null;
  }
  return state.operatorEnv ? { file, pid: state.pid, env: state.operatorEnv } : null;
}

const USAGE = `usage: npm run cli -- devnet pay <session_id> [--network ${NETWORK_IDS.join('|')}] [--token USDT|USDC] [--amount <decimal>]`;

export async function devnetCli(args: string[], env: Record<string, string | undefined> = process.env): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'pay') throw new UsageError(USAGE);
  const o = options(rest, { network: { type: 'string' }, token: { type: 'string' }, amount: { type: 'string' } });
  const sessionId = o.positionals[0];
  if (!sessionId || o.positionals.length > 1) throw new UsageError(USAGE);
  const state = readDevnetState(env);

  const status = await getJson(`${state.checkoutBaseUrl}/${encodeURIComponent(sessionId)}/status`);
  if (status.code === 404) throw new UsageError(`no session ${sessionId}`);
  const current = status.body as { state: string; network: string | null; token: string | null };
  if (current.state === 'paid' || current.state === 'expired' || current.state === 'canceled') {
    throw new UsageError(`session ${sessionId} is ${current.state}`);
  }
  // The demo's chains: EVM ones keyed by network id, one TRON and one Solana chain serving their family's network.
  const networks = [
    ...Object.keys(state.evm),
    ...(state.solana ? networksOfFamily('solana') : []),
    ...(state.tron ? networksOfFamily('tron') : []),
  ];
  const network = o.values.network ?? current.network ?? networks[0] ?? '';
  const family = networkEntry(network)?.family;
  const token = (o.values.token ?? current.token ?? 'USDT').toUpperCase();
  const chain = family === 'solana' ? state.solana : family === 'tron' ? state.tron : state.evm[network];
  if (!chain) throw new UsageError(`--network must be one of ${networks.join(', ')} (the local devnet's chains)`);
  const tokenState = chain.tokens[token];
  if (!tokenState) throw new UsageError(`--token must be one of ${Object.keys(chain.tokens).join(', ')}`);

  const sel = await postJson(`${state.baseUrl}/checkout/sessions/${encodeURIComponent(sessionId)}/select`, { network, token });
  if (sel.code !== 200) throw new Error(`selection refused: ${JSON.stringify(sel.body)}`);
  const selection = sel.body as {
    deposit_address: string;
    amount_remaining_base: string;
    amount_remaining: string;
    token_decimals: number;
  };

  let amount = BigInt(selection.amount_remaining_base);
  if (o.values.amount !== undefined) {
    amount = tokenUnitsToBase(o.values.amount, selection.token_decimals);
  }
  if (amount <= 0n) throw new UsageError('nothing left to pay (use --amount to send anyway)');
  if (family === 'solana' || family === 'tron') {
    const r =
      family === 'solana'
        ? await paySolana(chain.rpcUrl, tokenState, selection.deposit_address, amount)
        : await payTron(state.tron!.fullHost, tokenState, selection.deposit_address, amount);
    print({
      session_id: sessionId,
      network,
      token,
      to: selection.deposit_address,
      amount_base: amount,
      from: r.from,
      tx_hash: r.signature,
    });
    return;
  }
  const evm = state.evm[network]!;

  const provider = new JsonRpcProvider(evm.rpcUrl, evm.chainId, { staticNetwork: true, pollingInterval: 200 });
  try {
    const payer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey, provider);
    // One ABI for both token shapes: Tether-style transfer returns nothing, so no return value is decoded.
    const contract = new Contract(tokenState.address, ['function transfer(address to, uint256 value)'], payer);
    const tx = (await contract.getFunction('transfer')(selection.deposit_address, amount)) as { hash: string; wait(): Promise<unknown> };
    await tx.wait();
    print({
      session_id: sessionId,
      network,
      token,
      to: selection.deposit_address,
      amount_base: amount,
      from: payer.address,
      tx_hash: tx.hash,
    });
  } finally {
    provider.destroy();
  }
}

/**
 * A Solana Pay-style transfer: the deposit owner's associated token account (created if missing), transfer_checked,
 * and the session's reference key as a read-only account, as a wallet paying the page's link would send it.
 */
async function paySolana(
  rpcUrl: string,
  token: DevnetTokenState,
  depositOwner: string,
  amount: bigint,
): Promise<{ from: string; signature: string }> {
  const connection = new Connection(rpcUrl, 'confirmed');
  const payer = devnetSolanaPayer();
  const mint = new PublicKey(token.address);
  const owner = new PublicKey(depositOwner);
  const source = getAssociatedTokenAddressSync(mint, payer.publicKey);
  const destination = getAssociatedTokenAddressSync(mint, owner, true);
  const transfer = createTransferCheckedInstruction(source, mint, destination, payer.publicKey, amount, token.decimals);
  transfer.keys.push({ pubkey: new PublicKey(paymentReference(depositOwner)), isSigner: false, isWritable: false });
  const { blockhash } = await connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, destination, owner, mint),
    transfer,
  );
  tx.sign(payer);
  const signature = await connection.sendRawTransaction(tx.serialize());
  for (let i = 0; i < 100; i++) {
    const st = (await connection.getSignatureStatuses([signature])).value[0];
    if (st?.err) throw new Error(`solana transfer failed: ${JSON.stringify(st.err)}`);
    if (st?.confirmationStatus === 'confirmed' || st?.confirmationStatus === 'finalized')
      return { from: payer.publicKey.toBase58(), signature };
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`solana transfer ${signature} not confirmed`);
}

/**
 * A TRC-20 transfer as a TRON wallet sends it: built by the node (/wallet/triggersmartcontract), signed here with the
 * devnet payer's key (the same key as on the EVM chains), broadcast, and its receipt read back (SUCCESS or an error).
 */
async function payTron(
  fullHost: string,
  token: DevnetTokenState,
  depositAddress: string,
  amount: bigint,
): Promise<{ from: string; signature: string }> {
  const { TronWeb } = await import('tronweb');
  const key = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey.slice(2);
  const tronWeb = new TronWeb({ fullHost, privateKey: key });
  const from = tronWeb.defaultAddress.base58 as string;
  const built = await tronWeb.transactionBuilder.triggerSmartContract(
    token.address,
    'transfer(address,uint256)',
    { feeLimit: 50_000_000 },
    [
      { type: 'address', value: depositAddress },
      { type: 'uint256', value: amount.toString() },
    ],
    from,
  );
  const signed = (await tronWeb.trx.sign(built.transaction as never)) as { txID: string };
  const sent = (await tronWeb.trx.sendRawTransaction(signed as never)) as { result?: boolean; code?: string; message?: string };
  if (!sent.result) {
    const why = sent.message ? Buffer.from(sent.message, 'hex').toString('utf8') : '';
    throw new Error(`tron broadcast refused: ${sent.code ?? ''} ${why}`.trim());
  }
  for (let i = 0; i < 100; i++) {
    const info = (await tronWeb.trx.getUnconfirmedTransactionInfo(signed.txID)) as { id?: string; receipt?: { result?: string } };
    if (info.id) {
      if (info.receipt?.result !== 'SUCCESS')
        throw new Error(`tron transfer ${signed.txID} failed: ${info.receipt?.result ?? 'no receipt'}`);
      return { from, signature: signed.txID };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`tron transfer ${signed.txID} not in a block`);
}

/** "12.5" at 6 decimals → 12500000n; plain decimals only, never through a float. */
function tokenUnitsToBase(text: string, decimals: number): bigint {
  const m = /^(0|[1-9]\d*)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new UsageError(`--amount must be a plain decimal such as 12.34, not ${text}`);
  const frac = m[2] ?? '';
  if (frac.length > decimals) throw new UsageError(`--amount has more than ${decimals} decimal places`);
  return BigInt(m[1]!) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

async function getJson(url: string): Promise<{ code: number; body: unknown }> {
  const r = await fetch(url, { headers: { accept: 'application/json' } });
  return { code: r.status, body: await r.json().catch(() => null) };
}

async function postJson(url: string, body: unknown): Promise<{ code: number; body: unknown }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { code: r.status, body: await r.json().catch(() => null) };
}
