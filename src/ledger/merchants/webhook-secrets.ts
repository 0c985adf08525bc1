import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { generateWebhookSecret } from '../../security/api-key-material.js';
import { previousWebhookSecretAad, webhookSecretAad } from '../../security/sealed-column-aad.js';
import type { SecretBox } from '../../security/secret-box.js';

// A merchant's webhook signing secrets. Rotation keeps the previous secret signing beside the new one until the
// overlap ends, so a receiver can switch secrets at any moment of the overlap without refusing a delivery
// (src/webhooks/signing-secrets.ts picks the secrets that sign).

export interface RotatedSecret {
  merchantId: string;
  webhookSecret: string;
  previousValidUntil: Date | null;
}

export async function rotateWebhookSecret(
  db: Db,
  box: SecretBox,
  merchantId: string,
  overlapHours: number,
): Promise<RotatedSecret | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('merchants')
      .select(['id', 'webhook_secret_enc'])
      .where('id', '=', merchantId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return undefined;
    const old = box.open(row.webhook_secret_enc, webhookSecretAad(merchantId));
    const fresh = generateWebhookSecret();
    const overlapMs = Math.round(overlapHours * 3600_000);
    const { rows } = await sql<{ until: Date | null }>`
      update merchants set
        webhook_secret_enc = ${box.seal(fresh, webhookSecretAad(merchantId))},
        webhook_secret_prev_enc = ${overlapMs > 0 ? box.seal(old, previousWebhookSecretAad(merchantId)) : null},
        webhook_secret_prev_expires_at = ${overlapMs > 0 ? sql`now() + ${overlapMs} * interval '1 millisecond'` : null}
      where id = ${merchantId}
      returning webhook_secret_prev_expires_at as until`.execute(trx);
    return { merchantId, webhookSecret: fresh, previousValidUntil: rows[0]!.until };
  });
}

/** Sets (or clears, with null) the URL. The caller has checked it against the endpoint rules. */
export async function setWebhookUrl(db: Db, merchantId: string, url: string | null): Promise<boolean> {
  const r = await db.updateTable('merchants').set({ webhook_url: url }).where('id', '=', merchantId).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}
