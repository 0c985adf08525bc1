import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { solanaPayTransferUrl, paymentReference } from '../../chains/solana/solana-pay.js';
import { tronPaymentLinks } from '../../chains/tron/payment-uri.js';
import type { ChainAdapter, ChainFamily, TokenContract } from '../../chains/types.js';

// Wallet deep links, one exhaustive switch per network family. Amounts come from base-unit bigints only.
// - EVM (Ethereum, BSC): EIP-681 `ethereum:<token>@<chainId>/transfer?address=<deposit>&uint256=<base units>`.
// - Solana: a Solana Pay transfer request (recipient = deposit owner, amount in token units, spl-token, reference).
// - TRON: no standard exists (chains/tron/payment-uri.ts): the QR holds the bare base58 address, which every TRON
//   wallet scans, and the link is `tron:<address>` without an amount (some wallets would read it as TRX); the page
//   shows the exact token amount and contract beside it.

export interface DeepLinkInput {
  adapter: ChainAdapter;
  token: TokenContract;
  /** Canonical deposit address (as stored). */
  depositAddress: string;
  amountBase: bigint;
  label: string;
}

const KNOWN_LIVE_CHAIN_IDS: Partial<Record<string, bigint>> = { ethereum: 1n, bsc: 56n };

/** Chain ids for EIP-681: configured, else the mainnet id in live mode, else asked from the node once. */
export class ChainIdResolver {
  readonly #cache = new Map<string, Promise<bigint>>();
  constructor(private readonly configured: ReadonlyMap<string, bigint> = new Map()) {}

  resolve(adapter: ChainAdapter): Promise<bigint> {
    const key = `${adapter.network}:${adapter.mode}`;
    const fixed = this.configured.get(key) ?? (adapter.mode === 'live' ? KNOWN_LIVE_CHAIN_IDS[adapter.network] : undefined);
    if (fixed !== undefined) return Promise.resolve(fixed);
    let p = this.#cache.get(key);
    if (!p) {
      if (!(adapter instanceof EvmChainAdapter)) return Promise.reject(new Error(`no chain id for ${key}`));
      p = adapter.rpc.call<string>('eth_chainId', []).then(BigInt);
      p.catch(() => this.#cache.delete(key));
      this.#cache.set(key, p);
    }
    return p;
  }
}

export interface WalletLink {
  /** The link the "open in wallet" button follows. */
  href: string;
  /** What the QR code encodes (the link itself, except on TRON). */
  qr: string;
}

export async function walletDeepLink(input: DeepLinkInput, chainIds: ChainIdResolver): Promise<WalletLink> {
  const { adapter, token } = input;
  const family: ChainFamily = adapter.family;
  const deposit = adapter.displayAddress(input.depositAddress);
  const contract = adapter.displayAddress(token.address);
  switch (family) {
    case 'evm': {
      const chainId = await chainIds.resolve(adapter);
      const href = `ethereum:${contract}@${chainId}/transfer?address=${deposit}&uint256=${input.amountBase}`;
      return { href, qr: href };
    }
    case 'solana': {
      const href = solanaPayTransferUrl({
        recipient: deposit,
        amount: input.amountBase,
        decimals: token.decimals,
        splToken: contract,
        references: [paymentReference(deposit)],
        label: input.label,
      });
      return { href, qr: href };
    }
    case 'tron': {
      const links = tronPaymentLinks({ address: input.depositAddress, tokenContract: token.address, amount: input.amountBase, decimals: token.decimals });
      return { href: links.uri, qr: links.address };
    }
    default: {
      const never: never = family;
      return never;
    }
  }
}
