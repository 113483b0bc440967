// Verification records: the seed record {id, ts, value} plus what the checker needs to judge a
// sink without any stored list of what was sent: the run id, the source partition and a
// per-partition sequence. The id is derived from (run, partition, sequence) and value = sequence,
// so the expected output of `increment` is value + 1.
export interface VerifyRecord {
  id: string;
  ts: number;
  value: number;
  run: string;
  p: number;
  seq: number;
}

export function verifyId(run: string, partition: number, seq: number): string {
  return `${run}-${partition}-${seq}`;
}

export function makeRecord(run: string, partition: number, seq: number, ts = Date.now()): VerifyRecord {
  return { id: verifyId(run, partition, seq), ts, value: seq, run, p: partition, seq };
}

/** Records per partition when `total` records are spread round-robin over `partitions`. */
export function expectedCounts(total: number, partitions: number): number[] {
  return Array.from({ length: partitions }, (_, p) => Math.floor(total / partitions) + (p < total % partitions ? 1 : 0));
}

/** Parses a sink value; null when it is not a verification record. */
export function parseVerifyRecord(value: Buffer | string | null): VerifyRecord | null {
  if (value === null) return null;
  let r: unknown;
  try {
    r = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'));
  } catch {
    return null;
  }
  const o = r as Partial<VerifyRecord>;
  if (typeof o?.run !== 'string' || typeof o.p !== 'number' || typeof o.seq !== 'number' || typeof o.value !== 'number' || typeof o.id !== 'string') return null;
  return o as VerifyRecord;
}
