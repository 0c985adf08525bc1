import type { KeyPath, SweepRequest, SweepStep, SweepStepPurpose } from '../../chains/types.js';
import type { TokenSymbol } from '../../chains/vocabulary.js';

// SweepRequest and SweepStep as the JSON the sweeps tables store (bigints as decimal strings), and back. A sweep is
// rebuilt from these after any crash, so the round trip is exact.

type Json = Record<string, unknown>;

export function requestToJson(r: SweepRequest): Json {
  return {
    token: r.token,
    destination: r.destination,
    ...(r.destinations ? { destinations: [...r.destinations] } : {}),
    gasStation: { key: r.gasStation.key, address: r.gasStation.address },
    ...(r.resources ? { resources: { key: r.resources.key, address: r.resources.address } } : {}),
    sources: r.sources.map((s) => ({ key: s.key, address: s.address, amount: s.amount.toString() })),
  };
}

export function requestFromJson(j: Json): SweepRequest {
  const w = (x: unknown) => {
    const o = x as { key: KeyPath; address: string };
    return { key: o.key, address: o.address };
  };
  const sources = (j['sources'] as Array<{ key: KeyPath; address: string; amount: string }>).map((s) => ({
    key: s.key,
    address: s.address,
    amount: BigInt(s.amount),
  }));
  return {
    token: j['token'] as TokenSymbol,
    destination: j['destination'] as string,
    ...(j['destinations'] ? { destinations: [...(j['destinations'] as string[])] } : {}),
    gasStation: w(j['gasStation']),
    ...(j['resources'] ? { resources: w(j['resources']) } : {}),
    sources,
  };
}

export function stepToJson(s: SweepStep): Json {
  return {
    group: s.group,
    purpose: s.purpose,
    from: { key: s.from.key, address: s.from.address },
    to: s.to,
    sources: s.sources,
    value: s.value.toString(),
    params: s.params,
    estimatedFee: s.estimatedFee.toString(),
  };
}

export function stepFromJson(j: Json): SweepStep {
  const from = j['from'] as { key: KeyPath; address: string };
  return {
    group: j['group'] as number,
    purpose: j['purpose'] as SweepStepPurpose,
    from: { key: from.key, address: from.address },
    to: j['to'] as string,
    sources: j['sources'] as string[],
    value: BigInt(j['value'] as string),
    params: j['params'] as Record<string, string>,
    estimatedFee: BigInt(j['estimatedFee'] as string),
  };
}
