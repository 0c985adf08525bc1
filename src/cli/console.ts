import { userInfo } from 'node:os';
import type { Db } from '../db/database.js';
import { ApiError } from '../domain/errors.js';
import type { AuditActor } from '../ledger/audit/audit-log.js';
import { createConsoleUser, disableConsoleUser, listConsoleUsers, resetConsoleUser } from '../operations/console-users.js';
import { UsageError, options, print, required } from './args.js';
import { demoTotpCode } from '../operations/console-demo.js';
import type { SecretBox } from '../security/secret-box.js';

// `console user ...`: the web console's users (docs/console.md, "Accounts and security"), through the same
// operations as the console's users page. A temporary password is printed once, at creation or reset; the user must
// change it at first sign-in (and an operator must turn on TOTP).

export const CONSOLE_USAGE = `console user create --email <email> --role operator|merchant [--merchant <id>]
                                                    a console user; prints its temporary password once
console user list [--role operator|merchant] [--merchant <id>]
console user disable <id|email>                     disable it and end its sessions
console user reset <id|email>                       new temporary password; TOTP and sessions cleared
console demo-code [--email <demo user>]             the demo operator's current TOTP code (npm run dev only)`;

/** The operating-system user running the command, as the audit log's actor. */
function cliActor(): AuditActor {
  let name = 'unknown';
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? 'unknown';
  }
  return { kind: 'cli', id: name };
}

export async function consoleCli(args: string[], ctx: { db: Db; box: SecretBox }): Promise<void> {
  const [what, sub, ...rest] = args;
  if (what === 'demo-code') return await demoCode(args.slice(1), ctx);
  if (what !== 'user') throw new UsageError(`usage:\n${CONSOLE_USAGE}`);
  const ops = { db: ctx.db };
  try {
    switch (sub) {
      case 'create': {
        const { values, positionals } = options(rest, {
          email: { type: 'string' },
          role: { type: 'string' },
          merchant: { type: 'string' },
        });
        if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${CONSOLE_USAGE}`);
        const role = required(values.role, 'role');
        if (role !== 'operator' && role !== 'merchant') throw new UsageError('--role must be operator or merchant');
        if (role === 'merchant' && values.merchant === undefined) throw new UsageError('--merchant is required for --role merchant');
        if (role === 'operator' && values.merchant !== undefined) throw new UsageError('--merchant is only for --role merchant');
        const r = await createConsoleUser(ops, cliActor(), {
          email: required(values.email, 'email'),
          role,
          merchantId: values.merchant ?? null,
        });
        print({ user: r.user, temporary_password: r.password, note: 'Shown once. The user must change it at first sign-in.' });
        return;
      }
      case 'list': {
        const { values, positionals } = options(rest, { role: { type: 'string' }, merchant: { type: 'string' } });
        if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${CONSOLE_USAGE}`);
        if (values.role !== undefined && values.role !== 'operator' && values.role !== 'merchant') {
          throw new UsageError('--role must be operator or merchant');
        }
        const all = [];
        let after: string | undefined;
        for (;;) {
          const page = await listConsoleUsers(ops, {
            limit: 100,
            ...(after !== undefined ? { after } : {}),
            ...(values.role !== undefined ? { role: values.role } : {}),
            ...(values.merchant !== undefined ? { merchantId: values.merchant } : {}),
          });
          all.push(...page.data);
          if (page.nextCursor === null) break;
          after = page.nextCursor;
        }
        print(all);
        return;
      }
      case 'disable':
      case 'reset': {
        const { positionals } = options(rest, {});
        const target = positionals[0];
        if (target === undefined || positionals.length > 1) throw new UsageError(`usage: console user ${sub} <id|email>`);
        if (sub === 'disable') {
          print({ user: await disableConsoleUser(ops, cliActor(), target) });
        } else {
          const r = await resetConsoleUser(ops, cliActor(), target);
          print({ user: r.user, temporary_password: r.password, note: 'Shown once. The user must change it and turn on TOTP again.' });
        }
        return;
      }
      default:
        throw new UsageError(`usage:\n${CONSOLE_USAGE}`);
    }
  } catch (err) {
    // The operations' refusals (bad email, unknown merchant or user, email in use) are the caller's mistake: usage.
    if (err instanceof ApiError && err.status < 500) throw new UsageError(err.message);
    throw err;
  }
}

/** `console demo-code`: the code a newcomer types at the demo's sign-in, printed alone on stdout. */
async function demoCode(args: string[], ctx: { db: Db; box: SecretBox }): Promise<void> {
  const { values, positionals } = options(args, { email: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${CONSOLE_USAGE}`);
  try {
    process.stdout.write(`${await demoTotpCode(ctx, values.email)}\n`);
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) throw new UsageError(err.message);
    throw err;
  }
}
