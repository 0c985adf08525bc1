import { lookalikeTokens, type LookalikeSetting, type TokenSetting } from '../../chains/tokens/registry.js';
import { TOKEN_SYMBOLS, type ChainFamily, type Mode, type NetworkId } from '../../chains/types.js';

// CHAIN_<NET>_<MODE>_LOOKALIKE_CONTRACTS (docs/chains.md "Look-alike tokens"): bridged or fake copies of the settlement
// tokens whose transfers to a deposit address are recorded as unmatched deposits of an unsupported token, never
// credited. The network registry lists the known ones of live networks; test networks (and local chains) have none, so
// configuration adds them: `SYMBOL:0xADDRESS:DECIMALS`, comma-separated, e.g. `USDC.e:0xFF97...5CC8:6,USDbC:0xd9aA...b6CA:6`.
// Merged with the registry's (a configured address replaces the registry's entry at that address).

const ENTRY = /^([^:,]{1,32}):(0x[0-9a-fA-F]{40}):(\d{1,2})$/;

export function lookalikeSettings(
  env: Record<string, string | undefined>,
  name: string,
  chain: { network: NetworkId; mode: Mode; family: ChainFamily; tokens: readonly TokenSetting[] },
): LookalikeSetting[] {
  const out = new Map<string, LookalikeSetting>();
  for (const l of lookalikeTokens(chain.network, chain.mode)) out.set(l.address.toLowerCase(), l);
  const raw = env[name]?.trim();
  if (!raw) return [...out.values()];
  if (chain.family !== 'evm') throw new Error(`${name}: look-alike contracts are watched on EVM networks only`);
  const tokens = new Set(chain.tokens.map((t) => t.address.toLowerCase()));
  const configured = new Set<string>();
  for (const part of raw.split(',')) {
    const text = part.trim();
    const m = ENTRY.exec(text);
    if (!m) throw new Error(`${name}: "${text}" is not SYMBOL:0xADDRESS:DECIMALS (comma-separated entries)`);
    const symbol = m[1]!.trim();
    const address = m[2]!.toLowerCase();
    const decimals = Number(m[3]);
    if (symbol === '') throw new Error(`${name}: "${text}" has an empty symbol`);
    if ((TOKEN_SYMBOLS as readonly string[]).includes(symbol.toUpperCase()))
      throw new Error(`${name}: a look-alike is named as operators should see it, never ${symbol} (e.g. USDC.e, USDbC)`);
    if (decimals > 36) throw new Error(`${name}: ${symbol} decimals must be an integer in 0..36`);
    if (tokens.has(address)) throw new Error(`${name}: ${address} is a settlement token's contract on this network`);
    if (configured.has(address)) throw new Error(`${name}: ${address} is listed twice`);
    configured.add(address);
    out.set(address, { symbol, address: m[2]!, decimals, note: `a look-alike configured in ${name}` });
  }
  return [...out.values()];
}
