import { z } from 'zod';
import { REFUSAL_CODES, type SIGNING_PURPOSES } from '../domain/signing.js';

// The signer role's wire protocol (docs/signer.md): JSON over HTTP on a Unix socket. Three calls:
//   POST /v1/public-key  {key}                       → {public_key: hex}
//   POST /v1/sign        SignRequest                 → {signature} | 403 {error: {code, message}}
//   GET  /healthz                                    → {status: "ok", paused}
// Nothing here is secret: requests name key paths and carry what is to be signed, answers carry public keys and
// signatures. The signer never answers key material.

const hex = (bytes?: number) =>
  z
    .string()
    .regex(bytes === undefined ? /^0x(?:[0-9a-f]{2})*$/ : new RegExp(`^0x[0-9a-f]{${bytes * 2}}$`))
    .max(200_000);

export const keyPathSchema = z.strictObject({
  curve: z.enum(['secp256k1', 'ed25519']),
  path: z
    .string()
    .max(120)
    .regex(/^m(\/\d{1,10}'?){1,8}$/),
});

const id = z.string().min(1).max(80);
export const intentSchema = z.discriminatedUnion('purpose', [
  z.strictObject({ purpose: z.literal('refund_payout'), refund_id: id }),
  z.strictObject({ purpose: z.literal('deposit_setup'), setup_id: id }),
  z.strictObject({ purpose: z.literal('sweep_step'), sweep_id: id, step_id: id }),
  z.strictObject({ purpose: z.literal('subscription_charge'), charge_id: id }),
  z.strictObject({ purpose: z.literal('gas_station_drain'), drain_id: id }),
]);
// Keeps the two lists of purposes one: a purpose added to SigningIntent without a schema fails to compile here.
const _purposes: readonly (typeof SIGNING_PURPOSES)[number][] = intentSchema.options.map((o) => o.shape.purpose.value);
void _purposes;

export const preimageSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('evm-transaction'), unsignedSerialized: hex() }),
  z.strictObject({
    kind: z.literal('evm-authorization'),
    chainId: z.string().regex(/^\d{1,20}$/),
    address: hex(20),
    nonce: z.string().regex(/^\d{1,20}$/),
  }),
  z.strictObject({
    kind: z.literal('tron-transaction'),
    rawDataHex: z
      .string()
      .regex(/^(?:[0-9a-f]{2})+$/)
      .max(200_000),
  }),
]);

export const signRequestSchema = z.strictObject({
  /** The caller's id of this request (logged and audited; a repeated id is refused). */
  request_id: z.string().regex(/^[A-Za-z0-9_-]{8,80}$/),
  intent: intentSchema,
  key: keyPathSchema,
  payload: z.discriminatedUnion('curve', [
    z.strictObject({ curve: z.literal('secp256k1'), digest: hex(32), preimage: preimageSchema }),
    z.strictObject({ curve: z.literal('ed25519'), message: z.string().base64().max(200_000) }),
  ]),
});
export type SignRequest = z.infer<typeof signRequestSchema>;

export const publicKeyRequestSchema = z.strictObject({ key: keyPathSchema });

export const signResponseSchema = z.union([
  z.strictObject({ signature: z.strictObject({ r: hex(32), s: hex(32), y_parity: z.union([z.literal(0), z.literal(1)]) }) }),
  z.strictObject({ signature_ed25519: z.string().base64() }),
]);
export type SignResponse = z.infer<typeof signResponseSchema>;

export { REFUSAL_CODES };
export const errorResponseSchema = z.strictObject({
  error: z.strictObject({ code: z.enum(REFUSAL_CODES), message: z.string() }),
});
