// The transactions service: every transactional producer of the cluster as the transaction
// coordinator sees it, from __transaction_state (src/kafka/txn-log-reader.ts), named by
// application (applications.ts), turned into events (events.ts), hanging transactions found with
// the partitions' ends and producer states (hanging.ts). All I/O on the service's own timer (a Periodic, src/runtime/periodic.ts).
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
import { EndOffsetReader, type PartitionEnds } from '../kafka/offsets.js';
import { TRANSACTION_OUTCOMES, defineTransactionsMetrics, type TransactionsMetrics } from '../metrics/transactions.js';
import { ApplicationNamer, checkPattern } from './applications.js';
import { transitionEvents, type TxnEvent } from './events.js';
import { HeldAborts } from './fence-window.js';
import type { Periodic } from '../runtime/periodic.js';
import { every, failures, type FailureKind } from '../runtime/runs.js';
import { abortDue, findHanging, isTwoPhaseCommit, WriteActivity, type HangingTransaction, type OpenTransaction, type PartitionView } from './hanging.js';
import { defineService, jsonReportRouter } from '../service.js';
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
  private reader: EndOffsetReader | undefined;
  private readonly periodic: Periodic;
  /** Counts a failure inside a pass (eos_service_errors_total): the log, the poll, offsets, producers. */
  private readonly failed: (what: 'log' | 'poll' | 'offsets' | 'producers', kind?: FailureKind) => void;
  private stopped = false;
  private report: TransactionsReport | undefined;
  /** Label sets with series, to remove those that went away. */
  private readonly apps = new Set<string>();
  /** Applications whose counters exist (from 0). */
  private readonly counted = new Set<string>();
  private readonly versionLabels = new Set<string>();
  private readonly infoLabels = new Map<string, Record<string, string>>();

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
    this.reader = new EndOffsetReader(this.kafka);
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
      this.forgetSeries();
      if (this.report) this.report = { ...this.report, at: new Date().toISOString(), problem: this.problem, open: 0, oldestOpen: [], hanging: [] };
      return false;
    }
    this.metrics.up.set(1);
    const now = Date.now();
    const hanging = await this.findHanging(open, now);
    this.export(open, hanging, now);
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
      const ends = topics.length ? await this.readEnds(topics, unjudged) : new Map<string, PartitionEnds[]>();
      // The watched topics without an open transaction: only where one no coordinator knows may hide. A topic
      // that cannot be read there (deleted, not created yet) costs nothing else: the LSO monitor reports it.
      if (watchOnly.length) {
        try {
          for (const [t, parts] of await this.reader!.readMany(watchOnly)) ends.set(t, parts);
        } catch (err) {
          this.logger.debug({ err: redactText(errorMessage(err)), topics: watchOnly }, 'cannot read the ends of the watched topics');
          // kafkajs keeps the topic it failed on among its metadata targets: the next pass on a fresh reader.
          await this.reader?.close();
          if (!this.stopped) this.reader = new EndOffsetReader(this.kafka);
        }
      }
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
      await this.reader?.close();
      if (!this.stopped) this.reader = new EndOffsetReader(this.kafka);
      for (const h of this.lastHanging) unjudged.add(`${h.topic}\u0000${h.partition}`);
      return (this.lastHanging = carried());
    }
  }

  /**
   * The ends of the open transactions' topics: one request for all, and where that fails, topic by
   * topic, so one topic that cannot be read (deleted under an open transaction, not described to
   * eoswatch) costs the judgement of its own partitions only; its name goes to `unjudged`.
   */
  private async readEnds(topics: string[], unjudged: Set<string>): Promise<Map<string, PartitionEnds[]>> {
    try {
      return await this.reader!.readMany(topics);
    } catch (err) {
      // Topic by topic only for an error of a topic (a broker that does not answer would cost a
      // request timeout per topic: the pass fails as a whole instead).
      if (topics.length === 1 || !topicSpecific(err)) throw err;
    }
    // kafkajs keeps a topic it failed on among its metadata targets: a fresh reader after each failure.
    const renew = async () => {
      await this.reader?.close();
      if (this.stopped) throw new Error('the transactions service stopped');
      this.reader = new EndOffsetReader(this.kafka);
      return this.reader;
    };
    let reader = await renew();
    const out = new Map<string, PartitionEnds[]>();
    for (const topic of topics) {
      try {
        for (const [t, parts] of await reader.readMany([topic])) out.set(t, parts);
      } catch (err) {
        if (!topicSpecific(err)) throw err;
        this.failed('offsets');
        this.logger.warn({ err: redactText(errorMessage(err)), topic }, 'cannot read the ends of a topic of open transactions: its partitions are not judged this pass');
        unjudged.add(topic);
        reader = await renew();
      }
    }
    return out;
  }

  /** The hanging transactions of the last pass (carried over where a pass could not judge their partition). */
  private lastHanging: HangingTransaction[] = [];

  private openView(t: OpenTransaction, now: number): OpenView {
    return {
      transactionalId: t.transactionalId,
      application: this.namer.name(t.transactionalId).application,
      producerId: t.producerId,
      producerEpoch: t.producerEpoch,
      state: t.state,
      partitions: t.partitions,
      startedAt: new Date(t.startTimestampMs).toISOString(),
      ageMs: Math.max(0, now - t.startTimestampMs),
      abortDue: abortDue({ abortAtMs: t.prepared ? null : t.startTimestampMs + t.transactionTimeoutMs }, now),
    };
  }

  /** Removes every gauge series of the last pass (the counters and histograms stay: they are totals). */
  private forgetSeries(): void {
    const m = this.metrics;
    for (const a of this.apps) for (const g of [m.open, m.oldestOpen, m.ids, m.hanging]) g.remove({ application: a });
    this.apps.clear();
    for (const k of this.versionLabels) {
      const [application, version] = k.split('\u0000') as [string, string];
      m.versions.remove({ application, version });
    }
    this.versionLabels.clear();
    for (const labels of this.infoLabels.values()) m.hangingInfo.remove(labels);
    this.infoLabels.clear();
  }

  private export(open: OpenTransaction[], hanging: HangingTransaction[], now: number): void {
    const m = this.metrics;
    const perApp = new Map<string, { open: number; oldest: number; ids: number; hanging: number; versions: Map<number, number> }>();
    const app = (a: string) => {
      let e = perApp.get(a);
      if (!e) perApp.set(a, (e = { open: 0, oldest: 0, ids: 0, hanging: 0, versions: new Map() }));
      return e;
    };
    const ids: [string, number | null][] = this.source === 'log' ? [...this.states].map(([id, v]) => [id, v.clientTransactionVersion]) : [...this.pollIds.keys()].map((id) => [id, null]);
    for (const [id, version] of ids) {
      const e = app(this.namer.name(id).application);
      e.ids++;
      if (version !== null) e.versions.set(version, (e.versions.get(version) ?? 0) + 1);
    }
    for (const t of open) {
      const e = app(this.namer.name(t.transactionalId).application);
      e.open++;
      e.oldest = Math.max(e.oldest, (now - t.startTimestampMs) / 1000);
    }
    for (const h of hanging) app(h.transactionalId === null ? '(unknown)' : this.namer.name(h.transactionalId).application).hanging++;
    const versionsNow = new Set<string>();
    for (const [application, e] of perApp) {
      if (!this.counted.has(application)) {
        // Counters from 0 at the first sight of an application: increase() and rate() then see
        // its first transactions, and the dashboard's fencing panel has a series before any fencing.
        this.counted.add(application);
        for (const outcome of TRANSACTION_OUTCOMES) m.outcomes.inc({ application, outcome }, 0);
        m.fencings.inc({ application }, 0);
      }
      m.open.set({ application }, e.open);
      m.oldestOpen.set({ application }, Math.max(0, e.oldest));
      m.ids.set({ application }, e.ids);
      m.hanging.set({ application }, e.hanging);
      for (const [v, n] of e.versions) {
        m.versions.set({ application, version: String(v) }, n);
        versionsNow.add(`${application}\u0000${v}`);
      }
    }
    for (const a of this.apps) {
      if (perApp.has(a)) continue;
      m.open.remove({ application: a });
      m.oldestOpen.remove({ application: a });
      m.ids.remove({ application: a });
      m.hanging.remove({ application: a });
    }
    this.apps.clear();
    for (const a of perApp.keys()) this.apps.add(a);
    for (const k of this.versionLabels) {
      if (versionsNow.has(k)) continue;
      const [application, version] = k.split('\u0000') as [string, string];
      m.versions.remove({ application, version });
    }
    this.versionLabels.clear();
    for (const k of versionsNow) this.versionLabels.add(k);
    m.overflowed.set(this.namer.overflowed);

    // The info series: at most topN, the oldest hanging transactions (findHanging sorts them).
    const info = new Map<string, Record<string, string>>();
    for (const h of hanging.slice(0, this.opts.topN)) {
      const labels = { application: h.transactionalId === null ? '(unknown)' : this.namer.name(h.transactionalId).application, topic: h.topic, partition: String(h.partition), transactional_id: h.transactionalId ?? `(producer ${h.producerId})` };
      const key = Object.values(labels).join('\u0000');
      info.set(key, labels);
      m.hangingInfo.set(labels, h.ageMs / 1000);
    }
    for (const [k, labels] of this.infoLabels) if (!info.has(k)) m.hangingInfo.remove(labels);
    this.infoLabels.clear();
    for (const [k, v] of info) this.infoLabels.set(k, v);

    const byOpenId = new Map(open.map((t) => [t.transactionalId, t]));
    const newlyHanging = hanging.filter((h) => !this.report?.hanging.some((r) => r.topic === h.topic && r.partition === h.partition && r.producerId === h.producerId));
    for (const h of newlyHanging) {
      this.logger.warn({ transactionalId: h.transactionalId, topic: h.topic, partition: h.partition, producerId: h.producerId, heldBack: String(h.heldBack), abortDue: abortDue(h, now) }, 'hanging transaction: its producer went quiet while it holds the last stable offset (eoswatch transactions find-hanging; abort --transactional-id)');
    }
    this.report = {
      at: new Date(now).toISOString(),
      source: this.source,
      problem: this.problem,
      liveIds: ids.length,
      open: open.length,
      oldestOpen: [...open].sort((a, b) => a.startTimestampMs - b.startTimestampMs).slice(0, this.opts.topN).map((t) => this.openView(t, now)),
      hanging: hanging.map((h) => {
        const t = byOpenId.get(h.transactionalId ?? '');
        return {
          ...(t ? this.openView(t, now) : { transactionalId: h.transactionalId ?? '', application: '(unknown)', producerId: h.producerId, producerEpoch: h.producerEpoch, state: h.state ?? 'unknown', partitions: h.partitions, startedAt: new Date(now - h.ageMs).toISOString(), ageMs: h.ageMs, abortDue: abortDue(h, now) }),
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

  get lastReport(): TransactionsReport | undefined {
    return this.report;
  }

  router(): Router {
    return jsonReportRouter(() => this.report, () => 'the first pass over the transaction coordinators has not finished yet');
  }

  ready(): ServiceHealth {
    if (!this.report) return { ready: false, detail: this.problem ?? 'the first pass over the transaction coordinators has not finished' };
    const r = this.report;
    const names = r.hanging.slice(0, 3).map((h) => `${h.transactionalId} on ${h.topic}-${h.partition}`);
    const hang = r.hanging.length ? `, ${r.hanging.length} hanging (${names.join(', ')}${r.hanging.length > 3 ? ', …' : ''})` : '';
    const src = r.source === 'log' ? 'from __transaction_state' : `polling the coordinators (${r.problem ?? 'log not read'})`;
    return { ready: true, detail: `${r.liveIds} transactional ids, ${r.open} open${hang}; ${src}` };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.periodic.stop();
    await this.admin?.close();
    await this.reader?.close();
    this.admin = undefined;
    this.reader = undefined;
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

/** An error of one topic (unknown, deleted, not authorized), as kafkajs reports it (its type, or a cause's): the other topics can still be read. */
export function topicSpecific(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const x = e as { type?: string; message?: string; originalError?: unknown; cause?: unknown };
    if (x.type && TOPIC_ERRORS.has(x.type)) return true;
    if (/does not host this topic-partition|not authorized to access topics|unknown topic/i.test(x.message ?? '')) return true;
    e = x.originalError ?? x.cause;
  }
  return false;
}

const TOPIC_ERRORS = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED', 'UNKNOWN_TOPIC_ID', 'INVALID_TOPIC_EXCEPTION']);
