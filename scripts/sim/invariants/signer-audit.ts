import { Transaction } from 'ethers';
import type { Invariant, Violation } from '../contract.js';

export const SIGNER_AUDIT = 'signer-signed-only-justified';

// The signer's audit against the ledger (docs/simulation.md, "Invariants"; docs/signer.md, "Audit"), at the end of a
// seed whose roles asked a separate signer process:
// 1. every `signed` row of signer_audit names, by its intent, an object of the ledger that exists (the refund, the
//    subscription charge, the deposit setup, the sweep and a step of that sweep, the gas-station drain) and carries that
//    object's merchant (none for a drain: the operator's), network and mode: nothing was signed for an object the ledger
//    does not hold, or for another merchant's;
// 2. every outbound attempt the ledger holds (payout_attempts, subscription_charge_attempts, sweep_step_attempts,
//    deposit_setup_attempts, gas_station_drain_attempts: everything the service may have put on chain, docs/outbound.md) was signed by the signer
//    for that attempt's own object: a `signed` row whose intent names it, and on EVM and TRON whose digest is the
//    attempt's own transaction's (EVM: the unsigned hash of the stored raw transaction; TRON: its txID, the sha256 of
//    its raw_data). So no transaction went out that the signer did not check against the ledger (no role signed by
//    itself), and none was signed under another object's justification. Solana signatures carry no digest in the
//    audit (the signer signs the message itself): there, the intent is what is matched.
// A signed row with no attempt is allowed: the signature is taken inside the attempt's database transaction, which a
// kill can roll back (nothing was broadcast); the next run signs again. With --in-process-signer only (1) applies (the
// audit is then empty).

type Intent = Record<string, unknown> & { purpose?: string };

const objectKey = (purpose: string, id: string) => `${purpose}:${id}`;
const hex = (h: string) => h.toLowerCase().replace(/^0x/, '');

export const signerSignedOnlyJustified: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const v = (subject: string, message: string) => out.push({ invariant: SIGNER_AUDIT, subject, message });
  const signed = await ctx.db
    .selectFrom('signer_audit')
    .select(['id', 'request_id', 'purpose', 'intent', 'merchant_id', 'network', 'mode', 'digest'])
    .where('outcome', '=', 'signed')
    .orderBy('id')
    .execute();

  // The ledger's objects, by what an intent names: `purpose:id` → merchant, network, mode.
  const objects = new Map<string, { merchant: string | null; network: string; mode: string }>();
  const put = (purpose: string, rows: Array<{ id: unknown; merchant_id: string | null; network: string; mode: string }>) => {
    for (const r of rows) objects.set(objectKey(purpose, String(r.id)), { merchant: r.merchant_id, network: r.network, mode: r.mode });
  };
  put('refund_payout', await ctx.db.selectFrom('refunds').select(['id', 'merchant_id', 'network', 'mode']).execute());
  put('subscription_charge', await ctx.db.selectFrom('subscription_charges').select(['id', 'merchant_id', 'network', 'mode']).execute());
  put('deposit_setup', await ctx.db.selectFrom('deposit_setups').select(['id', 'merchant_id', 'network', 'mode']).execute());
  put('sweep_step', await ctx.db.selectFrom('sweeps').select(['id', 'merchant_id', 'network', 'mode']).execute());
  put(
    'gas_station_drain',
    (await ctx.db.selectFrom('gas_station_drains').select(['id', 'network', 'mode']).execute()).map((d) => ({ ...d, merchant_id: null })),
  );
  const stepSweep = new Map(
    (await ctx.db.selectFrom('sweep_steps').select(['id', 'sweep_id']).execute()).map((s) => [s.id, s.sweep_id] as const),
  );

  /** The object an intent names (`purpose:id`; a sweep step's key is its sweep's), or why it names none. */
  const named = (purpose: string | null, intent: Intent | null): { key: string } | { wrong: string } => {
    const i = intent ?? {};
    if (!purpose || i.purpose !== purpose) return { wrong: `purpose ${purpose} with intent ${JSON.stringify(intent)}` };
    const id = (k: string) => (typeof i[k] === 'string' ? (i[k] as string) : undefined);
    const ref =
      purpose === 'refund_payout'
        ? id('refund_id')
        : purpose === 'subscription_charge'
          ? id('charge_id')
          : purpose === 'deposit_setup'
            ? id('setup_id')
            : purpose === 'sweep_step'
              ? id('sweep_id')
              : purpose === 'gas_station_drain'
                ? id('drain_id')
                : undefined;
    if (ref === undefined) return { wrong: `intent ${JSON.stringify(intent)} names no object of a known purpose` };
    if (purpose === 'sweep_step' && stepSweep.get(id('step_id') ?? '') !== ref)
      return { wrong: `intent ${JSON.stringify(intent)}: no such step of that sweep` };
    return { key: objectKey(purpose, ref) };
  };

  // (1) every signature names an object of the ledger, with its merchant, network and mode.
  const signedFor = new Map<string, Array<string | null>>();
  for (const row of signed) {
    const subject = `signer_audit ${row.id} (${row.request_id ?? 'no request id'})`;
    const n = named(row.purpose, row.intent as Intent | null);
    if ('wrong' in n) {
      v(subject, `signed, but ${n.wrong}`);
      continue;
    }
    const o = objects.get(n.key);
    if (!o) {
      v(subject, `signed for ${n.key}, which the ledger does not hold`);
      continue;
    }
    if (o.merchant !== row.merchant_id || o.network !== row.network || o.mode !== row.mode)
      v(
        subject,
        `signed for ${n.key} as merchant ${row.merchant_id} ${row.network}/${row.mode}; the ledger's is ${o.merchant} ${o.network}/${o.mode}`,
      );
    signedFor.set(n.key, [...(signedFor.get(n.key) ?? []), row.digest ? hex(row.digest) : null]);
  }
  if (ctx.signer !== 'remote') return out;

  // (2) every attempt was signed by the signer, for its own object, and (EVM, TRON) these very bytes.
  const attempts: Array<{ key: string; what: string; network: string; txHash: string; raw: string | undefined }> = [];
  const rawOf = (signedJson: unknown) => {
    const raw = (signedJson as Record<string, unknown> | null)?.raw;
    return typeof raw === 'string' ? raw : undefined;
  };
  for (const a of await ctx.db.selectFrom('payout_attempts').select(['refund_id', 'network', 'tx_hash', 'signed']).execute())
    attempts.push({
      key: objectKey('refund_payout', a.refund_id),
      what: `refund ${a.refund_id}`,
      network: a.network,
      txHash: a.tx_hash,
      raw: rawOf(a.signed),
    });
  for (const a of await ctx.db
    .selectFrom('subscription_charge_attempts as a')
    .innerJoin('subscription_charges as c', 'c.id', 'a.charge_id')
    .select(['a.charge_id', 'c.network', 'a.tx_hash', 'a.signed'])
    .execute())
    attempts.push({
      key: objectKey('subscription_charge', String(a.charge_id)),
      what: `charge ${a.charge_id}`,
      network: a.network,
      txHash: a.tx_hash,
      raw: rawOf(a.signed),
    });
  for (const a of await ctx.db
    .selectFrom('sweep_step_attempts as a')
    .innerJoin('sweep_steps as s', 's.id', 'a.step_id')
    .select(['s.sweep_id', 'a.step_id', 'a.network', 'a.tx_hash', 'a.signed'])
    .execute())
    attempts.push({
      key: objectKey('sweep_step', a.sweep_id),
      what: `sweep ${a.sweep_id} step ${a.step_id}`,
      network: a.network,
      txHash: a.tx_hash,
      raw: rawOf(a.signed),
    });
  for (const a of await ctx.db.selectFrom('deposit_setup_attempts').select(['setup_id', 'network', 'tx_hash', 'signed']).execute())
    attempts.push({
      key: objectKey('deposit_setup', String(a.setup_id)),
      what: `deposit setup ${a.setup_id}`,
      network: a.network,
      txHash: a.tx_hash,
      raw: rawOf(a.signed),
    });

  for (const a of await ctx.db.selectFrom('gas_station_drain_attempts').select(['drain_id', 'network', 'tx_hash', 'signed']).execute())
    attempts.push({
      key: objectKey('gas_station_drain', String(a.drain_id)),
      what: `gas-station drain ${a.drain_id}`,
      network: a.network,
      txHash: a.tx_hash,
      raw: rawOf(a.signed),
    });

  for (const a of attempts) {
    const digests = signedFor.get(a.key);
    if (!digests) {
      v(a.txHash, `${a.what}: attempt ${a.txHash} on ${a.network}, and no signature of the signer for it`);
      continue;
    }
    let digest: string | undefined;
    if (a.network === 'tron') digest = hex(a.txHash);
    else if (a.network !== 'solana') {
      if (!a.raw) {
        v(a.txHash, `${a.what}: attempt ${a.txHash} on ${a.network} holds no raw transaction to check`);
        continue;
      }
      digest = hex(Transaction.from(a.raw).unsignedHash);
    }
    if (digest !== undefined && !digests.includes(digest))
      v(a.txHash, `${a.what}: attempt ${a.txHash} on ${a.network} is not a transaction the signer signed for it (digest 0x${digest})`);
  }
  return out;
};
