import type { ConsoleUserRecord } from '../../ledger/console/users.js';
import type { AuthState, ConsoleUser } from '../contract/auth.js';

// The signed-in user as the sign-in API shows it (contract/auth.ts).

export function signedInUser(u: ConsoleUserRecord): ConsoleUser {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    merchant_id: u.merchant_id,
    totp_enabled: u.totp_enabled_at !== null,
    must_change_password: u.must_change_password,
  };
}

export function authState(u: ConsoleUserRecord, csrfToken: string): AuthState {
  return {
    user: signedInUser(u),
    csrf_token: csrfToken,
    totp_enrollment_required: u.role === 'operator' && u.totp_enabled_at === null,
  };
}
