import { userInfo } from 'node:os';
import type { Db } from '../db/database.js';
import { pauseSigner, resumeSigner, signerStatus, type SignerStatus } from '../operations/signer.js';
import { UsageError, options, print } from './args.js';

// `signer pause|resume|status`: the signer role's kill switch (docs/signer.md, "Pause"). Paused, the signer refuses
// every signature until resumed; each change is a signer_audit row naming the operating-system user.

export const SIGNER_USAGE = `signer pause [--reason <text>]                      the signer refuses every signature until resumed
signer resume                                       the signer signs justified requests again
signer status [--json]                              paused or signing, since when, by whom`;

function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return `cli:${process.env.USER ?? 'unknown'}`;
  }
}

const line = (s: SignerStatus): string =>
  `signer ${s.paused ? 'PAUSED' : 'signing'} since ${s.changed_at}${s.changed_by ? ` (by ${s.changed_by})` : ''}${s.reason ? `: ${s.reason}` : ''}\n`;

export async function signerCli(args: string[], ctx: { db: Db }): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'pause': {
      const { values, positionals } = options(rest, { reason: { type: 'string' } });
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${SIGNER_USAGE}`);
      if (values.reason !== undefined && (values.reason.trim() === '' || values.reason.length > 500))
        throw new UsageError('--reason must be 1..500 characters');
      print(await pauseSigner(ctx.db, cliActor(), values.reason?.trim() ?? null));
      return;
    }
    case 'resume': {
      const { positionals } = options(rest, {});
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${SIGNER_USAGE}`);
      print(await resumeSigner(ctx.db, cliActor()));
      return;
    }
    case 'status': {
      const { values, positionals } = options(rest, { json: { type: 'boolean' } });
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${SIGNER_USAGE}`);
      const s = await signerStatus(ctx.db);
      if (values.json) print(s);
      else process.stdout.write(line(s));
      return;
    }
    default:
      throw new UsageError(`usage:\n${SIGNER_USAGE}`);
  }
}
