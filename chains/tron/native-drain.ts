import { RpcError } from '../evm/rpc-errors.js';
import { TransferRejectedError, type UnsignedTransfer, type Wallet } from '../types.js';
import { normalizeTronAddress } from './address.js';
import { txIdOf } from './protobuf.js';
import { BandwidthBudget, SYSTEM_TX_BYTES, accountState, sweepChainParams } from './sweep-common.js';
import { decodeSystemRawData, sunJson } from './system-contracts.js';
import type { TronTokenSender, TronTxBody } from './token-sender.js';
import type { TransactionJson } from './wallet-api.js';

// The drain of a retired TRON gas station (docs/treasury.md, "Rotating the gas station"): one TransferContract, built
// by the node (wallet/createtransaction) and checked before it is handed out, of the station's whole TRX balance minus
// what the transfer burns: nothing when its staked or free daily bandwidth covers the ~300 bytes, else those bytes at
// getTransactionFee; and getCreateNewAccountFeeInSystemContract (plus getCreateAccountFee instead of bandwidth without
// a stake) when the new station is not yet an account. The burn is priced on SYSTEM_TX_BYTES (rounded up), so a
// burned-bandwidth drain leaves a few sun of dust. TRON has no nonce: the transaction is bound to a recent block and
// expires; the engine signs a new one only once the old is proven expired (isExpired). No fee bump applies.

export function createTronNativeDrain(sender: TronTokenSender) {
  return {
    async build(from: Wallet, to: string, _nonce: bigint | null, _feeBumpPercent: number): Promise<UnsignedTransfer<TronTxBody> | null> {
      const owner = normalizeTronAddress(from.address);
      const recipient = normalizeTronAddress(to);
      if (!owner || !recipient) throw new TransferRejectedError('invalid', 'a TRON drain names an address that is not TRON');
      const [p, st, dest] = await Promise.all([sweepChainParams(sender), accountState(sender, owner), accountState(sender, recipient)]);
      const bandwidth = new BandwidthBudget(st, p);
      const fee = dest.exists ? bandwidth.take(SYSTEM_TX_BYTES) : p.createNewAccountFeeSun + bandwidth.take(SYSTEM_TX_BYTES, true);
      const value = st.balanceSun - fee;
      // Not worth a transaction: less would arrive than it burns (or nothing at all).
      if (value <= 0n || value <= fee) return null;
      const tx = await sender.api.full<Partial<TransactionJson> & { Error?: string }>('wallet/createtransaction', {
        owner_address: owner,
        to_address: recipient,
        amount: sunJson(value),
      });
      if (tx.Error) throw new TransferRejectedError('invalid', `wallet/createtransaction: ${tx.Error}`);
      if (!tx.txID || !tx.raw_data_hex || !tx.raw_data)
        throw new RpcError('bad_response', 'wallet/createtransaction returned no transaction');
      const raw = decodeSystemRawData(tx.raw_data_hex);
      if (
        txIdOf(tx.raw_data_hex.toLowerCase()) !== tx.txID.toLowerCase() ||
        raw.contractCount !== 1 ||
        raw.name !== 'TransferContract' ||
        raw.owner !== owner ||
        raw.to !== recipient ||
        raw.amount !== value
      )
        throw new RpcError('bad_response', 'wallet/createtransaction built another transaction than the drain asked for');
      return {
        network: sender.network,
        // A native transfer: `token` only fills the request's shape (sign() checks the system contract against it).
        request: { from, to: recipient, token: 'USDT', amount: value },
        body: {
          transaction: { txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex },
          energyEstimate: '0',
          feeLimit: '0',
          trxBurnEstimateSun: fee.toString(),
          system: { contract: 'TransferContract' },
        },
      };
    },

    /** Sun the succeeded transaction `hash` sent to `to` (its TransferContract); 0 when it paid anyone else. */
    async read(hash: string, to: string): Promise<bigint | null> {
      if ((await sender.outcome(hash)).status !== 'succeeded') return null;
      const value = hash.replace(/^0x/, '').toLowerCase();
      const tx = await sender.api.full<Partial<TransactionJson>>('wallet/gettransactionbyid', { value });
      if (!tx.raw_data_hex) return null;
      const raw = decodeSystemRawData(tx.raw_data_hex);
      return raw.name === 'TransferContract' && raw.to === normalizeTronAddress(to) ? raw.amount : 0n;
    },
  };
}
