import { Interface } from 'ethers';
import {
  TokenRegistryMismatchError,
  type ChainAdapter,
  type ChainFamily,
  type ChainHead,
  type CursorState,
  type AddressBalances,
  type KeyDeriver,
  type KeyPath,
  type Mode,
  type NetworkId,
  type PollResult,
  type SignedTransfer,
  type TokenContract,
  type TokenTransferRequest,
  type TxSigner,
  type UnsignedTransfer,
  type WatchSet,
} from '../types.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, CHANGE_HOT_WALLET, addressPath } from '../hd/bip44.js';
import { checksumEvmAddress, evmAddressFromPublicKey, normalizeEvmAddress } from './address.js';
import { BlockScanner, type ConfirmationPolicy } from './block-scanner.js';
import { encodeCursor } from './cursor.js';
import { JsonRpcClient } from './rpc-client.js';
import { EvmTokenSender } from './token-sender.js';

export interface EvmAdapterOptions {
  network: NetworkId;
  mode: Mode;
  rpcUrl: string;
  rpcTimeoutMs?: number;
  /** Expected eth_chainId; checked by verifyTokens when set. */
  chainId?: bigint;
  tokens: readonly TokenContract[];
  confirmation: ConfirmationPolicy;
  maxBlockRange?: number;
}

const DECIMALS_ABI = new Interface(['function decimals() view returns (uint8)']);
const BALANCE_ABI = new Interface(['function balanceOf(address) view returns (uint256)']);

/** Ethereum and BSC (and any EVM chain): one class, per-chain numbers from configuration. */
export class EvmChainAdapter implements ChainAdapter {
  readonly family: ChainFamily = 'evm';
  readonly network: NetworkId;
  readonly mode: Mode;
  readonly tokens: readonly TokenContract[];
  readonly rpc: JsonRpcClient;
  readonly scanner: BlockScanner;
  readonly #sender: EvmTokenSender;
  readonly #chainId: bigint | undefined;

  constructor(o: EvmAdapterOptions) {
    this.network = o.network;
    this.mode = o.mode;
    this.tokens = o.tokens.map((t) => {
      const address = normalizeEvmAddress(t.address);
      if (!address) throw new Error(`${o.network}: bad ${t.symbol} contract address ${t.address}`);
      return { ...t, address };
    });
    this.rpc = new JsonRpcClient({ url: o.rpcUrl, timeoutMs: o.rpcTimeoutMs ?? 10_000 });
    this.scanner = new BlockScanner({ rpc: this.rpc, tokens: this.tokens, confirmation: o.confirmation, maxBlockRange: o.maxBlockRange ?? 1000 });
    this.#sender = new EvmTokenSender(o.network, this.rpc, this.tokens, () => this.scanner.head());
    this.#chainId = o.chainId;
  }

  normalizeAddress(text: string): string | null {
    return normalizeEvmAddress(text);
  }

  displayAddress(canonical: string): string {
    return checksumEvmAddress(canonical);
  }

  async deriveDepositAddress(keys: KeyDeriver, account: number, index: bigint): Promise<string> {
    const pub = await keys.publicKey({ curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, account, CHANGE_DEPOSIT, index) });
    return evmAddressFromPublicKey(pub);
  }

  async deriveHotWallet(keys: KeyDeriver, account: number, slot: number): Promise<{ key: KeyPath; address: string }> {
    const key: KeyPath = { curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, account, CHANGE_HOT_WALLET, slot) };
    return { key, address: evmAddressFromPublicKey(await keys.publicKey(key)) };
  }

  async getAccountNonce(address: string): Promise<bigint> {
    return BigInt(await this.rpc.call<string>('eth_getTransactionCount', [address, 'pending']));
  }

  /** EVM transactions never expire: a signed transaction stays valid until its nonce is used. */
  async isExpired(): Promise<boolean> {
    return false;
  }

  async getBalances(address: string): Promise<AddressBalances> {
    const native = BigInt(await this.rpc.call<string>('eth_getBalance', [address, 'latest']));
    const tokens: AddressBalances['tokens'] = {};
    for (const t of this.tokens) {
      const raw = await this.rpc.call<string>('eth_call', [{ to: t.address, data: BALANCE_ABI.encodeFunctionData('balanceOf', [address]) }, 'latest']);
      tokens[t.symbol] = BigInt(BALANCE_ABI.decodeFunctionResult('balanceOf', raw)[0]);
    }
    return { native, tokens };
  }

  async getHead(): Promise<ChainHead> {
    return this.scanner.head();
  }

  async initialCursor(startHeight?: bigint): Promise<CursorState> {
    return encodeCursor(await this.scanner.initialCursor(startHeight));
  }

  pollTransfers(cursor: CursorState, watch: WatchSet): Promise<PollResult> {
    return this.scanner.poll(cursor, watch);
  }

  async verifyTokens(): Promise<void> {
    if (this.#chainId !== undefined) {
      const actual = BigInt(await this.rpc.call<string>('eth_chainId', []));
      if (actual !== this.#chainId) throw new TokenRegistryMismatchError(`${this.network}: RPC chain id ${actual}, expected ${this.#chainId}`);
    }
    for (const t of this.tokens) {
      const code = await this.rpc.call<string>('eth_getCode', [t.address, 'latest']);
      if (code === '0x') throw new TokenRegistryMismatchError(`${this.network} ${t.symbol}: no contract at ${t.address}`);
      const raw = await this.rpc.call<string>('eth_call', [{ to: t.address, data: DECIMALS_ABI.encodeFunctionData('decimals') }, 'latest']);
      const onChain = Number(DECIMALS_ABI.decodeFunctionResult('decimals', raw)[0]);
      if (onChain !== t.decimals) {
        throw new TokenRegistryMismatchError(`${this.network} ${t.symbol} at ${t.address}: decimals() is ${onChain}, registry says ${t.decimals}`);
      }
    }
  }

  buildTokenTransfer(request: TokenTransferRequest): Promise<UnsignedTransfer> {
    return this.#sender.build(request);
  }

  signTransfer(unsigned: UnsignedTransfer, signer: TxSigner): Promise<SignedTransfer> {
    return this.#sender.sign(unsigned, signer);
  }

  broadcast(signed: SignedTransfer) {
    return this.#sender.broadcast(signed);
  }

  getTransactionOutcome(hash: string) {
    return this.#sender.outcome(hash);
  }
}
