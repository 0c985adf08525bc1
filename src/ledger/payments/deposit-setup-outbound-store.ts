import type { Db } from '../../db/database.js';
import type { OutboundStore } from '../outbound/outbound-store.js';
import { DEPOSIT_SETUP_ATTEMPTS, attemptOutboundStore } from '../outbound/attempt-store.js';
import { depositSetupById, lockProcessingSetup, type DepositSetupRow } from './deposit-setups.js';

// Deposit setups as outbound jobs: the deposit_setups row (processing while it is sent) and its deposit_setup_attempts,
// kept by the one attempt store (src/ledger/outbound/attempt-store.ts). Solana has no account nonces: a setup is bound to a
// recent blockhash instead, and re-signed only once the engine has proven every attempt expired (docs/outbound.md).
// No nonce calls: the store refuses them, and gives no nonce back (the same bytes are offered until they land or are
// proven expired).

export function depositSetupOutboundStore(db: Db): OutboundStore<DepositSetupRow> {
  return attemptOutboundStore(db, {
    attempts: DEPOSIT_SETUP_ATTEMPTS,
    async claim(id) {
      const found = await depositSetupById(db, id);
      if (!found) return { kind: 'done', status: 'missing' };
      if (found.status !== 'processing') return { kind: 'done', status: found.status };
      return { kind: 'job', job: found };
    },
    jobId: (setup) => setup.id,
    lock: (trx, setup) => lockProcessingSetup(trx, setup.id),
    chain: (locked) => ({ network: locked.network, mode: locked.mode }),
    burnt: (setup) => ({
      kind: 'deposit_setup',
      merchantId: setup.merchant_id,
      sessionId: setup.session_id,
      object: { type: 'session', id: setup.session_id },
    }),
  });
}
