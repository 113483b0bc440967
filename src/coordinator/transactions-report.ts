// The transactions service's report (GET /transactions and its /readyz detail): what a pass found,
// as views of the open and hanging transactions, named by application. Pure: the service
// (transactions-service.ts) hands it what the pass read; its gauges are transactions-series.ts.
import { abortDue, type HangingTransaction, type OpenTransaction } from './hanging.js';

export type TransactionsSource = 'log' | 'poll';

/** An open transaction as /transactions shows it. */
export interface OpenView {
  transactionalId: string;
  application: string;
  producerId: number;
  producerEpoch: number;
  state: string;
  partitions: { topic: string; partition: number }[];
  startedAt: string;
  ageMs: number;
  abortDue: string;
}

export interface HangingView extends OpenView {
  topic: string;
  partition: number;
  kind: string;
  startOffset: string;
  heldBack: string;
  idleMs: number;
}

export interface TransactionsReport {
  at: string;
  source: TransactionsSource;
  /** Why the log is not read (poll source), or the last failure. */
  problem: string | null;
  liveIds: number;
  open: number;
  oldestOpen: OpenView[];
  hanging: HangingView[];
}

/** What one pass found, for its report. */
export interface PassFindings {
  now: number;
  source: TransactionsSource;
  problem: string | null;
  /** Transactional ids the coordinator keeps. */
  liveIds: number;
  open: OpenTransaction[];
  /** Oldest first (findHanging sorts them). */
  hanging: HangingTransaction[];
  /** At most this many of the oldest open transactions are shown. */
  topN: number;
  /** The application a transactional id belongs to (ApplicationNamer). */
  application: (transactionalId: string) => string;
}

/** An open transaction as /transactions shows it. */
export function openView(t: OpenTransaction, application: string, now: number): OpenView {
  return {
    transactionalId: t.transactionalId,
    application,
    producerId: t.producerId,
    producerEpoch: t.producerEpoch,
    state: t.state,
    partitions: t.partitions,
    startedAt: new Date(t.startTimestampMs).toISOString(),
    ageMs: Math.max(0, now - t.startTimestampMs),
    abortDue: abortDue({ abortAtMs: t.prepared ? null : t.startTimestampMs + t.transactionTimeoutMs }, now),
  };
}

/** The report of a pass: the topN oldest open transactions, and every hanging one (with its open transaction where the coordinator knows it). */
export function passReport(f: PassFindings): TransactionsReport {
  const { now } = f;
  const view = (t: OpenTransaction) => openView(t, f.application(t.transactionalId), now);
  const byOpenId = new Map(f.open.map((t) => [t.transactionalId, t]));
  return {
    at: new Date(now).toISOString(),
    source: f.source,
    problem: f.problem,
    liveIds: f.liveIds,
    open: f.open.length,
    oldestOpen: [...f.open].sort((a, b) => a.startTimestampMs - b.startTimestampMs).slice(0, f.topN).map(view),
    hanging: f.hanging.map((h) => {
      const t = byOpenId.get(h.transactionalId ?? '');
      return {
        ...(t ? view(t) : { transactionalId: h.transactionalId ?? '', application: '(unknown)', producerId: h.producerId, producerEpoch: h.producerEpoch, state: h.state ?? 'unknown', partitions: h.partitions, startedAt: new Date(now - h.ageMs).toISOString(), ageMs: h.ageMs, abortDue: abortDue(h, now) }),
        topic: h.topic,
        partition: h.partition,
        kind: h.kind,
        startOffset: String(h.startOffset),
        heldBack: String(h.heldBack),
        idleMs: h.idleMs,
        ageMs: h.ageMs,
        abortDue: abortDue(h, now),
      };
    }),
  };
}

/** The hanging transactions the previous report did not show (same partition, same producer): each is logged once. */
export function newlyHanging(hanging: readonly HangingTransaction[], previous: TransactionsReport | undefined): HangingTransaction[] {
  return hanging.filter((h) => !previous?.hanging.some((r) => r.topic === h.topic && r.partition === h.partition && r.producerId === h.producerId));
}

/** The /readyz detail of a report: ids, open and the first three hanging transactions, and the source. */
export function readyDetail(r: TransactionsReport): string {
  const names = r.hanging.slice(0, 3).map((h) => `${h.transactionalId} on ${h.topic}-${h.partition}`);
  const hang = r.hanging.length ? `, ${r.hanging.length} hanging (${names.join(', ')}${r.hanging.length > 3 ? ', …' : ''})` : '';
  const src = r.source === 'log' ? 'from __transaction_state' : `polling the coordinators (${r.problem ?? 'log not read'})`;
  return `${r.liveIds} transactional ids, ${r.open} open${hang}; ${src}`;
}
