// Seed records for pipeline tests ({id, ts, value}, as the demo and docs/architecture.md describe) written straight to chosen
// partitions, and an exactly-once check of the sink that shares no code with the pipeline.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { kafkaFor, readAll } from './index.js';

export interface SentRecord {
  id: string;
  value: number;
  partition: number;
}

/** Writes `count` seed records round-robin over `partitions`, in order per partition. */
export async function produceSeed(
  brokers: string[],
  topic: string,
  partitions: number,
  count: number,
  opts: { batch?: number; extra?: Record<string, unknown>; startValue?: number; producer?: Producer } = {},
): Promise<SentRecord[]> {
  const own = !opts.producer;
  const producer = opts.producer ?? kafkaFor(brokers).producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  if (own) await producer.connect();
  const sent: SentRecord[] = [];
  const batch = opts.batch ?? 2000;
  try {
    for (let i = 0; i < count; i += batch) {
      const messages = [];
      for (let j = i; j < Math.min(count, i + batch); j++) {
        const v = (opts.startValue ?? 0) + j;
        const r: SentRecord = { id: randomUUID(), value: v, partition: v % partitions };
        sent.push(r);
        messages.push({ key: r.id, partition: r.partition, value: JSON.stringify({ id: r.id, ts: Date.now(), value: r.value, ...opts.extra }) });
      }
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    if (own) await producer.disconnect();
  }
  return sent;
}

export interface SinkReport {
  total: number;
  duplicates: number;
  lost: number;
  unexpected: number;
  wrongValue: number;
  orderViolations: number;
  /** A few offending records, for the failure message. */
  examples?: string[];
  /** The wait before the read (src/verify/reader.ts waitSinkStable): "sink stable: LSO reached HW on 6 partitions of … after 0.4 s". */
  stable?: string;
}

/**
 * Reads the sink read_committed (plain kafkajs consumer, not the pipeline's code) and compares
 * ids and values with what was sent: every id exactly once, value + valueDelta (default 1, the
 * `increment` transform), and, with input partitioning, the order of each input partition kept in
 * the sink partition of the same number.
 */
export async function checkSink(
  brokers: string[],
  sink: string,
  sent: SentRecord[],
  opts: { checkOrder?: boolean; timeoutMs?: number; valueDelta?: number } = {},
): Promise<SinkReport> {
  const delta = opts.valueDelta ?? 1;
  // An id may legitimately appear more than once in the input (a producer retry upstream): each
  // input record must appear exactly once in the output, so ids are compared as multisets.
  const expected = new Map<string, { rec: SentRecord; index: number; count: number }>();
  sent.forEach((r, i) => {
    const e = expected.get(r.id);
    if (e) e.count++;
    else expected.set(r.id, { rec: r, index: i, count: 1 });
  });
  // The read waits until no transaction is open below the sink's high watermark (waitSinkStable):
  // "caught up" on the group's offsets does not mean every sink partition's marker is written.
  let stable: string | undefined;
  const rows = await readAll(brokers, sink, { timeoutMs: opts.timeoutMs, onStable: (s) => (stable = s.line) });
  const seen = new Map<string, number>();
  const report: SinkReport = { total: rows.length, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0, stable };
  const lastIndex = new Map<number, number>();
  for (const { partition, message } of rows) {
    const rec = JSON.parse(String(message.value)) as { id: string; value: number };
    const n = (seen.get(rec.id) ?? 0) + 1;
    seen.set(rec.id, n);
    const exp = expected.get(rec.id);
    if (!exp) {
      report.unexpected++;
      continue;
    }
    if (n > exp.count) {
      report.duplicates++;
      if ((report.examples ??= []).length < 10) report.examples.push(`duplicate id ${rec.id} (input partition ${exp.rec.partition}, value ${exp.rec.value}) at sink ${partition}@${message.offset}`);
    }
    if (rec.value !== exp.rec.value + delta) report.wrongValue++;
    if (opts.checkOrder !== false) {
      if (exp.rec.partition !== partition) report.orderViolations++;
      const prev = lastIndex.get(partition) ?? -1;
      if (n === 1 && exp.index < prev) report.orderViolations++;
      if (n === 1) lastIndex.set(partition, exp.index);
    }
  }
  for (const [id, exp] of expected) {
    const missing = exp.count - (seen.get(id) ?? 0);
    if (missing <= 0) continue;
    report.lost += missing;
    if ((report.examples ??= []).length < 20) report.examples.push(`lost id ${id} (input partition ${exp.rec.partition}, value ${exp.rec.value})`);
  }
  return report;
}

/** The input as it really is: every record of the source topic, in offset order per partition. */
export async function sourceRecords(brokers: string[], source: string): Promise<SentRecord[]> {
  const rows = await readAll(brokers, source);
  return rows.map(({ partition, message }) => {
    const r = JSON.parse(String(message.value)) as { id: string; value: number };
    return { id: r.id, value: r.value, partition };
  });
}

export function assertExactlyOnce(report: SinkReport, sent: number, context = ''): void {
  const { examples, stable, ...counts } = report;
  assert.deepEqual(
    counts,
    { total: sent, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0 },
    `sink must hold every sent id exactly once with value + 1, in input order\n${stable ? `${stable}\n` : ''}${(examples ?? []).join('\n')}${context ? `\n${context}` : ''}`,
  );
}
