// The transactions service: every transactional producer of the cluster as the transaction
// coordinator sees it, from __transaction_state (src/kafka/txn-log-reader.ts), named by
// application (applications.ts), turned into events (events.ts), hanging transactions found with
// the partitions' ends and producer states (hanging.ts); its series per application are
// transactions-series.ts, its report (GET /transactions, /readyz) transactions-report.ts. All I/O on the service's own timer (a Periodic, src/runtime/periodic.ts).
//
// History and news: compaction keeps each id's last state, so the log read from the beginning is
// mostly history. The first pass after start (or after the log became readable) only builds the
// state of every id, emitting nothing: everything below the end offsets it reached is history.
// Every later pass reads from where the previous one stopped, so each record it meets was written
// since, and each is compared with the id's state before it (events.ts).
//
// Without Describe/Read on __transaction_state (TOPIC_AUTHORIZATION_FAILED), the service polls
// ListTransactions + DescribeTransactions each interval instead: open transactions, ages, live ids
// and hanging transactions stay, outcomes and durations need the log (eos_coordinator_source,
// /readyz and /transactions say which source is used). A missing permission is a metric and a
// logged finding, never a crash.
import type { Router } from 'express';
import type { Kafka } from 'kafkajs';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import { redactText } from '../redact.js';
import { holdsLso, type TxnLogValue } from '../kafka/txn-log.js';
import { readTransactionLog } from '../kafka/txn-log-reader.js';
import { TxnAdmin } from '../kafka/txn-admin.js';
import type { PartitionEnds } from '../kafka/offsets.js';
import { PassEnds } from './partition-ends.js';
import { defineTransactionsMetrics, type TransactionsMetrics } from '../metrics/transactions.js';
import { ApplicationNamer, checkPattern } from './applications.js';
import { transitionEvents, type TxnEvent } from './events.js';
import { HeldAborts } from './fence-window.js';
import type { Periodic } from '../runtime/periodic.js';
import { every, failures, type FailureKind } from '../runtime/runs.js';
import { abortDue, findHanging, isTwoPhaseCommit, WriteActivity, type HangingTransaction, type OpenTransaction, type PartitionView } from './hanging.js';
import { defineService, jsonReportRouter } from '../service.js';
import { newlyHanging, passReport, readyDetail, type TransactionsReport, type TransactionsSource } from './transactions-report.js';
import { TransactionsSeries, type LiveId } from './transactions-series.js';

export type { HangingView, OpenView, TransactionsReport, TransactionsSource } from './transactions-report.js';
import { watchedTopics } from '../kafka/lso-monitor.js';
import { periodicRequestTimeout } from '../kafka/client.js';

export interface TransactionsServiceOptions {
  intervalMs: number;
  idleAfterMs: number;
  patterns: string[];
  maxApplications: number;
  topN: number;
  /** eoswatch pipelines' transactionalIdPrefix values (named as eoswatch applications). */
  eoswatchPrefixes?: string[];
  /**
   * Topics read every pass even without an open transaction on them (the LSO monitor's): an open
   * transaction there that no coordinator knows (Kafka's own find-hanging case) is found too.
   */
  watchTopics?: string[];
}

const PERMISSION = /TOPIC_AUTHORIZATION_FAILED|error code 29\b|not authorized/i;
const OUT_OF_RANGE = /partition error code 1\b/;
/** Without the permission to read the log, it is tried again every this many passes (an ACL granted later); after another error, at the next pass. */
const LOG_RETRY_PASSES = 20;

export class TransactionsService implements Service {
  readonly name = 'transactions';
  private readonly logger: Logger;
  private readonly metrics: TransactionsMetrics;
  private readonly namer: ApplicationNamer;
  private states = new Map<string, TxnLogValue>();
  /** TV2 client aborts held until what follows tells a fencing from them (fence-window.ts). */
  private readonly held = new HeldAborts();
  private next: Map<number, number> | undefined;
  private source: TransactionsSource = 'log';
  private problem: string | null = null;
  private passesSinceLogTry = 0;
  /** The last failed read of the log was refused for want of a permission (then it is tried again only every LOG_RETRY_PASSES passes). */
  private denied = false;
  private admin: TxnAdmin | undefined;
  /** The ends of the partitions a pass judges. */
  private readonly ends: PassEnds;
  private readonly periodic: Periodic;
  /** Counts a failure inside a pass (eos_service_errors_total): the log, the poll, offsets, producers. */
  private readonly failed: (what: 'log' | 'poll' | 'offsets' | 'producers', kind?: FailureKind) => void;
  private stopped = false;
  private report: TransactionsReport | undefined;
  private readonly series: TransactionsSeries;

  constructor(
    private readonly kafka: Kafka,
    private readonly opts: TransactionsServiceOptions,
    ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    this.metrics = defineTransactionsMetrics(ctx.registry);
    const patterns = opts.patterns.map((p, i) => {
      try {
        return checkPattern(p);
      } catch (err) {
        throw new EosError(ErrorCodes.CONFIG_INVALID, `transactions.patterns[${i}]: ${errorMessage(err)}`);
      }
    });
    const run = { registry: ctx.registry, service: this.name, task: 'pass' };
    this.failed = failures(run, ['log', 'poll', 'offsets', 'producers']);
    this.periodic = every(() => this.pass(), {
      ...run,
      name: 'transactions.interval',
      intervalMs: opts.intervalMs,
      onError: (err) => this.logger.warn({ err: redactText(errorMessage(err)) }, 'a pass over the transaction coordinators failed'),
    });
    this.namer = new ApplicationNamer({ patterns, eoswatchPrefixes: opts.eoswatchPrefixes ?? [] }, opts.maxApplications);
    this.series = new TransactionsSeries(this.metrics, this.namer, opts.topN);
    this.ends = new PassEnds(kafka, this.logger, () => this.failed('offsets'), () => this.stopped);
    this.activity = new WriteActivity(10 * opts.intervalMs);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.states = new Map();
    this.held.clear();
    this.next = undefined;
    this.lastHanging = [];
    this.source = 'log';
    this.admin = new TxnAdmin(this.kafka, { attempts: 3 });
    this.ends.start();
    this.setSource('log');
    this.logger.info({ intervalMs: this.opts.intervalMs, idleAfterMs: this.opts.idleAfterMs }, 'transactions service started');
    this.periodic.start();
  }

  private setSource(s: TransactionsSource): void {
    this.source = s;
    this.metrics.source.set({ source: 'log' }, s === 'log' ? 1 : 0);
    this.metrics.source.set({ source: 'poll' }, s === 'poll' ? 1 : 0);
  }

  /** One pass: the coordinator's state (log or poll), events, hanging transactions, metrics; false when neither the log nor the coordinators answered. */
  async pass(): Promise<boolean> {
    let open: OpenTransaction[] | undefined;
    if (this.source === 'log' || !this.denied || ++this.passesSinceLogTry >= LOG_RETRY_PASSES) {
      this.passesSinceLogTry = 0;
      if (await this.readLog()) open = this.openFromLog();
    }
    if (!open) open = await this.poll();
    if (this.stopped) return true;
    if (!open) {
      // Neither the log nor the coordinators answered: no figure of this pass is known. The
      // per-application gauges and the named hanging transactions go (stale series would keep an
      // alert firing, or silent, on old news) until a pass succeeds; eos_coordinator_up says why.
      this.metrics.up.set(0);
      this.series.forget();
      if (this.report) this.report = { ...this.report, at: new Date().toISOString(), problem: this.problem, open: 0, oldestOpen: [], hanging: [] };
      return false;
    }
    this.metrics.up.set(1);
    const now = Date.now();
    const hanging = await this.findHanging(open, now);
    const ids: LiveId[] = this.source === 'log' ? [...this.states].map(([id, v]) => [id, v.clientTransactionVersion]) : [...this.pollIds.keys()].map((id) => [id, null]);
    this.series.export(ids, open, hanging, now);
    for (const h of newlyHanging(hanging, this.report)) {
      this.logger.warn({ transactionalId: h.transactionalId, topic: h.topic, partition: h.partition, producerId: h.producerId, heldBack: String(h.heldBack), abortDue: abortDue(h, now) }, 'hanging transaction: its producer went quiet while it holds the last stable offset (eoswatch transactions find-hanging; abort --transactional-id)');
    }
    this.report = passReport({ now, source: this.source, problem: this.problem, liveIds: ids.length, open, hanging, topN: this.opts.topN, application: (id) => this.namer.name(id).application });
    return true;
  }

  /** Reads the log since the last pass; false when it cannot be read (then the poll source is used). */
  private async readLog(): Promise<boolean> {
    try {
      const first = this.next === undefined;
      const baselineFromMs = Date.now();
      const { entries, next } = await readTransactionLog(this.kafka, this.next ? { from: this.next } : {});
      const batch: TxnEvent[] = [];
      const emit = (ev: TxnEvent) => {
        this.count(ev);
        batch.push(ev);
      };
      for (const e of entries) {
        if (e.record.kind === 'unknown-key') continue;
        const id = e.record.transactionalId;
        const before = this.states.get(id);
        const after = e.record.kind === 'transaction' ? e.record.value : null;
        // A baseline pass takes time: what the coordinator wrote since the pass began is news (by
        // the record's broker timestamp), so that nothing committed meanwhile goes uncounted.
        if (!first || e.timestampMs >= baselineFromMs) {
          for (const ev of this.held.transition(id, after, e.timestampMs)) emit(ev);
          for (const ev of transitionEvents(id, before, after, e.timestampMs)) for (const x of this.held.take(ev)) emit(x);
        }
        if (after) this.states.set(id, after);
        else this.states.delete(id);
      }
      this.next = next;
      for (const ev of this.held.due(Date.now())) emit(ev);
      for (const l of this.listeners) l(batch, first);
      if (this.source !== 'log') this.logger.info(first ? 'the transaction log can be read again: outcomes and durations are counted from now on' : 'the transaction log can be read again, from where the last pass stopped');
      if (first) this.logger.info({ ids: this.states.size, records: entries.length }, 'transaction log read: the current state of every transactional id (history, not counted)');
      this.setSource('log');
      this.problem = null;
      return true;
    } catch (err) {
      const msg = redactText(errorMessage(err));
      const permission = PERMISSION.test(msg);
      this.failed('log', permission ? 'permission' : 'error');
      if (this.source === 'log') {
        this.logger.warn(
          { err: msg },
          permission
            ? 'cannot read __transaction_state (no Describe/Read ACL on it): polling ListTransactions/DescribeTransactions instead; outcomes, durations and fencings are not counted'
            : 'cannot read __transaction_state: polling the coordinator this interval',
        );
      }
      this.denied = permission;
      this.problem = permission ? `no read permission on __transaction_state: ${msg}` : `reading __transaction_state: ${msg}`;
      // OFFSET_OUT_OF_RANGE: the position is no longer in the log; reading on from it would fail forever.
      if (permission || OUT_OF_RANGE.test(msg)) {
        // Refused: polled from now on; when the permission comes, the log is read from the
        // beginning again (a baseline), never counting what was missed as news.
        this.next = undefined;
        this.states = new Map();
        this.held.clear();
      }
      // Any other failure (a leader moving, a broker restarting) keeps the position: the next
      // pass reads on from it, so what the coordinator wrote meanwhile is still counted.
      this.setSource('poll');
      return false;
    }
  }

  private readonly listeners: ((events: readonly TxnEvent[], baseline: boolean) => void)[] = [];

  /**
   * Calls `listener` after every pass over the log with that pass's events in the order read ([]
   * when none); `baseline`: the pass only built the state (the first one, or the first after the log
   * could not be read), events before it are lost. For src/flink/sink-commits.ts.
   */
  onEvents(listener: (events: readonly TxnEvent[], baseline: boolean) => void): void {
    this.listeners.push(listener);
  }

  private count(ev: TxnEvent): void {
    const application = this.namer.name(ev.transactionalId).application;
    if (ev.kind === 'ended') {
      this.metrics.outcomes.inc({ application, outcome: ev.outcome });
      this.metrics.duration.observe({ application }, ev.durationMs / 1000);
    } else if (ev.kind === 'completed') {
      if (ev.committed) this.metrics.completion.observe({ application }, ev.completionMs / 1000);
    } else if (ev.kind === 'fenced') {
      this.metrics.fencings.inc({ application });
      this.logger.info({ application, producerId: ev.producerId, producerEpoch: ev.producerEpoch, previousProducerEpoch: ev.previousProducerEpoch }, 'a producer was fenced: another instance took its transactional id while a transaction was open');
    }
  }

  private openFromLog(): OpenTransaction[] {
    const out: OpenTransaction[] = [];
    for (const [id, v] of this.states) {
      if (!holdsLso(v.state)) continue;
      out.push({
        transactionalId: id,
        producerId: v.producerId,
        producerEpoch: v.producerEpoch,
        state: v.state,
        startTimestampMs: v.startTimestampMs,
        transactionTimeoutMs: v.transactionTimeoutMs,
        prepared: isTwoPhaseCommit(v.transactionTimeoutMs),
        partitions: (v.partitions ?? []).flatMap((t) => t.partitionIds.map((partition) => ({ topic: t.topic, partition }))),
      });
    }
    return out;
  }

  /** ListTransactions + DescribeTransactions of the open ones; the live ids go into `states` as far as the listing tells. */
  private async poll(): Promise<OpenTransaction[] | undefined> {
    try {
      const brokers = await this.admin!.listTransactions();
      const listed = new Map<string, string>();
      for (const b of brokers) {
        if (b.error) {
          this.failed('poll', b.error.kind === 'permission' ? 'permission' : 'error');
          continue;
        }
        for (const t of b.transactions) listed.set(t.transactionalId, t.state);
      }
      this.pollIds = listed;
      const openIds = [...listed].filter(([, s]) => holdsLso(s as TxnLogValue['state'])).map(([id]) => id);
      const described: Awaited<ReturnType<TxnAdmin["describeTransactions"]>> = openIds.length ? await this.admin!.describeTransactions(openIds) : new Map();
      const out: OpenTransaction[] = [];
      for (const [id, d] of described) {
        if (!d.description) continue;
        const t = d.description;
        if (!holdsLso(t.state as TxnLogValue['state'])) continue;
        out.push({
          transactionalId: id,
          producerId: t.producerId,
          producerEpoch: t.producerEpoch,
          state: t.state,
          startTimestampMs: t.transactionStartTimeMs,
          transactionTimeoutMs: t.transactionTimeoutMs,
          prepared: isTwoPhaseCommit(t.transactionTimeoutMs),
          partitions: t.topics.flatMap((x) => x.partitions.map((partition) => ({ topic: x.topic, partition }))),
        });
      }
      return out;
    } catch (err) {
      const msg = redactText(errorMessage(err));
      this.failed('poll');
      this.logger.warn({ err: msg }, 'cannot poll the transaction coordinators');
      this.problem = `${this.problem ?? ''}${this.problem ? '; ' : ''}polling the coordinators: ${msg}`;
      await this.admin?.close();
      if (!this.stopped) this.admin = new TxnAdmin(this.kafka, { attempts: 3 });
      return undefined;
    }
  }

  private pollIds = new Map<string, string>();
  /** When eoswatch saw each producer of a held partition write last (the hanging verdict's idleness). */
  private readonly activity: WriteActivity;

  /** The partitions the open transactions touch whose LSO < HW, their producers, and findHanging. */
  private async findHanging(open: OpenTransaction[], now: number): Promise<HangingTransaction[]> {
    const topics = [...new Set(open.flatMap((t) => t.partitions.map((p) => p.topic)))].sort();
    const watchOnly = (this.opts.watchTopics ?? []).filter((t) => !topics.includes(t));
    if (!topics.length && !watchOnly.length) return (this.lastHanging = []);
    // Partitions this pass could not judge: a hanging transaction found there before is carried
    // over while the coordinator still has it open (a failed read is no news of its end).
    const unjudged = new Set<string>();
    const carried = (): HangingTransaction[] =>
      this.lastHanging.filter((h) => (unjudged.has(`${h.topic}\u0000${h.partition}`) || unjudged.has(h.topic)) && open.some((t) => t.transactionalId === h.transactionalId && t.producerId === h.producerId));
    try {
      const ends = topics.length ? await this.ends.ofOpen(topics, unjudged) : new Map<string, PartitionEnds[]>();
      // The watched topics without an open transaction: only where one no coordinator knows may hide.
      if (watchOnly.length) await this.ends.ofWatched(watchOnly, ends);
      const views: PartitionView[] = [];
      for (const [topic, parts] of ends) {
        const held = parts.filter((p) => p.lso < p.high);
        if (!held.length) continue;
        const producers = await this.admin!.describeProducers(topic, held.map((p) => p.partition));
        for (const p of held) {
          const ps = producers.get(p.partition);
          if (!ps || ps.error) {
            if (ps?.error) this.failed('producers', ps.error.kind === 'permission' ? 'permission' : 'error');
            unjudged.add(`${topic}\u0000${p.partition}`);
            continue;
          }
          views.push({
            topic,
            partition: p.partition,
            high: p.high,
            lso: p.lso,
            producers: ps.producers.map((s) => ({ producerId: s.producerId, producerEpoch: s.producerEpoch, lastTimestampMs: s.lastTimestamp, lastSequence: s.lastSequence, currentTransactionStartOffset: s.currentTxnStartOffset })),
          });
        }
      }
      // Idle by eoswatch's observation of the producers' sequences, never by the records' own timestamps.
      // Polled, the coordinators' listing may lack ids (a broker that failed to answer, ids eoswatch
      // may not Describe, which ListTransactions leaves out without an error): a holder missing
      // from it is not known to be unknown to the coordinator. Only the log says that.
      const found = findHanging(this.activity.observe(views, now), open, now, this.opts.idleAfterMs).filter((h) => this.source === 'log' || h.kind !== 'unknown-to-coordinator');
      return (this.lastHanging = [...found, ...carried()]);
    } catch (err) {
      this.failed('offsets');
      this.logger.warn({ err: redactText(errorMessage(err)) }, 'cannot read the ends and producers of the partitions of open transactions');
      await this.ends.renew();
      for (const h of this.lastHanging) unjudged.add(`${h.topic}\u0000${h.partition}`);
      return (this.lastHanging = carried());
    }
  }

  /** The hanging transactions of the last pass (carried over where a pass could not judge their partition). */
  private lastHanging: HangingTransaction[] = [];

  get lastReport(): TransactionsReport | undefined {
    return this.report;
  }

  router(): Router {
    return jsonReportRouter(() => this.report, () => 'the first pass over the transaction coordinators has not finished yet');
  }

  ready(): ServiceHealth {
    if (!this.report) return { ready: false, detail: this.problem ?? 'the first pass over the transaction coordinators has not finished' };
    return { ready: true, detail: readyDetail(this.report) };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.periodic.stop();
    await this.admin?.close();
    await this.ends.close();
    this.admin = undefined;
  }
}

export const transactionsService = defineService({
  name: 'transactions',
  section: 'transactions',
  enabled: (config) => config.transactions.enabled,
  create: ({ config, ctx, kafka }) => {
    const t = config.transactions;
    const service = new TransactionsService(
      kafka({ requestTimeout: periodicRequestTimeout(config.kafka.requestTimeout, t.interval) }, { retries: 1 }),
      {
        intervalMs: t.interval,
        idleAfterMs: t.idleAfter,
        patterns: t.patterns,
        maxApplications: t.maxApplications,
        topN: t.topN,
        eoswatchPrefixes: config.pipeline.enabled ? [config.pipeline.transactionalIdPrefix] : [],
        watchTopics: watchedTopics(config).sort(),
      },
      ctx,
    );
    return { service, routes: [{ path: '/transactions', description: 'open and hanging transactions of the cluster, named (JSON)', router: service.router() }] };
  },
});
