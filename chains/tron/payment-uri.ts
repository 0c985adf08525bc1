import { tronBase58 } from './address.js';

// What the hosted page offers a TRON payer. Findings (docs/tron.md, "Deep link"):
// - No TRON standard defines a payment URI. TIP-17 is the Adaptive Energy Limit Model, not a URI scheme, although
//   some integrations cite it for `tron:<address>?amount=<n>`.
// - TronLink's documented deep links (`tronlinkoutside://pull.activity?param=<json>`) need a whitelisted DApp and a
//   logged-in `from` address; they are not a scan-to-pay request.
// - Every TRON wallet scans a QR holding the bare base58 address. `tron:<address>` is accepted by several wallets;
//   an `amount` there is read by some as TRX, not USDT, which would make a payer send the wrong asset.
// So: the QR holds the bare address (works everywhere), the page shows the exact token amount and contract to copy,
// and a `tron:` link without amount is offered as a convenience. `withAmount` exists for wallets an operator has
// verified to read `token`; it is off by default.

export interface TronPaymentRequest {
  /** Canonical `41...` deposit address. */
  address: string;
  /** Canonical `41...` token contract. */
  tokenContract: string;
  amount: bigint;
  decimals: number;
}

export interface TronPaymentLinks {
  /** Base58 `T...`: the QR content and the text to copy. */
  address: string;
  /** Exact amount in token units, plain decimal (no exponent, trailing zeros removed). */
  amount: string;
  tokenContract: string;
  /** `tron:T...` (no amount unless asked). */
  uri: string;
}

export function formatTokenAmount(amount: bigint, decimals: number): string {
  if (amount < 0n) throw new RangeError('negative amount');
  const base = 10n ** BigInt(decimals);
  const frac = (amount % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return frac ? `${amount / base}.${frac}` : `${amount / base}`;
}

export function tronPaymentLinks(req: TronPaymentRequest, o: { withAmount?: boolean } = {}): TronPaymentLinks {
  const address = tronBase58(req.address);
  const tokenContract = tronBase58(req.tokenContract);
  const amount = formatTokenAmount(req.amount, req.decimals);
  const uri = o.withAmount ? `tron:${address}?${new URLSearchParams({ amount, token: tokenContract }).toString()}` : `tron:${address}`;
  return { address, amount, tokenContract, uri };
}
