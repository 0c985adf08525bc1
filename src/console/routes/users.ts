import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createConsoleUser, disableConsoleUser, listConsoleUsers, resetConsoleUser } from '../../operations/console-users.js';
import { auditActorOf } from '../actor.js';
import {
  type UserCreated,
  type UserDisabled,
  type UserList,
  type UserReset,
  userCreatedSchema,
  userDisabledSchema,
  userListSchema,
  userResetSchema,
} from '../contract/users.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// The users page's API (operators only): list, create (temporary password shown once), disable, reset. The rules are
// in operations/console-users.ts, shared with the CLI's `console user ...`.

const userId = z.strictObject({ id: z.string().regex(/^cu_[0-9A-Za-z]{24}$/, 'not a console user id') });

export function registerUserRoutes(api: FastifyInstance, deps: ConsoleDeps): void {
  const { db } = deps.ops;

  consoleRoute(api, db, {
    method: 'GET',
    url: '/users',
    summary: 'Console users',
    response: userListSchema,
    role: 'operator',
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(100).default(25),
      cursor: z
        .string()
        .regex(/^cu_[0-9A-Za-z]{24}$/, 'not a cursor of this list')
        .optional(),
      role: z.enum(['operator', 'merchant']).optional(),
      merchant_id: z.string().max(64).optional(),
    }),
    async handler({ query }) {
      const page = await listConsoleUsers(deps.ops, {
        limit: query.limit,
        ...(query.cursor !== undefined ? { after: query.cursor } : {}),
        ...(query.role !== undefined ? { role: query.role } : {}),
        ...(query.merchant_id !== undefined ? { merchantId: query.merchant_id } : {}),
      });
      const out: UserList = { data: page.data, next_cursor: page.nextCursor };
      return out;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/users',
    summary: 'Create a console user (its temporary password is shown once)',
    response: userCreatedSchema,
    status: [201],
    errors: { 400: ['parameter_missing'], 409: ['email_in_use'] },
    role: 'operator',
    body: z.strictObject({
      email: z.string().min(3).max(254),
      role: z.enum(['operator', 'merchant']),
      merchant_id: z.string().max(64).optional(),
    }),
    async handler({ actor, body, audit, reply }) {
      const created = await createConsoleUser(
        deps.ops,
        auditActorOf(actor),
        { email: body.email, role: body.role, merchantId: body.merchant_id ?? null },
        audit,
      );
      reply.code(201);
      const out: UserCreated = created;
      return out;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/users/:id/disable',
    summary: 'Disable a console user (its sessions end)',
    response: userDisabledSchema,
    role: 'operator',
    params: userId,
    async handler({ actor, params, audit }) {
      const out: UserDisabled = { user: await disableConsoleUser(deps.ops, auditActorOf(actor), params.id, audit) };
      return out;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/users/:id/reset',
    summary: "Reset a console user's password, TOTP and sessions",
    response: userResetSchema,
    role: 'operator',
    params: userId,
    async handler({ actor, params, audit }) {
      const out: UserReset = await resetConsoleUser(deps.ops, auditActorOf(actor), params.id, audit);
      return out;
    },
  });
}
