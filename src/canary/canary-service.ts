// The canary service: writes canary records (verification records of a run of its own) at a steady
// rate into a source topic, reads the sink read_committed and counts every arrival per source
// partition sequence (src/canary/tracker.ts): eos_canary_records_total{result} and the end-to-end
// latency. Each start is a new run `canary.<id>.<start time>`, so sequences never collide with an
// earlier start's, and records of an earlier start still in flight are counted when they arrive.
//
// The reader joins the group `<id>.canary-reader` only to get partitions: it never commits, and
// keeps its own position per sink partition (the sink's end when the canary started, then the
// offset after the last record it handled), seeking back to it after any rejoin. A re-read is
// therefore never mistaken for a duplicate, and a reset to "latest" never skips records.
import type { Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Config } from '../config/types.js';
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { LATENCY_BUCKETS } from '../metrics/pipeline.js';
import { PIPELINE_LABELS, type PipelineLabels } from '../metrics/checkpoint-stats.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { makeRecord, parseVerifyRecord } from '../verify/record.js';
import { sendPerPartition } from '../kafka/send.js';
import { neededPermissions } from '../kafka/needed-acls.js';
import type { PermissionWatch } from '../kafka/permissions.js';
import { permissionWatch } from '../kafka/permission-probe.js';
import { withTimeout } from '../util/timeout.js';
import type { Periodic } from '../runtime/periodic.js';
import { every } from '../runtime/runs.js';
import { CanaryTracker, type CanaryResult } from './tracker.js';
import { defineService } from '../service.js';

export interface CanaryOptions {
  id: string;
  pipeline: string;
  sourceTopic: string;
  sinkTopic: string;
  rate: number;
  lostAfterMs: number;
  valueDelta?: number;
}

/** The canary's effective topics and checks from the config (defaults from the pipeline section). */
export function canaryTopics(config: Config): CanaryOptions {
  const c = config.canary;
  const p = config.pipeline;
  const throughOwnPipeline = p.enabled && (c.sourceTopic ?? p.sourceTopic) === p.sourceTopic && (c.sinkTopic ?? p.sinkTopic) === p.sinkTopic;
  const pipelineDelta = p.transformModule ? undefined : p.transform === 'increment' ? 1 : 0;
  return {
    id: c.id,
    pipeline: p.name,
    sourceTopic: c.sourceTopic ?? p.sourceTopic,
    sinkTopic: c.sinkTopic ?? p.sinkTopic,
    rate: c.rate,
    lostAfterMs: c.lostAfter,
    valueDelta: c.valueDelta ?? (throughOwnPipeline ? pipelineDelta : undefined),
  };
}

const TICK_MS = 100;
const RESULTS: CanaryResult[] = ['received', 'duplicate', 'out_of_order', 'lost', 'late', 'wrong_value'];

/**
 * The canary's metrics, defined into `registry` (the service, and docs/metrics.md's generator).
 * Every series carries the pipeline labels, pipeline, engine and job_id (src/metrics/checkpoint-stats.ts):
 * pipeline.name, engine="eoswatch" and an empty job_id, so the canary's series join the pipeline's.
 */
export function defineCanaryMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = [...PIPELINE_LABELS];
  return {
    records: new Counter({
      name: 'eos_canary_records_total',
      help: 'Canary records by result: sent, received, duplicate, lost (a gap still open after canary.lostAfter), out_of_order, late (arrived after being counted lost), wrong_value.',
      labelNames: [...labelNames, 'result' as const],
      registers,
    }),
    latency: new Histogram({
      name: 'eos_canary_end_to_end_latency_seconds',
      help: 'Canary record produced to the source until visible at the sink to a read_committed consumer.',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    sendErrors: new Counter({
      name: 'eos_canary_send_errors_total',
      help: 'Canary sends that failed (their records may or may not have been written; they are never counted lost).',
      labelNames,
      registers,
    }),
  };
}

export class CanaryService implements Service {
  readonly name = 'canary';
  run: string;
  private readonly logger: Logger;
  private readonly metrics: ReturnType<typeof defineCanaryMetrics>;
  private readonly tracker: CanaryTracker;
  private readonly published: Record<CanaryResult, number> = { received: 0, duplicate: 0, out_of_order: 0, lost: 0, late: 0, wrong_value: 0 };
  private producer: Producer | undefined;
  private consumer: Consumer | undefined;
  private partitions = 0;
  private seq: number[] = [];
  /** Per source partition, the highest sequence whose send was acknowledged (-1: none). */
  private acked: number[] = [];
  private budget = 0;
  private lastTick = 0;
  /** Sends what the rate allows every TICK_MS; one send at a time, so ticks do not pile up sends while the cluster is unavailable. */
  private readonly ticker: Periodic;
  /** Counts the gaps open longer than lostAfter, every second. */
  private readonly sweeper: Periodic;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Next sink offset to take, per sink partition. */
  private readonly position = new Map<number, bigint>();
  private readonly labels: PipelineLabels;
  private state: 'new' | 'starting' | 'running' | 'stopped' = 'new';
  private lastSendError: string | undefined;
  /** Why the reader stopped (kafkajs gave up on it: a refusal, an error it does not retry), until it runs again. */
  private readerStopped: string | undefined;
  private readerRestarts = 0;
  private readerTimer: NodeJS.Timeout | undefined;
  /** Names the ACLs the brokers refuse after a failed send or a stopped reader. */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly kafka: Kafka,
    private readonly opts: CanaryOptions,
    ctx: ServiceContext,
    now = Date.now(),
  ) {
    this.logger = ctx.logger;
    this.metrics = defineCanaryMetrics(ctx.registry);
    this.labels = { pipeline: opts.pipeline, engine: 'eoswatch', job_id: '' };
    this.run = `canary.${opts.id}.${now.toString(36)}`;
    this.tracker = new CanaryTracker({ ownRun: this.run, lostAfterMs: opts.lostAfterMs, valueDelta: opts.valueDelta });
    const names = { source: opts.sourceTopic, sink: opts.sinkTopic, canarySource: opts.sourceTopic, canarySink: opts.sinkTopic, canaryId: opts.id, group: '-', prefix: '-' };
    this.permissions = permissionWatch({ service: this.name, kafka, needed: () => neededPermissions(names, ['canary']), registry: ctx.registry, logger: ctx.logger });
    for (const r of ['sent', ...RESULTS]) this.metrics.records.inc({ ...this.labels, result: r }, 0);
    const onError = (err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'canary tick failed');
    // A tick whose send failed failed (counted in eos_canary_send_errors_total; the records are the tracker's).
    this.ticker = every(() => this.tick(), { registry: ctx.registry, service: this.name, task: 'send', name: 'the canary sender', intervalMs: TICK_MS, firstDelayMs: TICK_MS, onError });
    this.sweeper = every(
      () => {
        this.tracker.sweep(Date.now());
        this.publish();
      },
      { registry: ctx.registry, service: this.name, task: 'sweep', name: 'the canary sweep', intervalMs: 1000, firstDelayMs: 1000, onError },
    );
  }

  async start(): Promise<void> {
    if (this.state !== 'new') {
      // A restart (src/daemon.ts) is a new run: sequences start at 0 again and must not collide.
      let run = `canary.${this.opts.id}.${Date.now().toString(36)}`;
      if (run === this.run) run += '.1';
      this.run = run;
      this.tracker.startRun(run);
      this.budget = 0;
    }
    this.state = 'starting';
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [this.opts.sourceTopic] });
      this.partitions = meta.topics[0]?.partitions.length ?? 0;
      if (!this.partitions) throw new EosError(ErrorCodes.SERVICE_START_FAILED, `canary source topic ${this.opts.sourceTopic} has no partitions`);
      // Where the reader starts: the sink's end now, before the first canary record of this run.
      for (const o of await admin.fetchTopicOffsets(this.opts.sinkTopic)) this.position.set(o.partition, BigInt(o.high));
    } finally {
      await admin.disconnect();
    }
    this.seq = new Array<number>(this.partitions).fill(0);
    this.acked = new Array<number>(this.partitions).fill(-1);
    // The sender starts once the reader holds its partitions (positioned before any record of
    // this run); start() does not wait for it, so a slow group join never holds up the daemon.
    const { joined } = await this.startReader();
    const tryStart = (): void => {
      this.startSender().catch((err) => {
        this.lastSendError = errorMessage(err);
        this.logger.warn({ err: this.lastSendError }, 'canary sender could not start; retrying in 5 s');
        if (this.state === 'starting') this.retryTimer = setTimeout(tryStart, 5000);
      });
    };
    void joined.then(tryStart);
  }

  private newProducer(): Producer {
    return this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  }

  /**
   * kafkajs' idempotent producer takes a sequence number back after a failed request even when the
   * broker wrote the batch (a timeout, a connection lost after the write); every later batch of
   * that partition then meets OUT_OF_ORDER_SEQUENCE_NUMBER for as long as the producer lives. After
   * a failed send the canary goes on with a new producer (a new producer id). Its failed records
   * were handed to the tracker as failed sends, never counted lost.
   */
  private async replaceProducer(): Promise<void> {
    const old = this.producer;
    const next = this.newProducer();
    await next.connect();
    this.producer = next;
    await withTimeout(old?.disconnect() ?? Promise.resolve(), 2_000, 'canary producer disconnect').catch(() => undefined);
  }

  private async startSender(): Promise<void> {
    if (this.state !== 'starting') return;
    await this.producer?.disconnect().catch(() => undefined); // a failed earlier attempt
    this.producer = this.newProducer();
    await this.producer.connect();
    if (this.state !== 'starting') {
      await this.producer.disconnect().catch(() => undefined); // stopped meanwhile
      return;
    }
    this.state = 'running';
    this.lastTick = Date.now();
    this.ticker.start();
    this.sweeper.start();
    this.logger.info({ run: this.run, source: this.opts.sourceTopic, sink: this.opts.sinkTopic, rate: this.opts.rate, partitions: this.partitions }, 'canary started');
  }

  /** Starts the reader; `joined` resolves at its first group join (wrapped: an async function would wait for it). */
  private async startReader(): Promise<{ joined: Promise<void> }> {
    const consumer = this.kafka.consumer({ groupId: `${this.opts.id}.canary-reader`, maxWaitTimeInMs: 100, sessionTimeout: 30_000, heartbeatInterval: 3000 });
    this.consumer = consumer;
    let joined!: () => void;
    const firstJoin = new Promise<void>((r) => (joined = r));
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      for (const p of payload.memberAssignment[this.opts.sinkTopic] ?? []) {
        const pos = this.position.get(p);
        if (pos !== undefined) consumer.seek({ topic: this.opts.sinkTopic, partition: p, offset: String(pos) });
      }
      joined();
    });
    // Batches of only transaction markers never reach eachBatch; step over them here.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.batchSize !== 0 || payload.topic !== this.opts.sinkTopic) return;
      const first = (payload as { firstOffset?: string | null }).firstOffset;
      const pos = this.position.get(payload.partition);
      if (first != null && pos !== undefined && BigInt(first) <= pos) this.position.set(payload.partition, BigInt(payload.lastOffset) + 1n);
    });
    // kafkajs restarts a consumer after a retriable crash by itself; after any other (a refused
    // Fetch, a group it may not join) it stops for good. The canary's reader is started again
    // (its positions kept), with a growing delay, and says why meanwhile.
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart || consumer !== this.consumer || this.state === 'stopped') return;
      this.readerStopped = errorMessage(payload.error);
      void this.permissions.failed(payload.error);
      const delayMs = this.nextReaderDelay();
      this.logger.warn({ err: this.readerStopped, delayMs }, 'canary reader stopped; starting it again after a delay (its records are not counted lost meanwhile)');
      this.readerTimer = setTimeout(() => void this.restartReader(), delayMs);
    });
    consumer.on(consumer.events.FETCH, () => {
      if (consumer !== this.consumer || this.readerStopped === undefined) return;
      this.logger.info('canary reader runs again');
      this.readerStopped = undefined;
      this.readerRestarts = 0;
      if (this.lastSendError === undefined) this.permissions.succeeded();
    });
    await consumer.connect();
    await consumer.subscribe({ topic: this.opts.sinkTopic, fromBeginning: false });
    await consumer.run({ autoCommit: false, eachBatch: (p) => this.onBatch(p) });
    return { joined: firstJoin };
  }

  /** 2 s, doubling to 1 min, per start of the reader that failed since it last ran. */
  private nextReaderDelay(): number {
    return Math.min(60_000, 2_000 * 2 ** Math.min(this.readerRestarts++, 5));
  }

  private stopped(): boolean {
    return this.state === 'stopped';
  }

  private async restartReader(): Promise<void> {
    if (this.state === 'stopped') return;
    const old = this.consumer;
    await old?.disconnect().catch(() => undefined);
    try {
      await this.startReader();
    } catch (err) {
      this.readerStopped = errorMessage(err);
      void this.permissions.failed(err);
      const delayMs = this.nextReaderDelay();
      this.logger.warn({ err: this.readerStopped, delayMs }, 'canary reader could not start; trying again after a delay');
      if (!this.stopped()) this.readerTimer = setTimeout(() => void this.restartReader(), delayMs);
    }
  }

  private async onBatch({ batch }: EachBatchPayload): Promise<void> {
    const fetched = BigInt(String((batch as unknown as { fetchedOffset: string }).fetchedOffset));
    let pos = this.position.get(batch.partition);
    if (pos === undefined) pos = fetched; // a partition added to the sink after the start
    if (fetched > pos) {
      // kafkajs' position ran ahead of ours (a reset to latest after a rejoin): go back.
      this.consumer?.seek({ topic: batch.topic, partition: batch.partition, offset: String(pos) });
      return;
    }
    const now = Date.now();
    for (const m of batch.messages) {
      const offset = BigInt(m.offset);
      if (offset < pos) continue; // already handled before a rejoin
      pos = offset + 1n;
      const r = parseVerifyRecord(m.value);
      if (!r || !r.run.startsWith(`canary.${this.opts.id}.`)) continue;
      const ack = (r as { ack?: unknown }).ack;
      const results = this.tracker.arrive({ run: r.run, partition: r.p, seq: r.seq, value: r.value, ack: typeof ack === 'number' ? ack : undefined }, now);
      if (results.includes('received')) this.metrics.latency.observe(this.labels, Math.max(0, now - r.ts) / 1000);
      if (results.includes('duplicate')) this.logger.warn({ id: r.id, sinkPartition: batch.partition, offset: m.offset }, 'canary record seen twice at the sink');
    }
    const last = BigInt(batch.lastOffset()) + 1n;
    this.position.set(batch.partition, last > pos ? last : pos);
    this.publish();
  }

  /** One tick: false when its send failed (a tick that sends nothing has not failed). */
  private async tick(): Promise<boolean> {
    const now = Date.now();
    this.budget = Math.min(this.budget + ((now - this.lastTick) / 1000) * this.opts.rate, Math.max(1, this.opts.rate));
    this.lastTick = now;
    if (this.budget < 1 || this.state !== 'running') return true;
    const n = Math.floor(this.budget);
    this.budget -= n;
    await this.send(n);
    return this.lastSendError === undefined;
  }

  private async send(n: number): Promise<void> {
    const byPartition = new Map<number, { seqs: number[]; messages: { key: string; partition: number; value: string }[] }>();
    const ts = Date.now();
    for (let i = 0; i < n; i++) {
      // Round-robin: the partition with the fewest sequences so far.
      let p = 0;
      for (let q = 1; q < this.partitions; q++) if (this.seq[q]! < this.seq[p]!) p = q;
      const group = byPartition.get(p) ?? byPartition.set(p, { seqs: [], messages: [] }).get(p)!;
      // ack: the highest lower sequence written whenever this one is (src/canary/tracker.ts):
      // the last acknowledged one, or the previous record of the same request.
      const seq = this.seq[p]!++;
      const r = { ...makeRecord(this.run, p, seq, ts), ack: group.seqs.length ? seq - 1 : this.acked[p]! };
      group.seqs.push(r.seq);
      group.messages.push({ key: r.id, partition: p, value: JSON.stringify(r) });
    }
    // One partition per request (src/kafka/send.ts), each with its own outcome for the tracker.
    let failed = false;
    for (const [p, group] of byPartition) {
      if (failed) {
        // Not sent: a failed send of an earlier partition replaced the producer (below).
        this.tracker.sendFailed(p, group.seqs, Date.now());
        continue;
      }
      try {
        await sendPerPartition(this.producer!, this.opts.sourceTopic, group.messages);
        this.acked[p] = group.seqs[group.seqs.length - 1]!;
        this.metrics.records.inc({ ...this.labels, result: 'sent' }, group.seqs.length);
        if (this.lastSendError) this.logger.info('canary sends succeed again');
        this.lastSendError = undefined;
        if (this.readerStopped === undefined) this.permissions.succeeded();
      } catch (err) {
        this.tracker.sendFailed(p, group.seqs, Date.now());
        this.metrics.sendErrors.inc(this.labels);
        const msg = errorMessage(err);
        if (this.lastSendError !== msg) this.logger.warn({ err: msg }, 'canary send failed; its records are not counted as lost');
        this.lastSendError = msg;
        void this.permissions.failed(err);
        failed = true;
      }
    }
    if (failed) await this.replaceProducer().catch(() => undefined);
  }

  /** Moves the tracker's counts into the counters. */
  private publish(): void {
    for (const r of RESULTS) {
      const d = this.tracker.counts[r] - this.published[r];
      if (d > 0) {
        this.metrics.records.inc({ ...this.labels, result: r }, d);
        this.published[r] = this.tracker.counts[r];
        if (r === 'lost') this.logger.error({ lost: d, run: this.run, latest: this.tracker.lostIds.slice(-10) }, 'canary records lost: a gap at the sink stayed open longer than canary.lostAfter');
      }
    }
  }

  ready(): ServiceHealth {
    if (this.state === 'starting') return { ready: false, detail: 'canary reader joining its group' };
    if (this.state !== 'running') return { ready: false, detail: `canary ${this.state}` };
    // Ready while failing: the canary's failures are reported, never counted as lost records.
    const missing = this.permissions.text();
    const problems = [this.lastSendError && `sends failing: ${this.lastSendError}`, this.readerStopped && `reader stopped: ${this.readerStopped}`, missing].filter(Boolean);
    return { ready: true, detail: problems.length ? problems.join('; ') : `run ${this.run}` };
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.retryTimer);
    clearTimeout(this.readerTimer);
    // Waits for the send in flight.
    await Promise.all([this.ticker.stop(), this.sweeper.stop()]);
    await this.producer?.disconnect().catch(() => undefined);
    await this.consumer?.disconnect().catch(() => undefined);
  }
}

export const canaryService = defineService({
  name: 'canary',
  section: 'canary',
  enabled: (config) => config.canary.enabled,
  create: ({ config, ctx, kafka }) => ({ service: new CanaryService(kafka({}, { initialRetryTime: 100, maxRetryTime: 2000, retries: 10 }), canaryTopics(config), ctx) }),
});
