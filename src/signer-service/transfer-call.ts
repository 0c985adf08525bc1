// The one call a refund payout makes: ERC-20/TRC-20 `transfer(address to, uint256 amount)`, read from calldata
// strictly: exactly the selector and two canonical 32-byte words (an address's upper 12 bytes zero), nothing after.

const TRANSFER_SELECTOR = 'a9059cbb'; // keccak256("transfer(address,uint256)")[0..4]

/** `to` as 20-byte lowercase hex without 0x; null when `data` is anything else than one transfer call. */
export function decodeTransferCall(data: string): { to: string; amount: bigint } | null {
  const d = data.replace(/^0x/i, '').toLowerCase();
  if (!/^[0-9a-f]*$/.test(d) || d.length !== 8 + 128 || !d.startsWith(TRANSFER_SELECTOR)) return null;
  const word1 = d.slice(8, 72);
  const word2 = d.slice(72, 136);
  if (!word1.startsWith('0'.repeat(24))) return null;
  return { to: word1.slice(24), amount: BigInt(`0x${word2}`) };
}

const TRANSFER_FROM_SELECTOR = '23b872dd'; // keccak256("transferFrom(address,address,uint256)")[0..4]

/** A subscription charge's call, `transferFrom(owner, to, amount)`, read as strictly; addresses as 20-byte hex. */
export function decodeTransferFromCall(data: string): { owner: string; to: string; amount: bigint } | null {
  const d = data.replace(/^0x/i, '').toLowerCase();
  if (!/^[0-9a-f]*$/.test(d) || d.length !== 8 + 192 || !d.startsWith(TRANSFER_FROM_SELECTOR)) return null;
  const [w1, w2, w3] = [d.slice(8, 72), d.slice(72, 136), d.slice(136, 200)];
  if (!w1.startsWith('0'.repeat(24)) || !w2.startsWith('0'.repeat(24))) return null;
  return { owner: w1.slice(24), to: w2.slice(24), amount: BigInt(`0x${w3}`) };
}
