import type { ConsoleRole } from '../db/console-tables.js';
import { ApiError, invalidRequest, resourceNotFound } from '../domain/errors.js';
import type { AuditActor } from '../ledger/audit/audit-log.js';
import { type AuditWriter, auditWith } from './console-audit.js';
import { clearRecoveryCodes } from '../ledger/console/recovery-codes.js';
import { revokeUserSessions } from '../ledger/console/sessions.js';
import {
  type ConsoleUserRecord,
  clearTotp,
  disableConsoleUser as disableUserRow,
  getConsoleUser,
  getConsoleUserByEmail,
  insertConsoleUser,
  listConsoleUsers as listUserRows,
  setConsolePassword,
} from '../ledger/console/users.js';
import type { OperationsContext } from './context.js';
import { generateTemporaryPassword, hashPassword } from './console-credentials.js';

// Console users, for the CLI (`console user ...`) and the console's users page alike: create (a temporary password,
// shown once), list, disable (sessions revoked), reset (new temporary password; TOTP, sessions and recovery codes
// cleared). Each change writes an audit row with its actor.

export type UsersOps = Pick<OperationsContext, 'db'>;

/** A console user as both faces show it (never its hash or TOTP secret). */
export interface ConsoleUserView {
  id: string;
  email: string;
  role: ConsoleRole;
  merchant_id: string | null;
  totp_enabled: boolean;
  must_change_password: boolean;
  disabled: boolean;
  disabled_at: string | null;
  created_at: string;
}

export function consoleUserView(u: ConsoleUserRecord): ConsoleUserView {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    merchant_id: u.merchant_id,
    totp_enabled: u.totp_enabled_at !== null,
    must_change_password: u.must_change_password,
    disabled: u.disabled_at !== null,
    disabled_at: u.disabled_at?.toISOString() ?? null,
    created_at: u.created_at.toISOString(),
  };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function createConsoleUser(
  ops: UsersOps,
  actor: AuditActor,
  input: { email: string; role: string; merchantId?: string | null },
  writer?: AuditWriter,
): Promise<{ user: ConsoleUserView; password: string }> {
  const email = input.email.trim();
  if (!EMAIL.test(email) || email.length > 254) throw invalidRequest('parameter_invalid', 'Invalid email: not an email address.', 'email');
  if (input.role !== 'operator' && input.role !== 'merchant') {
    throw invalidRequest('parameter_invalid', "Invalid role: 'operator' or 'merchant'.", 'role');
  }
  const role: ConsoleRole = input.role;
  const merchantId = input.merchantId ?? null;
  if (role === 'operator' && merchantId !== null) {
    throw invalidRequest('parameter_invalid', 'An operator belongs to no merchant: leave merchant_id out.', 'merchant_id');
  }
  if (role === 'merchant') {
    if (merchantId === null) throw invalidRequest('parameter_missing', 'A merchant user needs merchant_id.', 'merchant_id');
    const m = await ops.db.selectFrom('merchants').select('id').where('id', '=', merchantId).executeTakeFirst();
    if (!m) throw resourceNotFound('merchant_id', 'merchant');
  }
  if (await getConsoleUserByEmail(ops.db, email)) {
    throw invalidRequest('email_in_use', 'A console user with this email exists already.', 'email', 409);
  }
  const password = generateTemporaryPassword();
  let row: ConsoleUserRecord;
  try {
    row = await insertConsoleUser(ops.db, {
      email,
      role,
      merchantId,
      passwordHash: await hashPassword(password),
      mustChangePassword: true,
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') {
      throw invalidRequest('email_in_use', 'A console user with this email exists already.', 'email', 409);
    }
    throw err;
  }
  const user = consoleUserView(row);
  await auditWith(
    ops.db,
    actor,
    writer,
  )({
    action: 'console_user.create',
    objectType: 'console_user',
    objectId: user.id,
    merchantId: user.merchant_id,
    after: user,
  });
  return { user, password };
}

export async function listConsoleUsers(
  ops: UsersOps,
  f: { role?: ConsoleRole; merchantId?: string; after?: string; limit: number },
): Promise<{ data: ConsoleUserView[]; nextCursor: string | null }> {
  const rows = await listUserRows(ops.db, { ...f, limit: f.limit + 1 });
  const page = rows.slice(0, f.limit);
  return { data: page.map(consoleUserView), nextCursor: rows.length > f.limit ? (page.at(-1)?.id ?? null) : null };
}

/** A user by id (cu_...) or by email (case-insensitively); 404 when there is none. */
export async function findConsoleUser(ops: UsersOps, idOrEmail: string): Promise<ConsoleUserRecord> {
  const row = idOrEmail.includes('@') ? await getConsoleUserByEmail(ops.db, idOrEmail) : await getConsoleUser(ops.db, idOrEmail);
  if (!row) throw resourceNotFound('id', 'console user');
  return row;
}

const refuseSelf = (actor: AuditActor, target: ConsoleUserRecord, what: string) => {
  if (actor.kind === 'console' && actor.id === target.id) {
    throw new ApiError(403, 'permission_error', 'not_permitted', `You cannot ${what} your own account here.`);
  }
};

/** Disables the user and revokes every session it has. */
export async function disableConsoleUser(
  ops: UsersOps,
  actor: AuditActor,
  idOrEmail: string,
  writer?: AuditWriter,
): Promise<ConsoleUserView> {
  const before = await findConsoleUser(ops, idOrEmail);
  refuseSelf(actor, before, 'disable');
  const after = await disableUserRow(ops.db, before.id);
  const revoked = await revokeUserSessions(ops.db, before.id);
  const user = consoleUserView(after ?? before);
  await auditWith(
    ops.db,
    actor,
    writer,
  )({
    action: 'console_user.disable',
    objectType: 'console_user',
    objectId: before.id,
    merchantId: before.merchant_id,
    before: consoleUserView(before),
    after: user,
    detail: `${revoked} session(s) revoked`,
  });
  return user;
}

/** A new temporary password (shown once, must be changed); TOTP, recovery codes and every session cleared. */
export async function resetConsoleUser(
  ops: UsersOps,
  actor: AuditActor,
  idOrEmail: string,
  writer?: AuditWriter,
): Promise<{ user: ConsoleUserView; password: string }> {
  const before = await findConsoleUser(ops, idOrEmail);
  refuseSelf(actor, before, 'reset');
  const password = generateTemporaryPassword();
  await setConsolePassword(ops.db, before.id, await hashPassword(password), true);
  await clearTotp(ops.db, before.id);
  await clearRecoveryCodes(ops.db, before.id);
  const revoked = await revokeUserSessions(ops.db, before.id);
  const after = await getConsoleUser(ops.db, before.id);
  const user = consoleUserView(after ?? before);
  await auditWith(
    ops.db,
    actor,
    writer,
  )({
    action: 'console_user.reset',
    objectType: 'console_user',
    objectId: before.id,
    merchantId: before.merchant_id,
    before: consoleUserView(before),
    after: user,
    detail: `temporary password issued; TOTP and recovery codes cleared; ${revoked} session(s) revoked`,
  });
  return { user, password };
}
