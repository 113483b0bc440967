// What `eoswatch transactions` prints (pure): the abort rule, and the tables and JSON of list,
// describe, producers and find-hanging; src/commands/transactions.ts parses the options, reads the
// coordinators and partition leaders, and prints through these.
import { abortDue, type HangingTransaction, type TopicPartition } from '../coordinator/hanging.js';
import { recognise, type RecogniserOptions } from '../coordinator/applications.js';
import type { PartitionProducer, SnapshotError } from '../coordinator/snapshot.js';
import { redactValue } from '../redact.js';

// ---- the abort rule (pure) ---------------------------------------------------------------------

export type AbortCase =
  | {
      kind: 'known';
      /** How the abort would be done: InitProducerId (transactional-id) or WriteTxnMarkers (partition). */
      via: 'transactional-id' | 'partition';
      transactionalId: string;
      state: string;
      startTimestampMs: number;
      transactionTimeoutMs: number;
      prepared?: boolean;
    }
  | { kind: 'unknown'; lastTimestampMs: number; maxTransactionTimeoutMs: number; coordinatorsComplete: boolean };

/** Why an abort is refused without --force, or null when it may go ahead. */
export function abortRefusal(c: AbortCase, now: number): string | null {
  if (c.kind === 'known') {
    if (c.via === 'partition') {
      return `the coordinator knows this transaction (transactional id ${c.transactionalId}, ${c.state}): markers written by partition would leave it saying ${c.state}; abort it with --transactional-id ${c.transactionalId}`;
    }
    if (c.prepared) return `${c.transactionalId} is a prepared (KIP-939) transaction: its external transaction manager decides it, and the coordinator never aborts it`;
    if (c.state === 'Ongoing' && c.startTimestampMs >= 0) {
      const due = c.startTimestampMs + c.transactionTimeoutMs;
      if (due > now) {
        return `${c.transactionalId}'s transaction started ${formatDuration(now - c.startTimestampMs)} ago, within its transaction timeout (${formatDuration(c.transactionTimeoutMs)}): its producer may be alive, and the coordinator aborts it itself in ${formatDuration(due - now)}`;
      }
    }
    return null;
  }
  if (!c.coordinatorsComplete) return 'not every coordinator answered (see the errors): cannot tell that no coordinator knows this transaction';
  const idle = now - c.lastTimestampMs;
  if (idle < c.maxTransactionTimeoutMs) {
    return `its producer wrote to the partition ${formatDuration(Math.max(0, idle))} ago, within the longest transaction timeout the brokers allow (${formatDuration(c.maxTransactionTimeoutMs)}): it may be a live transaction the coordinators were not asked about in time; it would be due in ${formatDuration(c.maxTransactionTimeoutMs - idle)}`;
  }
  return null;
}

// ---- formatting (pure) -------------------------------------------------------------------------

/** "850ms", "12s", "4m 12s", "2h 5m", "3d 4h". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Left-aligned columns, two spaces apart (values never wrap). */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

export const tpName = (t: TopicPartition): string => `${t.topic}-${t.partition}`;
export const dash = (v: string | number | null | undefined): string => (v === null || v === undefined ? '-' : String(v));

export function formatErrors(errors: readonly SnapshotError[]): string {
  return errors.map((e) => `! ${e.source} ${e.target}: ${e.error.name}${e.error.kind === 'permission' ? ' (permission: an ACL is missing)' : ''}${e.error.message && e.error.message !== e.error.name ? `: ${e.error.message}` : ''}\n`).join('');
}

export interface ListRow {
  transactionalId: string;
  coordinatorId: number;
  producerId: number;
  state: string;
  application: string;
  engine: string;
  /** Of the open transaction; null when none is open or the description failed. */
  startTimestampMs: number | null;
  ageMs: number | null;
  transactionTimeoutMs: number | null;
}

export function formatList(rows: readonly ListRow[]): string {
  if (rows.length === 0) return 'no transactional ids\n';
  return formatTable(
    ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState', 'Application', 'Age', 'Timeout'],
    rows.map((r) => [r.transactionalId, String(r.coordinatorId), String(r.producerId), r.state, r.application, r.ageMs === null ? '-' : formatDuration(r.ageMs), r.transactionTimeoutMs === null ? '-' : formatDuration(r.transactionTimeoutMs)]),
  );
}

export interface DescribedPartition extends TopicPartition {
  high: bigint | null;
  lso: bigint | null;
  /** The transaction's first offset on the partition (DescribeProducers); null when not known. */
  startOffset: bigint | null;
  holdsLso: boolean;
}

export interface DescribeView {
  transactionalId: string;
  application: string;
  engine: string;
  coordinatorId: number | null;
  state: string;
  producerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  startTimestampMs: number | null;
  ageMs: number | null;
  abortDue: string | null;
  partitions: DescribedPartition[];
}

export function formatDescribe(d: DescribeView): string {
  const kv: [string, string][] = [
    ['TransactionalId', d.transactionalId],
    ['Application', `${d.application} (${d.engine})`],
    ['Coordinator', dash(d.coordinatorId)],
    ['State', d.state],
    ['ProducerId', String(d.producerId)],
    ['ProducerEpoch', String(d.producerEpoch)],
    ['Timeout', `${formatDuration(d.transactionTimeoutMs)} (${d.transactionTimeoutMs} ms)`],
    ['StartTime', d.startTimestampMs === null ? '-' : `${new Date(d.startTimestampMs).toISOString()} (${d.startTimestampMs})`],
    ['Age', d.ageMs === null ? '-' : formatDuration(d.ageMs)],
    ['CoordinatorAborts', d.abortDue ?? '-'],
  ];
  const w = Math.max(...kv.map(([k]) => k.length));
  const head = kv.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
  if (d.partitions.length === 0) return `${head}\n${'Partitions'.padEnd(w)}  -\n`;
  return `${head}\n\n${formatTable(
    ['Partition', 'StartOffset', 'HoldsLso', 'LastStableOffset', 'HighWatermark'],
    d.partitions.map((p) => [tpName(p), dash(p.startOffset?.toString()), p.holdsLso ? 'yes' : 'no', dash(p.lso?.toString()), dash(p.high?.toString())]),
  )}`;
}

export interface ProducerRow extends TopicPartition, PartitionProducer {
  transactionalId: string | null;
  holdsLso: boolean;
}

export function formatProducers(rows: readonly ProducerRow[]): string {
  if (rows.length === 0) return 'no active producers\n';
  return formatTable(
    ['Partition', 'ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset', 'TransactionalId', 'HoldsLso'],
    rows.map((r) => [
      tpName(r),
      String(r.producerId),
      String(r.producerEpoch),
      String(r.coordinatorEpoch),
      String(r.lastSequence),
      String(r.lastTimestampMs),
      r.currentTransactionStartOffset === -1 ? 'None' : String(r.currentTransactionStartOffset),
      dash(r.transactionalId),
      r.holdsLso ? 'yes' : 'no',
    ]),
  );
}

export interface HangingRow {
  transactionalId: string | null;
  application: string | null;
  producerId: number;
  producerEpoch: number;
  topic: string;
  partition: number;
  startOffset: number;
  ageMs: number;
  idleMs: number;
  heldBack: number;
  abortAtMs: number | null;
  abortDue: string;
  kind: string;
  /** False when the finding rests on a coordinator view with gaps (unknown-to-coordinator while a coordinator did not answer). */
  certain: boolean;
  partitions: string[];
}

export function hangingRows(found: readonly HangingTransaction[], now: number, names: RecogniserOptions, coordinatorsComplete: boolean): HangingRow[] {
  return found.map((h) => ({
    transactionalId: h.transactionalId,
    application: h.transactionalId === null ? null : recognise(h.transactionalId, names).application,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    topic: h.topic,
    partition: h.partition,
    startOffset: Number(h.startOffset),
    ageMs: h.ageMs,
    idleMs: h.idleMs,
    heldBack: Number(h.heldBack),
    abortAtMs: h.abortAtMs,
    abortDue: abortDue(h, now),
    kind: h.kind,
    certain: h.kind !== 'unknown-to-coordinator' || coordinatorsComplete,
    partitions: h.partitions.map(tpName),
  }));
}

export function formatHanging(rows: readonly HangingRow[], read: { partitions: number; topics: number; held: number }): string {
  if (rows.length === 0) {
    return `no hanging transaction (${read.partitions} partitions of ${read.topics} topics read; ${read.held} held back by an open transaction whose producer is still writing)\n`;
  }
  const table = formatTable(
    ['TransactionalId', 'Application', 'ProducerId', 'Epoch', 'Partition', 'StartOffset', 'Age', 'HeldBack', 'AbortDue', 'Kind', 'Partitions'],
    rows.map((r) => [
      dash(r.transactionalId),
      dash(r.application),
      String(r.producerId),
      String(r.producerEpoch),
      `${r.topic}-${r.partition}`,
      String(r.startOffset),
      formatDuration(r.ageMs),
      String(r.heldBack),
      r.abortDue,
      r.certain ? r.kind : `${r.kind}?`,
      r.partitions.join(','),
    ]),
  );
  const uncertain = rows.some((r) => !r.certain) ? 'kind ending in ?: a coordinator did not answer, so "unknown to every coordinator" is not certain\n' : '';
  return `${table}${uncertain}`;
}

/** JSON with bigints as numbers (offsets stay far below 2^53), through the redaction path. */
export function toJson(value: unknown): string {
  const plain = JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as unknown;
  return `${JSON.stringify(redactValue(plain), null, 2)}\n`;
}
