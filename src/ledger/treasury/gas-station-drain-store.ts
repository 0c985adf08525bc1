import type { Db } from '../../db/database.js';
import { GAS_STATION_DRAIN_ATTEMPTS, attemptOutboundStore } from '../outbound/attempt-store.js';
import type { OutboundStore } from '../outbound/outbound-store.js';
import { releaseNonceIfLastWith, takeNextNonce } from '../outbound/wallet-nonces.js';
import { drainById, lockProcessingDrain, type GasStationDrainRow } from './gas-station.js';

// Gas-station drains as outbound jobs: the gas_station_drains row (processing while it is sent) and its
// gas_station_drain_attempts, kept by the one attempt store (src/ledger/outbound/attempt-store.ts). The retired gas
// station signs with its own hot_wallet_nonces row, the one its sweep steps used, so a drain never reuses a nonce.

export function gasStationDrainStore(db: Db): OutboundStore<GasStationDrainRow> {
  return attemptOutboundStore(db, {
    attempts: GAS_STATION_DRAIN_ATTEMPTS,
    async claim(id) {
      const found = await drainById(db, id);
      if (!found) return { kind: 'done', status: 'missing' };
      if (found.status !== 'processing') return { kind: 'done', status: found.status };
      return { kind: 'job', job: found };
    },
    jobId: (drain) => drain.id,
    lock: (trx, drain) => lockProcessingDrain(trx, drain.id),
    chain: (locked) => ({ network: locked.network, mode: locked.mode }),
    nonces: { take: (trx, ref, chainNonce) => takeNextNonce(trx, ref, chainNonce), releaseIfLast: releaseNonceIfLastWith },
    burnt: (drain) => ({ kind: 'sweep', merchantId: null, object: { type: 'wallet', id: drain.from_address } }),
  });
}
