// The LSO monitor service: reads the high watermark and last stable offset of every partition of
// the watched topics on a timer (never inside a scrape) and reports how long each LSO has stood
// still with records behind it. Stuck longer than `hangingAfter` — longer than any healthy
// transaction may stay open — is a hanging transaction: every read_committed consumer of that
// partition is frozen until it is aborted (kafka-transactions.sh find-hanging / abort).
import type { Kafka } from 'kafkajs';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { errorMessage } from '../errors.js';
import { lsoMetrics } from '../metrics/lso.js';
import { EndOffsetReader, type PartitionEnds } from './offsets.js';
import { LsoTracker, type LsoState } from './lso-tracker.js';

export interface LsoMonitorOptions {
  pipeline: string;
  topics: string[];
  intervalMs: number;
  hangingAfterMs: number;
  /** Every reading as it is taken (the Flink service's visibility latency, wired in src/create-daemon.ts). */
  onReading?: (topic: string, ends: PartitionEnds[], now: number) => void;
}

interface PartitionLabels {
  pipeline: string;
  topic: string;
  partition: string;
}

export class LsoMonitorService implements Service {
  readonly name = 'lso-monitor';
  private readonly logger: Logger;
  private readonly metrics: ReturnType<typeof lsoMetrics>;
  private readonly tracker: LsoTracker;
  private reader: EndOffsetReader | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private polled = false;
  private stopped = false;
  /**
   * Partitions with series, per topic, to remove those that disappear, with the label object of
   * each: the same object is passed on every reading, so /metrics formats its labels once
   * (src/metrics/render.ts).
   */
  private readonly partitions = new Map<string, Map<number, PartitionLabels>>();
  private readonly failing = new Map<string, string>();

  constructor(
    private readonly kafka: Kafka,
    private readonly opts: LsoMonitorOptions,
    ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    this.metrics = lsoMetrics(ctx.registry);
    this.tracker = new LsoTracker(opts.hangingAfterMs);
    this.metrics.hangingAfter.set({ pipeline: opts.pipeline }, opts.hangingAfterMs / 1000);
  }

  async start(): Promise<void> {
    this.reader = new EndOffsetReader(this.kafka);
    this.logger.info({ topics: this.opts.topics, hangingAfterMs: this.opts.hangingAfterMs }, 'LSO monitor started');
    this.schedule(0);
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.running = this.poll().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(this.opts.intervalMs);
      });
    }, delay);
  }

  /** One reading of every watched topic. */
  async poll(): Promise<void> {
    for (const topic of this.opts.topics) {
      if (this.stopped || !this.reader) return;
      const labels = { pipeline: this.opts.pipeline, topic };
      try {
        const ends = await this.reader.read(topic);
        const at = Date.now();
        const states = this.tracker.update(topic, ends, at);
        this.opts.onReading?.(topic, ends, at);
        const before = this.partitions.get(topic);
        const now = new Map<number, PartitionLabels>();
        let hanging = 0;
        for (const s of states) {
          const pl = before?.get(s.partition) ?? { ...labels, partition: String(s.partition) };
          now.set(s.partition, pl);
          this.metrics.lag.set(pl, s.lag);
          this.metrics.stuck.set(pl, s.stuckMs / 1000);
          this.metrics.openAge.set(pl, s.openAgeMs / 1000);
          if (s.hanging) hanging++;
        }
        this.reportTransitions(states);
        this.metrics.hanging.set(labels, hanging);
        this.dropSeries(topic, now);
        if (this.failing.delete(topic)) this.logger.info({ topic }, 'LSO reading works again');
      } catch (err) {
        this.metrics.readErrors.inc(labels);
        this.tracker.forget(topic);
        this.dropSeries(topic, new Map());
        this.metrics.hanging.remove(labels);
        const msg = errorMessage(err);
        if (this.failing.get(topic) !== msg) this.logger.warn({ topic, err: msg }, 'cannot read high watermarks and last stable offsets');
        this.failing.set(topic, msg);
        // A broken connection is rebuilt for the next reading.
        await this.reader?.close();
        if (!this.stopped) this.reader = new EndOffsetReader(this.kafka);
      }
    }
    this.polled = true;
  }

  private reportTransitions(states: LsoState[]): void {
    for (const s of states) {
      if (s.hanging && !s.wasHanging) {
        this.logger.warn(
          { topic: s.topic, partition: s.partition, lagRecords: s.lag, stuckSeconds: Math.round(s.stuckMs / 1000) },
          'hanging transaction: the last stable offset has not moved for longer than lsoMonitor.hangingAfter; read_committed consumers of this partition are frozen (find it with kafka-transactions.sh find-hanging)',
        );
      } else if (!s.hanging && s.wasHanging) {
        this.logger.info({ topic: s.topic, partition: s.partition }, 'hanging transaction cleared: the last stable offset moves again');
      }
    }
  }

  private dropSeries(topic: string, now: Map<number, PartitionLabels>): void {
    for (const [p, pl] of this.partitions.get(topic) ?? []) {
      if (now.has(p)) continue;
      this.metrics.lag.remove(pl);
      this.metrics.stuck.remove(pl);
      this.metrics.openAge.remove(pl);
    }
    this.partitions.set(topic, now);
  }

  ready(): ServiceHealth {
    if (!this.polled) return { ready: false, detail: 'first reading of the watched topics has not finished' };
    const failing = [...this.failing.keys()];
    return { ready: true, detail: failing.length ? `cannot read: ${failing.join(', ')}` : `watching ${this.opts.topics.length} topics` };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.reader?.close();
    this.reader = undefined;
  }
}
