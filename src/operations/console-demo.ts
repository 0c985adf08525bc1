import { Secret } from 'otpauth';
import type { AuditActor } from '../ledger/audit/audit-log.js';
import { appendAudit } from '../ledger/audit/audit-log.js';
import {
  clearTotp,
  enableTotp,
  getConsoleUserByEmail,
  insertConsoleUser,
  setConsolePassword,
  setPendingTotp,
} from '../ledger/console/users.js';
import { invalidRequest } from '../domain/errors.js';
import { totpSecretAad } from '../security/sealed-column-aad.js';
import type { OperationsContext } from './context.js';
import { hashPassword } from './console-credentials.js';
import { currentTotpCode, openTotpSecret } from './console-totp.js';

// The demo's console users (`npm run dev`, docs/console.md "Demo"): an operator with TOTP on and a merchant user of
// the demo merchant, with a published password. Their addresses are in the reserved `.invalid` domain, and the
// console refuses them unless CONSOLE_DEMO=true (only `npm run dev` sets it): demo credentials never open a real
// deployment's console.

export const DEMO_EMAIL_DOMAIN = 'demo.invalid';
export const DEMO_OPERATOR_EMAIL = `operator@${DEMO_EMAIL_DOMAIN}`;
export const DEMO_MERCHANT_EMAIL = `merchant@${DEMO_EMAIL_DOMAIN}`;
export const DEMO_PASSWORD = 'demo-console-password';

export const isDemoEmail = (email: string): boolean => email.trim().toLowerCase().endsWith(`@${DEMO_EMAIL_DOMAIN}`);

const DEMO_ACTOR: AuditActor = { kind: 'system', id: 'npm run dev' };

/** Creates (or resets) the demo's two users; returns the operator's TOTP secret (base32) for the printout. */
export async function ensureDemoConsoleUsers(
  ops: Pick<OperationsContext, 'db' | 'box'>,
  merchantId: string,
): Promise<{ operatorTotpSecret: string }> {
  const passwordHash = await hashPassword(DEMO_PASSWORD);
  const upsert = async (email: string, role: 'operator' | 'merchant', merchant: string | null) => {
    const found = await getConsoleUserByEmail(ops.db, email);
    if (found) {
      await setConsolePassword(ops.db, found.id, passwordHash, false);
      await clearTotp(ops.db, found.id);
      return found.id;
    }
    const u = await insertConsoleUser(ops.db, { email, role, merchantId: merchant, passwordHash, mustChangePassword: false });
    await appendAudit(ops.db, DEMO_ACTOR, {
      action: 'console_user.create',
      objectType: 'console_user',
      objectId: u.id,
      merchantId: merchant,
      detail: 'demo user',
    });
    return u.id;
  };
  const operatorId = await upsert(DEMO_OPERATOR_EMAIL, 'operator', null);
  await upsert(DEMO_MERCHANT_EMAIL, 'merchant', merchantId);
  const secret = new Secret({ size: 20 }).base32;
  await setPendingTotp(ops.db, operatorId, ops.box.seal(secret, totpSecretAad(operatorId)));
  await enableTotp(ops.db, operatorId);
  return { operatorTotpSecret: secret };
}

/** The demo operator's current TOTP code; refused for any user outside the demo's domain. */
export async function demoTotpCode(
  ops: Pick<OperationsContext, 'db' | 'box'>,
  email = DEMO_OPERATOR_EMAIL,
  at = new Date(),
): Promise<string> {
  if (!isDemoEmail(email)) throw invalidRequest('not_a_demo_user', 'Only the demo users of `npm run dev` have codes printed.', 'email');
  const user = await getConsoleUserByEmail(ops.db, email);
  const secret = user ? openTotpSecret(ops, user) : null;
  if (!secret) throw invalidRequest('resource_not_found', 'The demo operator does not exist: is `npm run dev` running?', 'email', 404);
  return currentTotpCode(secret, at);
}
