import type { PayerChain } from './chain.js';
import { minorToBase, show, type RunAmounts } from './amounts.js';
import { redactUrl, type Profile, type TokenSpec } from './profiles.js';
import type { StepContext } from './report.js';
import { StepFailure } from './report.js';

// Everything the run needs, checked before it sends anything: the first missing prerequisite stops the run with one
// line saying what is wrong and what to do. Reads only.

export interface PreflightInput {
  profile: Profile;
  token: TokenSpec;
  chain: PayerChain;
  amounts: RunAmounts;
  serviceUrl: string;
  /** Whether the run funds the merchant's hot wallet and charger (a merchant it creates) or not (an existing one). */
  funds: boolean;
}

export async function preflight(i: PreflightInput, s: StepContext): Promise<string> {
  const { profile, token, chain } = i;
  const rpc = redactUrl(profile.rpcUrl);
  const stop = (line: string): never => {
    throw new StepFailure(line);
  };

  // 1. The RPC answers, and is the chain this profile is about.
  let id;
  try {
    id = await chain.identity();
  } catch (err) {
    return stop(`RPC ${rpc} unreachable: ${(err as Error).message.split('\n')[0]}`);
  }
  s.data.chain = id.value;
  if (profile.chainId !== null && BigInt(id.value) !== profile.chainId) {
    return stop(`RPC ${rpc} is chain ${id.value} (${id.method}), not ${profile.title} (${profile.chainId}); set ${profile.rpcEnv}`);
  }
  if (profile.genesisHash !== null && id.value !== profile.genesisHash) {
    return stop(`RPC ${rpc} has genesis hash ${id.value}, not ${profile.title}'s ${profile.genesisHash}; set ${profile.rpcEnv}`);
  }
  s.note(`chain: ${id.value} (${id.method})`);

  // 2. The token contract (mint) exists and states the configured decimals.
  const decimals = await chain.tokenDecimals(token);
  if (decimals === null)
    return stop(`no ${token.symbol} contract at ${token.address} on ${profile.title}; set ${profile.envPrefix}_${token.symbol}`);
  if (decimals !== token.decimals) {
    return stop(
      `${token.symbol} at ${token.address} has ${decimals} decimals, configured ${token.decimals}; set ${profile.envPrefix}_${token.symbol}_DECIMALS`,
    );
  }
  s.note(`${token.symbol}: ${token.address}, ${decimals} decimals`);

  // 3. The payer holds enough gas and token for every transfer of the run.
  // The merchant's hot wallet and charger, and the operator's gas station (sweep fees), each get fundGas.
  const gasNeeded = profile.feeReserve + (i.funds ? 3n * profile.fundGas : 0n);
  const gas = await chain.nativeBalance(chain.payer);
  s.data.payer = chain.payer;
  s.data.payer_native = show(gas, profile.native.decimals, profile.native.symbol);
  if (gas < gasNeeded) {
    return stop(
      `payer ${chain.payer} holds ${show(gas, profile.native.decimals, profile.native.symbol)}, needs ${show(gasNeeded, profile.native.decimals, profile.native.symbol)}: get some at ${profile.native.faucet}`,
    );
  }
  const { sessionMinor, refundMinor, subscriptionMinor } = i.amounts;
  const tokenNeeded = minorToBase(sessionMinor + subscriptionMinor + (i.funds ? refundMinor : 0n), token.decimals);
  const held = await chain.tokenBalance(token, chain.payer);
  s.data.payer_token = show(held, token.decimals, token.symbol);
  if (held < tokenNeeded) {
    return stop(
      `payer ${chain.payer} holds ${show(held, token.decimals, token.symbol)}, needs ${show(tokenNeeded, token.decimals, token.symbol)}: get some at ${token.faucet}`,
    );
  }
  s.note(`payer ${chain.payer}: ${s.data.payer_native}, ${s.data.payer_token}`);

  // 4. The service is up and ready (database and Redis reachable).
  let ready: Response;
  try {
    ready = await fetch(`${i.serviceUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    return stop(`service ${i.serviceUrl} unreachable (${(err as Error).message}); start it (npm start) or set SERVICE_URL`);
  }
  if (ready.status !== 200)
    return stop(`service ${i.serviceUrl} is not ready: /readyz answered ${ready.status} ${(await ready.text()).slice(0, 200)}`);
  return `${profile.title} reachable, ${token.symbol} as configured, payer funded, service ready`;
}
