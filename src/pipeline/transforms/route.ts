// Where each input record goes: its transform's outputs to the sink, or the record itself to the
// dead-letter topic with the reason. Whatever a transform does (returns a malformed result,
// throws anything, returns a Promise that rejects or never settles), the pipeline goes on.
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
  const unknown = Object.keys(r).filter((k) => !OUTPUT_KEYS.has(k));
  if (unknown.length) throw new InvalidOutput(`${where} has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; expected key, value, headers`);
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
  for (const r of records) {
    const input: InputRecord = { ...source, offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers ?? {} };
    try {
      let res: unknown = transform(input);
      if (isThenable(res)) res = await withTimeout(Promise.resolve(res), timeoutMs, 'transform');
      out.push(...validOutputs(res));
    } catch (err) {
      dlq.push({ record: r, reason: failureReason(err, timeoutMs) });
    }
  }
  return { out, dlq };
}
