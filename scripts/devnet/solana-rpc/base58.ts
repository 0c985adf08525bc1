// The fake validator speaks the same base58 as the adapter: one implementation (chains/solana/base58.ts).
import { base58Decode, base58Encode } from '../../../chains/solana/base58.js';

export default { encode: base58Encode, decode: base58Decode };
