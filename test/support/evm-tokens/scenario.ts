import { Contract, HDNodeWallet, Wallet, type JsonRpcProvider } from 'ethers';
import { sql } from 'kysely';
import type { Db } from '../../../src/db/database.js';
import { EvmChainAdapter } from '../../../chains/evm/adapter.js';
import type { ConfirmationPolicy } from '../../../chains/evm/block-scanner.js';
import type { ChainAdapter, TokenSymbol } from '../../../chains/types.js';
import { MnemonicSigner } from '../../../src/signer/mnemonic-signer.js';
import { selectSessionNetwork } from '../../../src/ledger/payments/network-selection.js';
import { deployToken, mintTo, type TokenShape } from './deploy.js';
import type { AnvilNode } from '../anvil.js';

// Shared fixture of the EVM integration tests: a merchant, sessions bound to deposit addresses, tokens on Anvil.

export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
/** Anvil's funded accounts 0..9 (BIP44 account 0); deposit addresses use accounts >= 100 so they never collide. */
function walletAt(i: number, provider: JsonRpcProvider): Wallet {
  return new Wallet(HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`).privateKey, provider);
}

export interface DeployedToken {
  symbol: TokenSymbol;
  shape: TokenShape;
  decimals: number;
  contract: Contract;
  address: string;
}

export async function deployTokens(node: AnvilNode, specs: Array<{ symbol: TokenSymbol; shape: TokenShape; decimals: number }>) {
  const deployer = walletAt(0, node.provider);
  const out: DeployedToken[] = [];
  for (const s of specs) {
    const contract = await deployToken(deployer, s.shape, s.symbol, s.decimals);
    const address = (await contract.getAddress()).toLowerCase();
    out.push({ ...s, contract, address });
  }
  return out;
}

export async function fund(token: DeployedToken, to: string, amount: bigint): Promise<void> {
  await mintTo(token.contract, token.shape, to, amount);
}

export function makeAdapter(
  node: AnvilNode,
  tokens: DeployedToken[],
  o: { network?: 'ethereum' | 'bsc'; confirmation?: ConfirmationPolicy; maxBlockRange?: number; url?: string; timeoutMs?: number } = {},
) {
  return new EvmChainAdapter({
    network: o.network ?? 'ethereum',
    mode: 'test',
    rpcUrl: o.url ?? node.url,
    rpcTimeoutMs: o.timeoutMs ?? 5000,
    tokens: tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals })),
    confirmation: o.confirmation ?? { kind: 'depth', confirmations: 3 },
    maxBlockRange: o.maxBlockRange ?? 1000,
  });
}

export const signer = new MnemonicSigner(TEST_MNEMONIC);

export async function createMerchant(
  db: Db,
  id = `mch_${Math.random().toString(36).slice(2, 12)}`,
): Promise<{ id: string; account: number }> {
  await db.insertInto('merchants').values({ id, name: id, webhook_url: null, webhook_secret_enc: 'x' }).execute();
  const r = await db
    .insertInto('merchant_hd_accounts')
    .values({ merchant_id: id, mode: 'test' })
    .returning('account_index')
    .executeTakeFirstOrThrow();
  return { id, account: r.account_index + 100 };
}

let orderSeq = 0;

/** An open session bound to (network, token); returns its id and canonical deposit address. */
export async function createBoundSession(
  db: Db,
  adapter: Pick<ChainAdapter, 'network' | 'deriveDepositAddress'>,
  merchant: { id: string; account: number },
  o: { amountMinor: bigint; token: TokenSymbol; expiresInSec?: number; metadata?: Record<string, string> },
): Promise<{ id: string; address: string }> {
  const id = `cs_${Math.random().toString(36).slice(2, 14)}${orderSeq}`;
  const row = await db
    .insertInto('payment_sessions')
    .values({
      id,
      merchant_id: merchant.id,
      mode: 'test',
      order_id: `o${orderSeq++}`,
      amount_minor: o.amountMinor,
      currency: o.token,
      metadata: JSON.stringify(o.metadata ?? {}),
      target_currency: o.token,
      target_amount_minor: o.amountMinor,
      hd_account: merchant.account,
      expires_at: new Date(Date.now() + (o.expiresInSec ?? 1800) * 1000),
    })
    .returning(['address_index'])
    .executeTakeFirstOrThrow();
  const address = await adapter.deriveDepositAddress(signer, merchant.account, row.address_index);
  const r = await selectSessionNetwork(db, id, { network: adapter.network, token: o.token, address });
  if (r.kind !== 'selected') throw new Error(`select failed: ${r.kind}`);
  return { id, address };
}

export async function sessionRow(db: Db, id: string) {
  return db.selectFrom('payment_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function eventsFor(db: Db, sessionId: string): Promise<Array<{ type: string; payload: unknown }>> {
  const r = await sql<{
    type: string;
    payload: unknown;
  }>`select type, payload from outbox_events where aggregate_id = ${sessionId} order by seq`.execute(db);
  return r.rows;
}

export async function depositsFor(db: Db, sessionId: string) {
  const r = await sql<{
    status: string;
    disposition: string | null;
    unmatched_reason: string | null;
    amount_base: bigint;
    log_index: number;
  }>`
    select status, disposition, unmatched_reason, amount_base, log_index from deposits where session_id = ${sessionId} order by block_number, log_index`.execute(
    db,
  );
  return r.rows;
}

/** Transfer with the ABI that fits both shapes (no return value decoded). */
export async function payFrom(payer: Wallet, token: DeployedToken, to: string, amount: bigint): Promise<string> {
  const c = new Contract(token.address, ['function transfer(address to, uint256 value)'], payer);
  const tx = await (c.getFunction('transfer') as (a: string, b: bigint) => Promise<{ hash: string; wait(): Promise<unknown> }>)(to, amount);
  await tx.wait();
  return tx.hash;
}

export { walletAt };
