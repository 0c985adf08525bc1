import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Secp256k1Signature } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { RefusalCode } from '../domain/signing.js';
import { chainKey } from '../ledger/core/chain-ref.js';
import { appendSignerAudit, isRequestIdSeen, lockSignerLimits } from '../ledger/signer/signer-audit.js';
import { readSignerState } from '../ledger/signer/signer-state.js';
import type { Logger } from '../logger.js';
import { recordSignerAnswer, setSignerPaused } from '../metrics/signer.js';
import type { MnemonicSigner } from '../signer/mnemonic-signer.js';
import { signRequestSchema, type SignRequest } from '../signer/protocol.js';
import { digestOf } from './digest.js';
import { justifyCharge } from './justify-charge.js';
import { justifyDepositSetup } from './justify-deposit-setup.js';
import { justifyDrain } from './justify-drain.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { justifyRefundPayout } from './justify-refund.js';
import { justifySweepStep } from './justify-sweep.js';
import { checkLimits, DEFAULT_SIGNER_LIMITS, type SignerLimits } from './limits.js';
import { Refusal, refuse } from './refusal.js';

// The sign pipeline (docs/signer.md, "Pipeline"): parse → replayed request id → paused → the digest recomputed from
// its preimage → decoded and justified by the intent's purpose (refund payout, deposit setup, charge, sweep step) →
// limits → signed → audited → answered. Every answer,
// signed or refused, is one signer_audit row and one metric; the signature leaves only once its row is committed.

export interface SignDeps {
  db: Db;
  signer: MnemonicSigner;
  adapters: ChainRegistry;
  limits: SignerLimits;
  log: Logger;
  now?: () => Date;
}

export type SignAnswer =
  | { status: 200; body: { signature: { r: string; s: string; y_parity: 0 | 1 } } | { signature_ed25519: string } }
  | { status: 403; body: { error: { code: RefusalCode; message: string } } };

export async function answerSign(deps: SignDeps, input: unknown): Promise<SignAnswer> {
  const parsed = signRequestSchema.safeParse(input);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.join('.') || 'body';
    return refused(deps, null, {}, new Refusal('malformed_request', `not a sign request (at ${where})`));
  }
  const req = parsed.data;
  const seen: AuditContext = {};
  try {
    return await signOrRefuse(deps, req, seen);
  } catch (err) {
    if (err instanceof Refusal) return refused(deps, req, seen, err);
    throw err;
  }
}

/** A sign request that could not be read at all (not JSON, too large): audited and counted like any refusal. */
export function answerMalformed(deps: SignDeps, message: string): Promise<SignAnswer> {
  return refused(deps, null, {}, new Refusal('malformed_request', message));
}

async function signOrRefuse(deps: SignDeps, req: SignRequest, seen: AuditContext): Promise<SignAnswer> {
  if (await isRequestIdSeen(deps.db, req.request_id)) refuse('replayed_request', `request ${req.request_id} was already answered`);
  const state = await readSignerState(deps.db);
  setSignerPaused(state.paused);
  if (state.paused) refuse('paused', 'the signer is paused (signer resume)');
  if (req.payload.curve !== req.key.curve) refuse('wrong_key', `a ${req.key.curve} key cannot sign a ${req.payload.curve} payload`);
  const payload = req.payload;
  // secp256k1: the digest must be the hash of its preimage; ed25519 (Solana) signs the message itself.
  const preimage: SignedPreimage =
    payload.curve === 'secp256k1' ? payload.preimage : { kind: 'solana-message', message: Buffer.from(payload.message, 'base64') };
  if (payload.curve === 'secp256k1' && digestOf(payload.preimage) !== payload.digest.toLowerCase())
    refuse('digest_mismatch', `the digest is not the hash of its ${payload.preimage.kind} preimage`);
  const keys = { db: deps.db, adapters: deps.adapters, keys: deps.signer };
  const intent = req.intent;
  const now = deps.now?.() ?? new Date();
  const recentHours = deps.limits.sweepRecentHours ?? DEFAULT_SIGNER_LIMITS.sweepRecentHours;
  const payout =
    intent.purpose === 'refund_payout'
      ? await justifyRefundPayout(keys, intent.refund_id, req.key, preimage, seen)
      : intent.purpose === 'deposit_setup'
        ? await justifyDepositSetup(keys, intent.setup_id, req.key, preimage, seen)
        : intent.purpose === 'subscription_charge'
          ? await justifyCharge(keys, intent.charge_id, req.key, preimage, seen)
          : intent.purpose === 'sweep_step'
            ? await justifySweepStep({ ...keys, recentHours, now }, intent, req.key, preimage, seen)
            : intent.purpose === 'gas_station_drain'
              ? await justifyDrain(keys, intent.drain_id, req.key, preimage, seen)
              : refuse('purpose_not_supported', `${(intent as { purpose: string }).purpose} is not justified by this signer yet`);
  // A sweep step counted by the limits says so in its audit summary (signedLimitedTotals reads it back).
  const limitedSweep = 'limited' in payout && payout.limited;
  const summary = limitedSweep ? { ...payout.summary, limited: true } : payout.summary;
  const signature = await deps.db.transaction().execute(async (trx): Promise<{ ed25519: string } | { secp256k1: Secp256k1Signature }> => {
    // Refund payouts are limited per merchant and network (a deposit setup moves no tokens; charges: the invoice);
    // sweeps only when they send tokens to a treasury address changed recently (justify-sweep.ts).
    const limited =
      intent.purpose === 'refund_payout'
        ? { purpose: intent.purpose, objectId: intent.refund_id }
        : intent.purpose === 'sweep_step' && limitedSweep
          ? { purpose: intent.purpose, objectId: intent.step_id }
          : null;
    if (limited) {
      const merchantId = ownerOf(payout);
      await lockSignerLimits(trx, `${merchantId}:${chainKey(payout)}`);
      await checkLimits(trx, deps.limits, {
        ...limited,
        merchantId,
        network: payout.network,
        mode: payout.mode,
        amount: payout.amount,
        decimals: payout.decimals,
        decimalsOf: (t) => deps.adapters.token(payout.network, payout.mode, t)?.decimals,
        now,
      });
    }
    const written = await appendSignerAudit(trx, {
      ...auditBase(req),
      outcome: 'signed',
      merchantId: payout.merchantId,
      network: payout.network,
      mode: payout.mode,
      summary,
      amountBase: payout.amount,
    });
    if (!written) refuse('replayed_request', `request ${req.request_id} was already answered`);
    if (payload.curve === 'ed25519')
      return { ed25519: Buffer.from(await deps.signer.signEd25519(req.key, Buffer.from(payload.message, 'base64'))).toString('base64') };
    return { secp256k1: await deps.signer.signSecp256k1Digest(req.key, Buffer.from(payload.digest.slice(2), 'hex')) };
  });
  recordSignerAnswer(req.intent.purpose, 'signed', null);
  deps.log.info(
    {
      request_id: req.request_id,
      ...intentIds(intent),
      merchant_id: payout.merchantId,
      network: payout.network,
      amount_base: String(payout.amount),
    },
    `signed a ${intent.purpose}`,
  );
  if ('ed25519' in signature) return { status: 200, body: { signature_ed25519: signature.ed25519 } };
  const sig = signature.secp256k1;
  return { status: 200, body: { signature: { r: sig.r, s: sig.s, y_parity: sig.yParity } } };
}

/** The merchant a limited send belongs to (refunds, sweeps always have one). */
function ownerOf(send: JustifiedSend): string {
  if (send.merchantId === null) throw new Error('a limited send without its merchant');
  return send.merchantId;
}

function auditBase(req: SignRequest) {
  return {
    requestId: req.request_id,
    purpose: req.intent.purpose,
    intent: req.intent,
    keyPath: `${req.key.curve}:${req.key.path}`,
    digest: req.payload.curve === 'secp256k1' ? req.payload.digest.toLowerCase() : null,
  };
}

async function refused(deps: SignDeps, req: SignRequest | null, seen: AuditContext, r: Refusal): Promise<SignAnswer> {
  const row = {
    ...(req ? auditBase(req) : {}),
    outcome: 'refused' as const,
    code: r.code,
    reason: r.reason,
    merchantId: seen.merchantId ?? null,
    network: seen.network ?? null,
    mode: seen.mode ?? null,
    summary: seen.summary ?? null,
    amountBase: seen.amount ?? null,
  };
  // A concurrent twin of this request id was answered first: this one is its replay.
  if (!(await appendSignerAudit(deps.db, row))) await appendSignerAudit(deps.db, { ...row, code: 'replayed_request' });
  recordSignerAnswer(req?.intent.purpose ?? 'none', 'refused', r.code);
  deps.log.warn(
    {
      request_id: req?.request_id ?? null,
      ...(req ? intentIds(req.intent) : {}),
      merchant_id: seen.merchantId ?? null,
      code: r.code,
      reason: r.reason,
    },
    'signer refused a signature',
  );
  return { status: 403, body: { error: { code: r.code, message: r.reason } } };
}

/** The business ids of an intent, as log fields. */
function intentIds(intent: SignRequest['intent']): Record<string, string> {
  const { purpose: _purpose, ...ids } = intent;
  return ids;
}
