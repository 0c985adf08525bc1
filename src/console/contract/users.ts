import { z } from 'zod';

// Response shapes of the users page's API (operator only): GET /api/users, POST /api/users, POST /api/users/:id/disable,
// POST /api/users/:id/reset. Types only for the UI.

export const consoleUserRowSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(['operator', 'merchant']),
  merchant_id: z.string().nullable(),
  totp_enabled: z.boolean(),
  must_change_password: z.boolean(),
  disabled: z.boolean(),
  disabled_at: z.string().nullable(),
  created_at: z.string(),
});
export type ConsoleUserRow = z.infer<typeof consoleUserRowSchema>;

/** GET /api/users?limit&cursor&role&merchant_id (newest first). */
export const userListSchema = z.object({ data: z.array(consoleUserRowSchema), next_cursor: z.string().nullable() });
export type UserList = z.infer<typeof userListSchema>;

/** POST /api/users {email, role, merchant_id?}: the user and its temporary password, shown once. */
export const userCreatedSchema = z.object({ user: consoleUserRowSchema, password: z.string() });
export type UserCreated = z.infer<typeof userCreatedSchema>;

/** POST /api/users/:id/disable. */
export const userDisabledSchema = z.object({ user: consoleUserRowSchema });
export type UserDisabled = z.infer<typeof userDisabledSchema>;

/** POST /api/users/:id/reset: a new temporary password (shown once); TOTP, sessions and recovery codes cleared. */
export const userResetSchema = z.object({ user: consoleUserRowSchema, password: z.string() });
export type UserReset = z.infer<typeof userResetSchema>;
