import { Interface } from 'ethers';

// The ERC-20 / TRC-20 calls the service makes, in one place for EVM and TRON. `transfer` and `transferFrom` declare
// no return value: Tether's return nothing, and an ABI with `returns (bool)` fails to decode on them. Success is
// judged from the receipt and the Transfer log, never from return data.
export const ERC20 = new Interface([
  'function transfer(address to, uint256 value)',
  'function transferFrom(address from, address to, uint256 value)',
  'function approve(address spender, uint256 value)',
  'function balanceOf(address who) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function decimals() view returns (uint8)',
]);
