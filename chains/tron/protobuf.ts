import { getBytes, hexlify, sha256 } from 'ethers';

// The few protobuf messages of java-tron's `Tron.proto` this service reads and writes, by hand: Transaction
// { raw_data = 1, signature = 2 (repeated) }, Transaction.raw { ref_block_bytes = 1, ref_block_hash = 4,
// expiration = 8, data = 10, contract = 11 (repeated), timestamp = 14, fee_limit = 18 }, Transaction.Contract
// { type = 1, parameter = 2 (google.protobuf.Any { type_url = 1, value = 2 }) } and TriggerSmartContract
// { owner_address = 1, contract_address = 2, call_value = 3, data = 4 }.
// Why by hand: the adapter must check what it is about to sign independently of the node that built it, and the
// txID is sha256 over exactly these bytes (txID = sha256(raw_data_hex)). Unknown fields are skipped, never trusted.

export const TRIGGER_SMART_CONTRACT_TYPE = 31;
const TRIGGER_SMART_CONTRACT_URL = 'type.googleapis.com/protocol.TriggerSmartContract';

export interface TriggerRawData {
  refBlockBytes: string;
  refBlockHash: string;
  expiration: bigint;
  timestamp: bigint;
  feeLimit: bigint;
  contractType: number;
  typeUrl: string;
  owner: string;
  contract: string;
  callValue: bigint;
  data: string;
  /** Number of contracts in the transaction: exactly 1 for anything this service signs. */
  contractCount: number;
}

export type Field = { no: number; wire: number; varint?: bigint; bytes?: Uint8Array };

export function readFields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let shift = 0n;
    let v = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
      if (shift > 70n) throw new Error('protobuf: varint too long');
    }
  };
  while (i < buf.length) {
    const key = varint();
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new Error('protobuf: truncated field');
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`protobuf: unsupported wire type ${wire}`);
  }
  return out;
}

const hex = (b: Uint8Array | undefined): string => (b ? hexlify(b).slice(2) : '');
const first = (fs: Field[], no: number) => fs.find((f) => f.no === no);

/** Decodes a Transaction.raw that carries a TriggerSmartContract. Throws on anything else. */
export function decodeTriggerRawData(rawDataHex: string): TriggerRawData {
  const raw = readFields(getBytes(`0x${rawDataHex.replace(/^0x/, '')}`));
  const contracts = raw.filter((f) => f.no === 11);
  const c = contracts[0];
  if (!c?.bytes) throw new Error('transaction has no contract');
  const cf = readFields(c.bytes);
  const param = first(cf, 2)?.bytes;
  if (!param) throw new Error('contract has no parameter');
  const any = readFields(param);
  const typeUrl = new TextDecoder().decode(first(any, 1)?.bytes ?? new Uint8Array());
  const value = readFields(first(any, 2)?.bytes ?? new Uint8Array());
  return {
    refBlockBytes: hex(first(raw, 1)?.bytes),
    refBlockHash: hex(first(raw, 4)?.bytes),
    expiration: first(raw, 8)?.varint ?? 0n,
    timestamp: first(raw, 14)?.varint ?? 0n,
    feeLimit: first(raw, 18)?.varint ?? 0n,
    contractType: Number(first(cf, 1)?.varint ?? 0n),
    typeUrl,
    owner: hex(first(value, 1)?.bytes),
    contract: hex(first(value, 2)?.bytes),
    callValue: first(value, 3)?.varint ?? 0n,
    data: hex(first(value, 4)?.bytes),
    contractCount: contracts.length,
  };
}

/** Splits a serialised signed Transaction into its raw_data bytes (hex) and signatures (hex). */
export function decodeSignedTransaction(txHex: string): { rawDataHex: string; signatures: string[] } {
  const fs = readFields(getBytes(`0x${txHex.replace(/^0x/, '')}`));
  const raw = first(fs, 1)?.bytes;
  if (!raw) throw new Error('transaction has no raw_data');
  return { rawDataHex: hex(raw), signatures: fs.filter((f) => f.no === 2).map((f) => hex(f.bytes)) };
}

function varintBytes(v: bigint): number[] {
  if (v < 0n) throw new Error('protobuf: negative varint');
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

export function lenField(no: number, bytes: Uint8Array): number[] {
  return [...varintBytes(BigInt((no << 3) | 2)), ...varintBytes(BigInt(bytes.length)), ...bytes];
}

export function varintField(no: number, v: bigint): number[] {
  return v === 0n ? [] : [...varintBytes(BigInt(no << 3)), ...varintBytes(v)];
}

/** Serialises a signed Transaction { raw_data, signature[] } (what /wallet/broadcasthex takes). */
export function encodeSignedTransaction(rawDataHex: string, signatures: string[]): string {
  const bytes = [
    ...lenField(1, getBytes(`0x${rawDataHex.replace(/^0x/, '')}`)),
    ...signatures.flatMap((s) => lenField(2, getBytes(`0x${s.replace(/^0x/, '')}`))),
  ];
  return hexlify(Uint8Array.from(bytes)).slice(2);
}

/** Serialises a Transaction.raw with one TriggerSmartContract, fields in number order as java-tron writes them. */
export function encodeTriggerRawData(r: Omit<TriggerRawData, 'contractType' | 'typeUrl' | 'contractCount'>): string {
  const b = (h: string) => getBytes(`0x${h}`);
  const value = [...lenField(1, b(r.owner)), ...lenField(2, b(r.contract)), ...varintField(3, r.callValue), ...lenField(4, b(r.data))];
  const any = [...lenField(1, new TextEncoder().encode(TRIGGER_SMART_CONTRACT_URL)), ...lenField(2, Uint8Array.from(value))];
  const contract = [...varintField(1, BigInt(TRIGGER_SMART_CONTRACT_TYPE)), ...lenField(2, Uint8Array.from(any))];
  const raw = [
    ...lenField(1, b(r.refBlockBytes)),
    ...lenField(4, b(r.refBlockHash)),
    ...varintField(8, r.expiration),
    ...lenField(11, Uint8Array.from(contract)),
    ...varintField(14, r.timestamp),
    ...varintField(18, r.feeLimit),
  ];
  return hexlify(Uint8Array.from(raw)).slice(2);
}

/** txID = sha256(raw_data bytes), lowercase hex without 0x. */
export function txIdOf(rawDataHex: string): string {
  return sha256(`0x${rawDataHex.replace(/^0x/, '')}`).slice(2);
}
