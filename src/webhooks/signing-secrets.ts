import { previousWebhookSecretAad, webhookSecretAad } from '../security/sealed-column-aad.js';
import type { SecretBox } from '../security/secret-box.js';

// During a rotation overlap the previous secret signs beside the new one (src/ledger/merchants/webhook-secrets.ts rotates).

/** The secrets that sign now, newest first. */
export function signingSecrets(
  box: SecretBox,
  m: { merchant_id: string; webhook_secret_enc: string; webhook_secret_prev_enc: string | null; prev_secret_valid: boolean },
): string[] {
  const current = box.open(m.webhook_secret_enc, webhookSecretAad(m.merchant_id));
  if (!m.prev_secret_valid || !m.webhook_secret_prev_enc) return [current];
  return [current, box.open(m.webhook_secret_prev_enc, previousWebhookSecretAad(m.merchant_id))];
}
