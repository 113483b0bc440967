// `eoswatch verify produce` and `eoswatch verify check`: write verification records into a
// pipeline's source topic, then judge its sink (duplicates, loss, unexpected and wrong values,
// order per source partition, latency), as the seed article's §5 audit table.
import { randomUUID } from 'node:crypto';
import { Partitioners, type Kafka } from 'kafkajs';
import { ExactlyOnceChecker, type CheckResult } from './checker.js';
import { expectedCounts, makeRecord } from './record.js';
import { readTopicRecords, type OnWaiting, type SinkStable } from './reader.js';
import { sendPerPartition } from '../kafka/send.js';
import { EosError, ErrorCodes } from '../errors.js';

export interface ProduceManifest {
  run: string;
  topic: string;
  partitions: number;
  records: number;
  ms: number;
}

export async function produceVerifyRecords(
  kafka: Kafka,
  topic: string,
  opts: {
    records: number;
    run?: string;
    batch?: number;
    onProgress?: (written: number) => void;
    /** Write at about this many records per second (a steady stream: each batch holds the records due by then) instead of at once. */
    perSecond?: number;
    /** Stops writing early (the manifest then says how many records were written). */
    signal?: AbortSignal;
    /** Awaited before each batch with the number written so far: a reader of the stream can hold the writer back. */
    hold?: (written: number) => Promise<void>;
  },
): Promise<ProduceManifest> {
  const run = opts.run ?? randomUUID().slice(0, 8);
  const admin = kafka.admin();
  await admin.connect();
  let partitions: number;
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    partitions = meta.topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect();
  }
  if (!partitions) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `topic ${topic} not found`);
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const t0 = Date.now();
  const paced = opts.perSecond !== undefined && opts.perSecond > 0 ? opts.perSecond : 0;
  const seq = new Array<number>(partitions).fill(0);
  let written = 0;
  let heldMs = 0;
  try {
    while (written < opts.records && !opts.signal?.aborted) {
      if (opts.hold) {
        const h0 = Date.now();
        await opts.hold(written);
        heldMs += Date.now() - h0;
      }
      let end = Math.min(opts.records, written + (opts.batch ?? 5000));
      if (paced) {
        // Every record that is due by now (at least one, waiting for it): a slow send is made up by a larger next batch.
        const due = Math.floor(((Date.now() - t0 - heldMs) / 1000) * paced);
        if (due <= written) await new Promise((r) => setTimeout(r, t0 + heldMs + ((written + 1) / paced) * 1000 - Date.now()));
        end = Math.min(opts.records, Math.max(written + 1, due));
      }
      const messages = [];
      for (let j = written; j < end; j++) {
        const p = j % partitions;
        const r = makeRecord(run, p, seq[p]!++);
        messages.push({ key: r.id, partition: p, value: JSON.stringify(r) });
      }
      await sendPerPartition(producer, topic, messages);
      written = end;
      opts.onProgress?.(written);
    }
  } finally {
    await producer.disconnect();
  }
  return { run, topic, partitions, records: written, ms: Date.now() - t0 };
}

export interface VerifyThresholds {
  maxDuplicateRate: number;
  maxLossRate: number;
  maxOutOfOrderRate: number;
}

export interface VerifyReport extends CheckResult {
  topic: string;
  /** read_uncommitted pass: records of aborted transactions (below the last stable offset, absent from read_committed). */
  abortedRecords?: number;
  /** read_uncommitted pass: records past the ends the read_committed pass read to (written, or in transactions opened, after the check began; not judged). */
  openRecords?: number;
  /** The wait before the read: the sink's LSO reached the high watermark taken at the start on every partition. */
  stable: { partitions: number; waitedMs: number; line: string };
  ms: number;
  thresholds: VerifyThresholds;
  violations: string[];
}

export async function checkSinkTopic(
  kafka: Kafka,
  topic: string,
  opts: {
    run: string;
    records: number;
    partitions: number;
    valueDelta: number;
    thresholds: VerifyThresholds;
    uncommittedPass?: boolean;
    timeoutMs?: number;
    /** Reading progress: which pass, offsets read, offsets to read. */
    onProgress?: (pass: 'read_committed' | 'read_uncommitted', read: number, total: number) => void;
    /** Before the read: the partitions whose transactions are still open (LSO below the HW taken at the start). */
    onWaiting?: OnWaiting;
  },
): Promise<VerifyReport> {
  const t0 = Date.now();
  const checker = new ExactlyOnceChecker({ run: opts.run, expected: expectedCounts(opts.records, opts.partitions), valueDelta: opts.valueDelta });
  // The read_committed pass reads once the sink is stable (src/verify/reader.ts, waitSinkStable):
  // every transaction below its ends is decided, so there read_uncommitted minus read_committed is
  // exactly the aborted records. Past them the read_uncommitted pass may find records written
  // since (transactions possibly open): counted apart, never called aborted.
  const got: { stable?: SinkStable } = {};
  const below = (p: number, offset: number) => offset < Number(got.stable?.ends.get(p) ?? 0n);
  let committedBelow = 0;
  await readTopicRecords(kafka, topic, {
    timeoutMs: opts.timeoutMs,
    onStable: (s) => (got.stable = s),
    onWaiting: opts.onWaiting,
    onProgress: opts.onProgress && ((read, total) => opts.onProgress!('read_committed', read, total)),
    onRecord: (p, value, timestamp) => {
      checker.add(value, timestamp);
      committedBelow++;
    },
  });
  const s0 = got.stable;
  if (!s0) throw new Error('internal: the read_committed pass did not report the stable ends');
  const result = checker.result();
  let uncommitted: { abortedRecords: number; openRecords: number } | undefined;
  if (opts.uncommittedPass) {
    let uncommittedBelow = 0;
    let above = 0;
    await readTopicRecords(kafka, topic, {
      readUncommitted: true,
      timeoutMs: opts.timeoutMs,
      onProgress: opts.onProgress && ((read, total) => opts.onProgress!('read_uncommitted', read, total)),
      onRecord: (p, _value, _timestamp, offset) => (below(p, offset) ? uncommittedBelow++ : above++),
    });
    uncommitted = { abortedRecords: uncommittedBelow - committedBelow, openRecords: above };
  }
  const t = opts.thresholds;
  const violations: string[] = [];
  if (result.duplicateRate > t.maxDuplicateRate) violations.push(`duplicate rate ${fmtRate(result.duplicateRate)} > ${fmtRate(t.maxDuplicateRate)}`);
  if (result.lossRate > t.maxLossRate) violations.push(`loss rate ${fmtRate(result.lossRate)} > ${fmtRate(t.maxLossRate)}`);
  if (result.outOfOrderRate > t.maxOutOfOrderRate) violations.push(`out-of-order rate ${fmtRate(result.outOfOrderRate)} > ${fmtRate(t.maxOutOfOrderRate)}`);
  if (result.wrongValue > 0) violations.push(`${result.wrongValue} records with a wrong value (not input + ${opts.valueDelta})`);
  if (result.unexpected > 0) violations.push(`${result.unexpected} unexpected records`);
  return { ...result, topic, ...(uncommitted ?? {}), stable: { partitions: s0.partitions, waitedMs: s0.waitedMs, line: s0.line }, ms: Date.now() - t0, thresholds: t, violations };
}

export function fmtRate(r: number): string {
  return `${(r * 100).toFixed(r === 0 ? 0 : 4)}%`;
}

export function formatVerifyTable(r: VerifyReport): string {
  const rows: [string, string][] = [
    ['run', r.run],
    ['sink', r.topic],
    ['records expected', String(r.expected)],
    ['records in sink (this run)', String(r.received + r.duplicates)],
    ['duplicates', `${r.duplicates} (${fmtRate(r.duplicateRate)})`],
    ['lost', `${r.lost} (${fmtRate(r.lossRate)})`],
    ['unexpected', String(r.unexpected)],
    ['wrong value', String(r.wrongValue)],
    ['order violations', `${r.orderViolations} (${fmtRate(r.outOfOrderRate)})`],
    ['records of other runs', String(r.foreign)],
    ...(r.abortedRecords === undefined
      ? []
      : ([
          ['records of aborted transactions (read_uncommitted pass)', String(r.abortedRecords)],
          ['records past the checked ends (not judged)', String(r.openRecords ?? 0)],
        ] as [string, string][])),
    ['sink stable before the read', r.stable.line.replace(/^sink stable: /, '')],
    ['end-to-end latency p50/p95/p99/max', r.latencyMs ? `${r.latencyMs.p50}/${r.latencyMs.p95}/${r.latencyMs.p99}/${r.latencyMs.max} ms` : 'n/a'],
    ['verdict', r.violations.length ? `FAIL: ${r.violations.join('; ')}` : 'PASS'],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return `${rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}

export function formatVerifyMarkdown(r: VerifyReport): string {
  const lines = formatVerifyTable(r)
    .trim()
    .split('\n')
    .map((l) => {
      const m = /^(.*?)\s{2,}(.*)$/.exec(l)!;
      return `| ${m[1]} | ${m[2]!.replace(/\|/g, '\\|')} |`;
    });
  return `## eoswatch verify\n\n| metric | value |\n|---|---|\n${lines.join('\n')}\n`;
}
