import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { DepositSetupAttemptsTable, DepositSetupsTable } from '../../db/deposit-setup-tables.js';
import { DEPOSIT_SETUP_ATTEMPTS, attemptsOf, blockingAttemptIdsOf, setAttemptStateOf } from '../outbound/attempt-store.js';
import { feeLegs, feesAccount, journalAsset, addressAccount, transferLegs } from '../journal/accounts.js';
import { recordMovement, registerWallets } from '../journal/entries.js';

// Deposit setups (Solana: the deposit owner's associated token account, created and paid by the merchant account's
// refunds hot wallet) as outbound jobs: the row is `processing` while its attempts are followed and ends succeeded,
// skipped (nothing to create any more) or failed. Settling journals the fee and the rent locked in the created account
// (kind `deposit_setup`, docs/journal.md) in the same transaction.

export type DepositSetupRow = Selectable<DepositSetupsTable>;
export type DepositSetupAttemptRow = Selectable<DepositSetupAttemptsTable>;

/** The session's setup row (created on first call, `processing`); undefined when the session has no route chosen. */
export async function ensureDepositSetup(db: Db, sessionId: string): Promise<DepositSetupRow | undefined> {
  const s = await db
    .selectFrom('payment_sessions')
    .select(['id', 'merchant_id', 'network', 'mode', 'token', 'deposit_address'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (!s?.network || !s.token || !s.deposit_address) return undefined;
  await db
    .insertInto('deposit_setups')
    .values({
      session_id: s.id,
      merchant_id: s.merchant_id,
      network: s.network,
      mode: s.mode,
      token: s.token,
      deposit_address: s.deposit_address,
    })
    .onConflict((oc) => oc.columns(['network', 'mode', 'deposit_address', 'token']).doNothing())
    .execute();
  return db
    .selectFrom('deposit_setups')
    .selectAll()
    .where('network', '=', s.network)
    .where('mode', '=', s.mode)
    .where('deposit_address', '=', s.deposit_address)
    .where('token', '=', s.token)
    .executeTakeFirst();
}

export async function depositSetupById(db: Db | Transaction<Database>, id: string): Promise<DepositSetupRow | undefined> {
  if (!/^[0-9]{1,18}$/.test(id)) return undefined;
  return db.selectFrom('deposit_setups').selectAll().where('id', '=', BigInt(id)).executeTakeFirst();
}

/** Setups still processing (their job may have been lost: Redis flushed, a crash before enqueue), oldest first. */
export async function openDepositSetupSessions(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('deposit_setups')
    .select('session_id')
    .where('status', '=', 'processing')
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.session_id);
}

export async function depositSetupAttempts(db: Db, setupId: bigint): Promise<DepositSetupAttemptRow[]> {
  return attemptsOf<DepositSetupAttemptRow>(db, DEPOSIT_SETUP_ATTEMPTS, setupId);
}

/** The setup row locked for signing, if still processing. */
export async function lockProcessingSetup(trx: Transaction<Database>, id: bigint): Promise<DepositSetupRow | undefined> {
  return trx
    .selectFrom('deposit_setups')
    .selectAll()
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .forUpdate()
    .executeTakeFirst();
}

/** What the landed setup transaction cost the fee payer: the network fee and the rent locked in the created account. */
export interface LandedSetup {
  txHash: string;
  attemptId: bigint;
  /** The fee payer (the refunds hot wallet, canonical address). */
  feePayer: string;
  block: { height: bigint; hash: string };
  fee: bigint;
  rentPaid: bigint;
}

/**
 * processing → succeeded, the attempt confirmed (others replaced), and the journal entry: fee payer → fees:<network>
 * for the fee and for the rent locked in the deposit token account (docs/journal.md). False when already settled.
 */
export async function settleDepositSetup(db: Db, setupId: bigint, landed: LandedSetup): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const setup = await lockProcessingSetup(trx, setupId);
    if (!setup) return false;
    await setAttemptStateOf(trx, DEPOSIT_SETUP_ATTEMPTS, landed.attemptId, 'confirmed');
    await trx
      .updateTable('deposit_setup_attempts')
      .set({ state: 'replaced', settled_at: sql`now()` })
      .where('setup_id', '=', setupId)
      .where('id', '!=', landed.attemptId)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    await trx
      .updateTable('deposit_setups')
      .set({ status: 'succeeded', tx_hash: landed.txHash, fee: landed.fee, rent_paid: landed.rentPaid, settled_at: sql`now()` })
      .where('id', '=', setupId)
      .execute();
    const chain = { network: setup.network, mode: setup.mode };
    await registerWallets(trx, [{ ...chain, address: landed.feePayer, merchantId: setup.merchant_id, role: 'refunds' }]);
    await recordMovement(trx, {
      ...chain,
      txHash: landed.txHash,
      legKey: 'tx',
      kind: 'deposit_setup',
      blockHeight: landed.block.height,
      blockHash: landed.block.hash,
      merchantId: setup.merchant_id,
      sessionId: setup.session_id,
      object: { type: 'session', id: setup.session_id },
      legs: [
        ...feeLegs(chain, landed.feePayer, landed.fee),
        ...transferLegs(
          journalAsset(chain.network, chain.mode, 'native'),
          addressAccount(chain.network, chain.mode, landed.feePayer),
          feesAccount(chain.network),
          landed.rentPaid,
        ),
      ],
    });
    return true;
  });
}

/** processing → skipped or failed, with a reason; live attempts are closed. */
export async function closeDepositSetup(
  db: Db,
  setupId: bigint,
  status: 'skipped' | 'failed',
  reason: string,
  opts: { unsent?: boolean } = {},
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const setup = await lockProcessingSetup(trx, setupId);
    if (!setup) return false;
    // Skipped or refused before signing (`unsent`): only while no attempt can still land (another run of the setup may
    // have signed and sent it since this one looked; its check then finds the account created): it is followed.
    if (opts.unsent && (await blockingAttemptIdsOf(trx, DEPOSIT_SETUP_ATTEMPTS, setupId)).length > 0) return false;
    await trx
      .updateTable('deposit_setup_attempts')
      .set({ state: 'failed', settled_at: sql`now()`, detail: reason })
      .where('setup_id', '=', setupId)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    await trx
      .updateTable('deposit_setups')
      .set({ status, failure_reason: reason, settled_at: sql`now()` })
      .where('id', '=', setupId)
      .execute();
    return true;
  });
}
