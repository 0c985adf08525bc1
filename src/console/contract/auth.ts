import { z } from 'zod';

// Response shapes of the console's sign-in API (/api/auth/*): what the single-page app reads. Types only for the UI.

export const consoleUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(['operator', 'merchant']),
  merchant_id: z.string().nullable(),
  totp_enabled: z.boolean(),
  must_change_password: z.boolean(),
});
export type ConsoleUser = z.infer<typeof consoleUserSchema>;

/** POST /api/auth/login and GET /api/auth/me. `totp_enrollment_required`: an operator without TOTP; until it confirms
 * TOTP every other console route answers 403 `totp_enrollment_required`. */
export const authStateSchema = z.object({
  user: consoleUserSchema,
  csrf_token: z.string(),
  totp_enrollment_required: z.boolean(),
});
export type AuthState = z.infer<typeof authStateSchema>;

/** POST /api/auth/login's body. totp_code or recovery_code when the user has TOTP (else 401 `totp_required`). */
export const loginRequestSchema = z.object({
  email: z.string(),
  password: z.string(),
  totp_code: z.string().optional(),
  recovery_code: z.string().optional(),
});
export type LoginRequest = z.infer<typeof loginRequestSchema>;

/** POST /api/auth/totp/setup: the pending secret (base32) and its otpauth:// URL (render as a QR code). */
export const totpSetupSchema = z.object({ secret: z.string(), otpauth_url: z.string() });
export type TotpSetup = z.infer<typeof totpSetupSchema>;

/** POST /api/auth/totp/confirm {code}: ten one-time recovery codes, shown once only. */
export const totpConfirmSchema = z.object({ recovery_codes: z.array(z.string()) });
export type TotpConfirm = z.infer<typeof totpConfirmSchema>;

/** POST /api/auth/password {current_password, new_password (min 12 chars)}, /logout, /logout-all. */
export const okSchema = z.object({ ok: z.literal(true) });
export type Ok = z.infer<typeof okSchema>;

/** Error codes of the sign-in API (in the spec's error shape). 429 carries Retry-After (seconds). */
export const AUTH_ERROR_CODES = [
  'invalid_credentials',
  'totp_required',
  'totp_invalid',
  'login_locked',
  'not_signed_in',
  'totp_enrollment_required',
  'password_change_required',
  'csrf_token_invalid',
  'password_too_short',
] as const;
