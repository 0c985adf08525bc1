import { TransferRejectedError, type TokenContract } from '../types.js';
import { ERC20 } from '../evm/erc20-abi.js';
import { RpcError } from '../evm/rpc-errors.js';
import { tronBase58, tronToEvmHex } from './address.js';
import { TRIGGER_SMART_CONTRACT_TYPE, type decodeTriggerRawData } from './protobuf.js';
import type { TransactionJson, TronWalletApi } from './wallet-api.js';

// The TRC-20 calls the sender builds, the node building one (triggersmartcontract), and the check that a transaction
// the node built is exactly the call asked for.

/** One TRC-20 call the sender builds: tronweb's function selector and typed parameters, and the ABI data they encode to. */
export interface TokenCall {
  selector: string;
  params: Array<{ type: 'address' | 'uint256'; value: string }>;
  data: string;
}

/** `name(address..., uint256)`: the shape of every call the sender builds. */
function tokenCall(name: 'transfer' | 'transferFrom' | 'approve', addresses: string[], amount: bigint): TokenCall {
  return {
    selector: `${name}(${[...addresses.map(() => 'address'), 'uint256'].join(',')})`,
    params: [...addresses.map((a) => ({ type: 'address' as const, value: tronBase58(a) })), { type: 'uint256', value: amount.toString() }],
    data: ERC20.encodeFunctionData(name, [...addresses.map(tronToEvmHex), amount]),
  };
}

export function transferCall(to: string, amount: bigint): TokenCall {
  return tokenCall('transfer', [to], amount);
}

export function transferFromCall(owner: string, to: string, amount: bigint): TokenCall {
  return tokenCall('transferFrom', [owner, to], amount);
}

export function approveCall(spender: string, amount: bigint): TokenCall {
  return tokenCall('approve', [spender], amount);
}

/** The node builds the transaction; tronweb checks raw_data_hex against our arguments (txCheckWithArgs). */
export async function triggerCall(
  api: TronWalletApi,
  token: TokenContract,
  owner: string,
  call: TokenCall,
  feeLimit: bigint,
): Promise<TransactionJson> {
  const built = (await api.tronWeb.transactionBuilder
    .triggerSmartContract(
      tronBase58(token.address),
      call.selector,
      { feeLimit: Number(feeLimit), callValue: 0 },
      call.params,
      tronBase58(owner),
    )
    .catch((e: unknown) => {
      if (e instanceof Error && /REVERT|validate|balance/i.test(e.message))
        throw new TransferRejectedError('simulation_reverted', e.message);
      throw new RpcError('unavailable', `triggersmartcontract: ${(e as Error).message ?? String(e)}`);
    })) as { result?: { result?: boolean }; transaction?: TransactionJson };
  const tx = built.transaction;
  if (!built.result?.result || !tx) throw new RpcError('bad_response', 'triggersmartcontract returned no transaction');
  return tx;
}

/** One TriggerSmartContract from `owner` to the token, no TRX attached, exactly `call`'s data, the fee_limit computed. */
export function callMatches(
  raw: ReturnType<typeof decodeTriggerRawData>,
  owner: string,
  token: TokenContract,
  call: TokenCall,
  feeLimit: bigint,
): boolean {
  return (
    raw.contractCount === 1 &&
    raw.contractType === TRIGGER_SMART_CONTRACT_TYPE &&
    raw.owner === owner &&
    raw.contract === token.address &&
    raw.callValue === 0n &&
    raw.data === call.data.slice(2).toLowerCase() &&
    raw.feeLimit === feeLimit
  );
}
