import { TransferRejectedError, type TokenContract, type TokenRefusal } from '../types.js';
import { ERC20 } from '../evm/erc20-abi.js';
import { RpcError } from '../evm/rpc-errors.js';
import { readTokenRefusal, type ReadView } from '../tokens/token-views.js';
import { tronToEvmHex } from './address.js';
import { decodeNodeMessage, int64, type TriggerReply, type TronWalletApi } from './wallet-api.js';

// Reads through triggerconstantcontract: dry runs of a call (energy estimate, refusal), token balances and
// allowances, the token's optional views, and the token's reason for refusing a transfer.

export interface ConstantResult {
  ok: boolean;
  result: string;
  energy: bigint;
  message: string;
}

/** `data` called on `token` from `owner` without a transaction; `at: 'final'` reads solidified state. */
export async function constantCall(
  api: TronWalletApi,
  token: TokenContract,
  owner: string,
  data: string,
  at: 'latest' | 'final' = 'latest',
): Promise<ConstantResult> {
  const body = { owner_address: owner, contract_address: token.address, data: data.replace(/^0x/, ''), call_value: 0 };
  const r =
    at === 'final'
      ? await api.solidity<TriggerReply>('walletsolidity/triggerconstantcontract', body)
      : await api.full<TriggerReply>('wallet/triggerconstantcontract', body);
  if (r.Error) throw new RpcError('rpc_error', `triggerconstantcontract: ${r.Error}`);
  const failed = r.result?.result !== true || r.transaction?.ret?.some((x) => x.ret === 'FAILED') === true || !!r.result?.message;
  const message = decodeNodeMessage(r.result?.message) || r.result?.code || 'FAILED';
  return { ok: !failed, result: r.constant_result?.[0] ?? '', energy: int64(r.energy_used), message };
}

/** balanceOf(owner), in base units. `at: 'final'` reads solidified state (the solidity API): what a sweep plans from. */
export async function readTokenBalance(api: TronWalletApi, token: TokenContract, owner: string, at: 'latest' | 'final'): Promise<bigint> {
  const r = await constantCall(api, token, owner, ERC20.encodeFunctionData('balanceOf', [tronToEvmHex(owner)]), at);
  if (!r.ok) throw new TransferRejectedError('simulation_reverted', `balanceOf failed: ${r.message}`);
  return r.result === '' ? 0n : BigInt(`0x${r.result.slice(0, 64)}`);
}

/** allowance(owner, spender), in base units. `at: 'final'` reads solidified state (the solidity API), as authorizations are read. */
export async function readTokenAllowance(
  api: TronWalletApi,
  token: TokenContract,
  owner: string,
  spender: string,
  at: 'latest' | 'final',
): Promise<bigint> {
  const r = await constantCall(api, token, owner, ERC20.encodeFunctionData('allowance', [tronToEvmHex(owner), tronToEvmHex(spender)]), at);
  if (!r.ok) throw new RpcError('bad_response', `allowance failed: ${r.message}`);
  return r.result === '' ? 0n : BigInt(`0x${r.result.slice(0, 64)}`);
}

/** Optional views of `token` (paused, blacklists, fee) over triggerconstantcontract; null = no such view. */
export function tokenViews(api: TronWalletApi, token: TokenContract, caller: string): ReadView {
  return async (data) => {
    try {
      const r = await constantCall(api, token, caller, data);
      return r.ok && /^[0-9a-fA-F]{64,}$/.test(r.result) ? BigInt(`0x${r.result.slice(0, 64)}`) : null;
    } catch (e) {
      if (e instanceof RpcError && e.kind === 'rpc_error') return null;
      throw e;
    }
  };
}

/** The token's reason for refusing, parties in canonical TRON form. */
export function tokenRefusal(
  api: TronWalletApi,
  token: TokenContract,
  caller: string,
  p: { sender: string; recipient: string; spender?: string },
): Promise<TokenRefusal | null> {
  return readTokenRefusal(tokenViews(api, token, caller), {
    sender: tronToEvmHex(p.sender),
    recipient: tronToEvmHex(p.recipient),
    ...(p.spender !== undefined ? { spender: tronToEvmHex(p.spender) } : {}),
  });
}
