import {
  TokenRegistryMismatchError,
  type ChainHead,
  type CursorState,
  type PollResult,
  type TokenContract,
  type WatchSet,
  type ObservedTransfer,
} from '../types.js';
import { BlockScanner, type ConfirmationPolicy } from '../evm/block-scanner.js';
import { encodeCursor } from '../evm/cursor.js';
import { ERC20 } from '../evm/erc20-abi.js';
import type { FailoverJsonRpc } from '../evm/failover-rpc.js';
import { evmHexToTron, tronBase58, tronToEvmHex } from './address.js';

// Deposit detection over java-tron's Ethereum-compatible JSON-RPC (`eth_getLogs`, `eth_blockNumber`,
// `eth_getBlockByNumber`, `finalized` = the solidified block). The EVM BlockScanner does all the work (adaptive
// ranges, parent-hash linkage, reorg rollback, cursor); this class only translates addresses at its edges:
//   in:  registry contracts `41...` -> `0x...` for the getLogs filter;
//   out: log addresses `0x...` -> canonical `41...` (from, to, tokenContract), tx hashes without `0x` (TRON's txID).

export interface TronTransferSourceOptions {
  rpc: FailoverJsonRpc;
  finalityQuorum?: number;
  /** Registry tokens with canonical `41...` addresses. */
  tokens: readonly TokenContract[];
  confirmation: ConfirmationPolicy;
  maxBlockRange: number;
  /** Expected eth_chainId (last 4 bytes of the genesis block id: mainnet 0x2b6653dc, Nile 0xcd8690dc). */
  chainId?: bigint;
}

export class TronTransferSource {
  readonly scanner: BlockScanner;
  readonly #o: TronTransferSourceOptions;
  readonly #byEvmHex: Map<string, TokenContract>;

  constructor(o: TronTransferSourceOptions) {
    this.#o = o;
    const evmTokens = o.tokens.map((t) => ({ ...t, address: tronToEvmHex(t.address) }));
    this.#byEvmHex = new Map(o.tokens.map((t) => [tronToEvmHex(t.address), t]));
    this.scanner = new BlockScanner({
      rpc: o.rpc,
      finalityQuorum: o.finalityQuorum,
      tokens: evmTokens,
      confirmation: o.confirmation,
      maxBlockRange: o.maxBlockRange,
      canonicalAddress: evmHexToTron,
    });
  }

  head(): Promise<ChainHead> {
    return this.scanner.head();
  }

  async initialCursor(startHeight?: bigint): Promise<CursorState> {
    return encodeCursor(await this.scanner.initialCursor(startHeight));
  }

  async poll(cursor: CursorState, watch: WatchSet): Promise<PollResult> {
    const r = await this.scanner.poll(cursor, watch);
    // TRON names a transaction by its txID (no 0x) and a token by its TRON address: incoming transfers and the outgoing
    // ones the journal checks against the service's own transactions alike.
    const tron = (t: ObservedTransfer): ObservedTransfer => {
      const token = this.#byEvmHex.get(t.tokenContract);
      if (!token) throw new Error(`scanner returned a transfer of unknown contract ${t.tokenContract}`);
      return { ...t, txHash: t.txHash.replace(/^0x/, ''), tokenContract: token.address };
    };
    return {
      ...r,
      transfers: r.transfers.map(tron),
      ...(r.outgoing ? { outgoing: r.outgoing.map(tron) } : {}),
    };
  }

  async verifyTokens(): Promise<void> {
    const rpc = this.#o.rpc;
    if (this.#o.chainId !== undefined) {
      const actual = BigInt(await rpc.call<string>('eth_chainId', []));
      if (actual !== this.#o.chainId)
        throw new TokenRegistryMismatchError(`tron: RPC chain id 0x${actual.toString(16)}, expected 0x${this.#o.chainId.toString(16)}`);
    }
    for (const t of this.#o.tokens) {
      const at = tronToEvmHex(t.address);
      const shown = tronBase58(t.address);
      const code = await rpc.call<string>('eth_getCode', [at, 'latest']);
      if (!code || code === '0x') throw new TokenRegistryMismatchError(`tron ${t.symbol}: no contract at ${shown}`);
      const raw = await rpc.call<string>('eth_call', [{ to: at, data: ERC20.encodeFunctionData('decimals') }, 'latest']);
      const onChain = Number(ERC20.decodeFunctionResult('decimals', raw)[0]);
      if (onChain !== t.decimals)
        throw new TokenRegistryMismatchError(`tron ${t.symbol} at ${shown}: decimals() is ${onChain}, registry says ${t.decimals}`);
    }
  }
}
