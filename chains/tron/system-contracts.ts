import { getBytes, hexlify } from 'ethers';
import { lenField, readFields, varintField, type Field } from './protobuf.js';

// The TRON system contracts a sweep signs besides TriggerSmartContract, by hand like protobuf.ts (java-tron's
// Tron.proto / balance_contract.proto): TransferContract { owner_address = 1, to_address = 2, amount = 3 } (type 1),
// FreezeBalanceV2Contract { owner_address = 1, frozen_balance = 2, resource = 3 } (54), DelegateResourceContract
// { owner_address = 1, resource = 2, balance = 3, receiver_address = 4, lock = 5, lock_period = 6 } (57) and
// UnDelegateResourceContract { owner_address = 1, resource = 2, balance = 3, receiver_address = 4 } (58).
// ResourceCode: BANDWIDTH = 0, ENERGY = 1. The adapter decodes what the node built before signing it.

export const SYSTEM_CONTRACTS = {
  TransferContract: 1,
  FreezeBalanceV2Contract: 54,
  DelegateResourceContract: 57,
  UnDelegateResourceContract: 58,
} as const;
export type SystemContractName = keyof typeof SYSTEM_CONTRACTS;
export type ResourceCode = 'BANDWIDTH' | 'ENERGY';

/** One system contract's fields, normalised: `to` = to_address / receiver_address, `amount` = amount / balance / frozen_balance. */
export interface SystemContractValue {
  name: SystemContractName;
  owner: string;
  to: string;
  amount: bigint;
  resource: ResourceCode;
  lock: boolean;
  lockPeriod: bigint;
}

export interface SystemRawData extends SystemContractValue {
  refBlockBytes: string;
  refBlockHash: string;
  expiration: bigint;
  timestamp: bigint;
  feeLimit: bigint;
  contractCount: number;
}

const hex = (b: Uint8Array | undefined): string => (b ? hexlify(b).slice(2) : '');
const first = (fs: Field[], no: number) => fs.find((f) => f.no === no);
const typeUrl = (name: SystemContractName) => `type.googleapis.com/protocol.${name}`;

/** The contract type number of a Transaction.raw's first contract (31 = TriggerSmartContract). */
export function contractTypeOf(rawDataHex: string): number {
  const c = readFields(getBytes(`0x${rawDataHex.replace(/^0x/, '')}`)).find((f) => f.no === 11);
  if (!c?.bytes) throw new Error('transaction has no contract');
  return Number(first(readFields(c.bytes), 1)?.varint ?? 0n);
}

/** Decodes a Transaction.raw carrying one of SYSTEM_CONTRACTS. Throws on any other contract. */
export function decodeSystemRawData(rawDataHex: string): SystemRawData {
  const raw = readFields(getBytes(`0x${rawDataHex.replace(/^0x/, '')}`));
  const contracts = raw.filter((f) => f.no === 11);
  const c = contracts[0];
  if (!c?.bytes) throw new Error('transaction has no contract');
  const cf = readFields(c.bytes);
  const type = Number(first(cf, 1)?.varint ?? 0n);
  const name = (Object.keys(SYSTEM_CONTRACTS) as SystemContractName[]).find((k) => SYSTEM_CONTRACTS[k] === type);
  if (!name) throw new Error(`contract type ${type} is not a system contract this service builds`);
  const any = readFields(first(cf, 2)?.bytes ?? new Uint8Array());
  const url = new TextDecoder().decode(first(any, 1)?.bytes ?? new Uint8Array());
  if (url !== typeUrl(name)) throw new Error(`contract type ${type} carries ${url}`);
  const v = readFields(first(any, 2)?.bytes ?? new Uint8Array());
  const value: SystemContractValue = {
    name,
    owner: hex(first(v, 1)?.bytes),
    to: '',
    amount: 0n,
    resource: 'BANDWIDTH',
    lock: false,
    lockPeriod: 0n,
  };
  if (name === 'TransferContract') {
    value.to = hex(first(v, 2)?.bytes);
    value.amount = first(v, 3)?.varint ?? 0n;
  } else if (name === 'FreezeBalanceV2Contract') {
    value.amount = first(v, 2)?.varint ?? 0n;
    value.resource = (first(v, 3)?.varint ?? 0n) === 1n ? 'ENERGY' : 'BANDWIDTH';
  } else {
    value.resource = (first(v, 2)?.varint ?? 0n) === 1n ? 'ENERGY' : 'BANDWIDTH';
    value.amount = first(v, 3)?.varint ?? 0n;
    value.to = hex(first(v, 4)?.bytes);
    value.lock = (first(v, 5)?.varint ?? 0n) !== 0n;
    value.lockPeriod = first(v, 6)?.varint ?? 0n;
  }
  return {
    ...value,
    refBlockBytes: hex(first(raw, 1)?.bytes),
    refBlockHash: hex(first(raw, 4)?.bytes),
    expiration: first(raw, 8)?.varint ?? 0n,
    timestamp: first(raw, 14)?.varint ?? 0n,
    feeLimit: first(raw, 18)?.varint ?? 0n,
    contractCount: contracts.length,
  };
}

/** Serialises a Transaction.raw with one system contract, fields in number order as java-tron writes them. */
export function encodeSystemRawData(r: Omit<SystemRawData, 'contractCount' | 'feeLimit' | 'lockPeriod'> & { lockPeriod?: bigint }): string {
  const b = (h: string) => getBytes(`0x${h}`);
  const res = r.resource === 'ENERGY' ? 1n : 0n;
  let value: number[];
  if (r.name === 'TransferContract') value = [...lenField(1, b(r.owner)), ...lenField(2, b(r.to)), ...varintField(3, r.amount)];
  else if (r.name === 'FreezeBalanceV2Contract') value = [...lenField(1, b(r.owner)), ...varintField(2, r.amount), ...varintField(3, res)];
  else
    value = [
      ...lenField(1, b(r.owner)),
      ...varintField(2, res),
      ...varintField(3, r.amount),
      ...lenField(4, b(r.to)),
      ...(r.name === 'DelegateResourceContract' ? [...varintField(5, r.lock ? 1n : 0n), ...varintField(6, r.lockPeriod ?? 0n)] : []),
    ];
  const any = [...lenField(1, new TextEncoder().encode(typeUrl(r.name))), ...lenField(2, Uint8Array.from(value))];
  const contract = [...varintField(1, BigInt(SYSTEM_CONTRACTS[r.name])), ...lenField(2, Uint8Array.from(any))];
  const raw = [
    ...lenField(1, b(r.refBlockBytes)),
    ...lenField(4, b(r.refBlockHash)),
    ...varintField(8, r.expiration),
    ...lenField(11, Uint8Array.from(contract)),
    ...varintField(14, r.timestamp),
  ];
  return hexlify(Uint8Array.from(raw)).slice(2);
}

/**
 * A sun amount as java-tron's JSON number. The wallet API reads int64 fields as JSON numbers; a bigint beyond 2^53 would
 * lose units silently in a JS number, so it is refused (no real transfer, stake or delegation comes near it).
 */
export function sunJson(v: bigint): number {
  if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`sun amount ${v} is outside the JSON-safe range`);
  return Number(v);
}

/** java-tron's JSON of a system contract's `parameter.value` (visible=false: hex addresses, zero fields omitted). */
export function systemValueJson(v: SystemContractValue): Record<string, unknown> {
  const out: Record<string, unknown> = { owner_address: v.owner };
  if (v.name === 'TransferContract') {
    out.to_address = v.to;
    out.amount = sunJson(v.amount);
  } else if (v.name === 'FreezeBalanceV2Contract') {
    out.frozen_balance = sunJson(v.amount);
    if (v.resource === 'ENERGY') out.resource = 'ENERGY';
  } else {
    if (v.resource === 'ENERGY') out.resource = 'ENERGY';
    out.balance = sunJson(v.amount);
    out.receiver_address = v.to;
    if (v.lock) out.lock = true;
    if (v.lockPeriod > 0n) out.lock_period = Number(v.lockPeriod);
  }
  return out;
}
