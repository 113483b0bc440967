// The seed transform: {"id": "<uuid>", "ts": <epoch ms>, "value": <int>} → the same record with
// value + 1. Other fields (a verifier's run id or sequence) pass through untouched.
import { RejectedRecord, type InputRecord, type OutputRecord } from './types.js';

export interface SeedRecord {
  id: string;
  ts: number;
  value: number;
  [extra: string]: unknown;
}

export function parseSeedRecord(value: Buffer | null): SeedRecord {
  if (value === null) throw new RejectedRecord('null value (tombstone); expected a JSON seed record');
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (err) {
    throw new RejectedRecord(`value is not JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new RejectedRecord('value is not a JSON object');
  const r = parsed as Record<string, unknown>;
  if (typeof r.id !== 'string' || r.id.length === 0) throw new RejectedRecord('field "id" missing or not a non-empty string');
  if (typeof r.ts !== 'number' || !Number.isFinite(r.ts)) throw new RejectedRecord('field "ts" missing or not a number');
  if (typeof r.value !== 'number' || !Number.isSafeInteger(r.value)) throw new RejectedRecord('field "value" missing or not an integer');
  if (r.value === Number.MAX_SAFE_INTEGER) throw new RejectedRecord('field "value" cannot be incremented safely');
  return r as SeedRecord;
}

export function increment(record: InputRecord): OutputRecord {
  const seed = parseSeedRecord(record.value);
  return { key: record.key, value: JSON.stringify({ ...seed, value: seed.value + 1 }) };
}
