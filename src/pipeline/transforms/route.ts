// Where each input record goes, with no I/O: which records of a fetched batch enter the
// transaction (planBatch), their transform's outputs to the sink or the record itself to the
// dead-letter topic with the reason (transformBatch), and the messages that carry them, with their
// partitions and headers (routeMessages). Whatever a transform does (returns a malformed result,
// throws anything, returns a Promise that rejects or never settles), the pipeline goes on.
import type { Message } from 'kafkajs';
import { TimeoutError, withTimeout } from '../../util/timeout.js';
import { RejectedRecord, type InputRecord, type OutputRecord, type TransformFn } from './types.js';

export interface BatchRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

export interface Routed {
  out: OutputRecord[];
  dlq: { record: BatchRecord; reason: string }[];
}

/** The pipeline's view of a transform: a batch in, routed records out, never a throw. */
export interface Transformer {
  run(records: BatchRecord[], source: { topic: string; partition: number }): Promise<Routed>;
  close(): Promise<void>;
}

/** A built-in (or in-process) transform function, run on the pipeline's own thread. */
export function inProcessTransformer(fn: TransformFn, timeoutMs: number): Transformer {
  return { run: (records, source) => transformBatch(records, source, fn, timeoutMs), close: async () => undefined };
}

/** A transform result that is not a valid output; the record goes to the dead-letter topic. */
export class InvalidOutput extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidOutput';
  }
}

const OUTPUT_KEYS = new Set(['key', 'value', 'headers']);

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (Buffer.isBuffer(v)) return 'a Buffer';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

const isBytes = (v: unknown): v is Buffer | string => Buffer.isBuffer(v) || typeof v === 'string';

function validOutput(o: unknown, where: string): OutputRecord {
  if (o === null || typeof o !== 'object' || Array.isArray(o) || Buffer.isBuffer(o)) {
    throw new InvalidOutput(`${where} is ${describe(o)}; expected an object {key?, value, headers?}`);
  }
  const r = o as Record<string, unknown>;
  // Per record on the hot path: no key array unless something is wrong.
  for (const k in r) {
    if (OUTPUT_KEYS.has(k) || !Object.hasOwn(r, k)) continue;
    const unknown = Object.keys(r).filter((x) => !OUTPUT_KEYS.has(x));
    throw new InvalidOutput(`${where} has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; expected key, value, headers`);
  }
  if (!('value' in r)) throw new InvalidOutput(`${where} has no field "value"; expected a Buffer, a string or null`);
  if (r.value !== null && !isBytes(r.value)) throw new InvalidOutput(`${where}: value is ${describe(r.value)}; expected a Buffer, a string or null`);
  if (r.key !== undefined && r.key !== null && !isBytes(r.key)) throw new InvalidOutput(`${where}: key is ${describe(r.key)}; expected a Buffer, a string or null`);
  const out: OutputRecord = { key: (r.key as OutputRecord['key']) ?? null, value: r.value as OutputRecord['value'] };
  if (r.headers !== undefined) {
    if (r.headers === null || typeof r.headers !== 'object' || Array.isArray(r.headers)) throw new InvalidOutput(`${where}: headers is ${describe(r.headers)}; expected an object of Buffer or string values`);
    const headers: Record<string, Buffer | string> = {};
    for (const [k, v] of Object.entries(r.headers)) {
      if (!isBytes(v)) throw new InvalidOutput(`${where}: header "${k}" is ${describe(v)}; expected a Buffer or a string`);
      headers[k] = v;
    }
    out.headers = headers;
  }
  return out;
}

/** The outputs of one transform result: nothing (null/undefined), one record, or an array of them. */
export function validOutputs(res: unknown): OutputRecord[] {
  if (res === null || res === undefined) return [];
  if (Array.isArray(res)) return res.map((o, i) => validOutput(o, `result[${i}]`));
  return [validOutput(res, 'result')];
}

/** The dead-letter reason for anything a transform threw or rejected with, Error or not. */
export function failureReason(err: unknown, timeoutMs: number): string {
  if (err instanceof RejectedRecord || err instanceof InvalidOutput) return err.message;
  if (err instanceof TimeoutError) return `transform timed out: no result within ${timeoutMs} ms`;
  if (err instanceof Error) return `transform threw: ${err.message}`;
  let shown: string;
  try {
    shown = typeof err === 'object' && err !== null ? JSON.stringify(err) : String(err);
  } catch {
    shown = Object.prototype.toString.call(err);
  }
  return `transform threw a non-Error value: ${shown}`;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/**
 * Transforms a batch in order. A result that is a Promise (an async transform) is awaited for at
 * most timeoutMs; one that never settles is left behind and its record dead-lettered.
 */
export async function transformBatch(records: BatchRecord[], source: { topic: string; partition: number }, transform: TransformFn, timeoutMs = 5000): Promise<Routed> {
  const out: OutputRecord[] = [];
  const dlq: Routed['dlq'] = [];
  const { topic, partition } = source;
  for (const r of records) {
    const input: InputRecord = { topic, partition, offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers ?? {} };
    try {
      let res: unknown = transform(input);
      if (isThenable(res)) res = await withTimeout(Promise.resolve(res), timeoutMs, 'transform');
      if (res === null || res === undefined) continue;
      // One output (the common case) without the array of validOutputs; several are validated
      // all before any is kept, so a record with one bad output goes to the dead-letter topic whole.
      if (Array.isArray(res)) out.push(...validOutputs(res));
      else out.push(validOutput(res, 'result'));
    } catch (err) {
      dlq.push({ record: r, reason: failureReason(err, timeoutMs) });
    }
  }
  return { out, dlq };
}

/** Where a fetched batch starts and ends: the offset its fetch was issued from, and its last offset (control records included). */
export interface BatchSpan {
  fetched: bigint;
  last: bigint;
}

/**
 * What to do with a fetched batch, given the offset of the next record to process:
 * - gap: the fetch started past it (a fetch issued before a seek took effect, or by another
 *   broker's fetcher after a leader change); using it would skip records, so the consumer must be
 *   sent back to `next`;
 * - skip: no record at or past `next` (re-delivered, or control records only); the position moves
 *   to `next`, past the batch's trailing control records;
 * - process: `records` (those at or past the position, in order) enter the transaction, and the
 *   position moves to `next`, past the last record and any control records after it.
 */
export type BatchPlan = { kind: 'gap' } | { kind: 'skip'; next: bigint } | { kind: 'process'; records: BatchRecord[]; next: bigint };

export function planBatch(records: BatchRecord[], span: BatchSpan, next: bigint): BatchPlan {
  if (span.fetched > next) return { kind: 'gap' };
  const fresh = records.filter((r) => BigInt(r.offset) >= next);
  const end = span.last + 1n;
  if (fresh.length === 0) return { kind: 'skip', next: end > next ? end : next };
  const afterLast = BigInt(fresh[fresh.length - 1]!.offset) + 1n;
  return { kind: 'process', records: fresh, next: end > afterLast ? end : afterLast };
}

/** Where the routed records of one source partition go. */
export interface RouteTarget {
  /** pipeline.name, in the eos.dlq.pipeline header. */
  pipeline: string;
  source: { topic: string; partition: number };
  /** partitioning input: sink partition = source partition mod sink partitions; key: by the key's hash. */
  sink: { topic: string; partitions: number; partitioning: 'input' | 'key' };
  dlq: { topic: string; partitions: number };
}

/** The sink partition of a keyed message (kafkajs' Java-compatible murmur2 partitioner in the pipeline). */
export type KeyPartitioner = (topic: string, message: Message) => number;

/**
 * The messages that carry a routed batch, each with its partition set (the sends go one partition
 * per request, src/kafka/send.ts): outputs to the sink, dead letters to the dead-letter topic's
 * partition of the source partition, with the record's own headers and the eos.dlq.* headers.
 */
export function routeMessages(routed: Routed, target: RouteTarget, keyPartition: KeyPartitioner): { topic: string; messages: Message[] }[] {
  const { out, dlq } = routed;
  const { sink, source } = target;
  const topicMessages: { topic: string; messages: Message[] }[] = [];
  if (out.length) {
    if (sink.partitioning === 'input') {
      const partition = source.partition % sink.partitions;
      topicMessages.push({ topic: sink.topic, messages: out.map((o) => ({ key: o.key ?? null, value: o.value, headers: o.headers, partition })) });
    } else {
      const messages = out.map((o) => {
        const m: Message = { key: o.key ?? null, value: o.value, headers: o.headers };
        return { ...m, partition: keyPartition(sink.topic, m) };
      });
      topicMessages.push({ topic: sink.topic, messages });
    }
  }
  if (dlq.length) {
    topicMessages.push({
      topic: target.dlq.topic,
      messages: dlq.map(({ record, reason }) => ({
        key: record.key,
        value: record.value,
        partition: source.partition % target.dlq.partitions,
        headers: {
          ...flatHeaders(record.headers),
          'eos.dlq.reason': reason,
          'eos.dlq.source.topic': source.topic,
          'eos.dlq.source.partition': String(source.partition),
          'eos.dlq.source.offset': record.offset,
          'eos.dlq.pipeline': target.pipeline,
        },
      })),
    });
  }
  return topicMessages;
}

/** A record's headers with one value each (the last of a repeated header); absent ones left out. */
export function flatHeaders(h: BatchRecord['headers']): Record<string, Buffer | string> {
  const out: Record<string, Buffer | string> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  }
  return out;
}
