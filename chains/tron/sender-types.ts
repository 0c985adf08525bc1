import type { NetworkId, TokenContract } from '../types.js';
import type { SystemContractName } from './system-contracts.js';
import type { TransactionJson, TronWalletApi } from './wallet-api.js';

export interface TronSenderOptions {
  /** The network it sends on (the adapter's); default the registry's TRON network. */
  network?: NetworkId;
  api: TronWalletApi;
  tokens: readonly TokenContract[];
  /** Upper bound on fee_limit (sun): a payout whose estimate needs more is refused before signing. */
  feeLimitCeilingSun: bigint;
  /** Head-room added to the energy estimate, in percent (dynamic energy penalty, state changes before inclusion). */
  energyMarginPercent: number;
  /** Wait past expiration (ms of solidified block time) before a transaction not found counts as proven absent. */
  expirySafetyMs?: number;
}

/** What build() hands to sign(): the node's transaction plus the numbers behind its fee_limit. */
export interface TronTxBody {
  transaction: Pick<TransactionJson, 'txID' | 'raw_data_hex'> & { raw_data: TransactionJson['raw_data'] };
  /** Set on a charge: the owner whose tokens `transferFrom(owner, to, amount)` moves (absent: `transfer(to, amount)`). */
  transferFromOwner?: string;
  energyEstimate: string;
  feeLimit: string;
  trxBurnEstimateSun: string;
  /**
   * Set on a sweep's system transaction (sweep-*.ts): the contract the node was asked to build, which sign() checks
   * against the request: `from` the owner, `to` the recipient / receiver, `amount` the TRX (sun) sent or delegated.
   */
  system?: { contract: Exclude<SystemContractName, 'FreezeBalanceV2Contract'> };
}
