// Pipeline processes for tests: `eoswatch run` as a child process with a generated config,
// tracked by pid, plus a steady seed stream and "caught up" detection on the group's offsets.
import { after } from 'node:test';
import type { Admin } from 'kafkajs';
import { WorkerProcess } from '../../harness/chaos/worker.js';
import { createTopic, kafkaFor, uniqueName } from './index.js';
import { until } from './wait.js';
import { produceSeed } from './seed.js';
import { parsePrometheusText, sampleValue } from './promtext.js';

export interface PipelineSetup {
  brokers: string[];
  source: string;
  sink: string;
  groupId: string;
  prefix: string;
}

export function pipelineConfig(s: PipelineSetup, pipeline: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { host: '127.0.0.1', port: 0 },
    log: { level: 'info' },
    shutdown: { gracePeriod: '20s' },
    kafka: { brokers: s.brokers },
    pipeline: {
      enabled: true,
      sourceTopic: s.source,
      sinkTopic: s.sink,
      groupId: s.groupId,
      transactionalIdPrefix: s.prefix,
      startFrom: 'earliest',
      checkpoint: { interval: '500ms', timeout: '20s' },
      sessionTimeout: '10s',
      heartbeatInterval: '1s',
      ...pipeline,
    },
    ...extra,
  };
}

/** A pipeline worker (harness/chaos/worker.ts) stopped by pid at the end of the test file, with /metrics lookups. */
export class PipelineProcess extends WorkerProcess {
  constructor(config: Record<string, unknown>, name = uniqueName('instance')) {
    super(config, name);
    after(() => this.kill());
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
    return sampleValue(parsePrometheusText(await this.metricsText()), name, labels);
  }

  /** Polls /metrics until `name{labels}` is at least `min` (instead of sleeping and hoping); returns it. */
  async waitMetric(name: string, labels: Record<string, string>, min: number, timeoutMs = 60_000): Promise<number> {
    return until(`${name}${JSON.stringify(labels)} at least ${min}`, () => this.metric(name, labels), timeoutMs, { done: (v) => v !== undefined && v >= min, context: () => this.tail() });
  }

}

/**
 * Writes `total` seed records in chunks, one chunk every intervalMs, while a test injects faults.
 * kafkajs' idempotent producer can fail a broker failover with OUT_OF_ORDER_SEQUENCE_NUMBER, so
 * the stream uses a plain acks=all producer and resends a chunk that failed: the source may then
 * hold a record twice, which is why fault tests take their expectation from the source itself
 * (sourceRecords), not from what the stream meant to send.
 */
export function seedStream(brokers: string[], topic: string, partitions: number, total: number, chunk: number, intervalMs: number) {
  let written = 0;
  let stopped = false;
  const producer = kafkaFor(brokers).producer({ idempotent: false, allowAutoTopicCreation: false, retry: { retries: 10, maxRetryTime: 1000 } });
  const done = (async () => {
    await producer.connect();
    try {
      while (written < total && !stopped) {
        const n = Math.min(chunk, total - written);
        for (let attempt = 1; ; attempt++) {
          try {
            await produceSeed(brokers, topic, partitions, n, { startValue: written, producer });
            break;
          } catch (err) {
            if (stopped) return written;
            if (attempt >= 30) throw err;
            await new Promise((r) => setTimeout(r, 500));
          }
        }
        written += n;
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
    return written;
  })();
  // Stopped at the end of the test: a send in flight is cut by the disconnect, and the stream's
  // retries never outlive the test (they kept a test file's process alive for many minutes after
  // its cluster was gone, and the serial integration run waited for it).
  after(async () => {
    stopped = true;
    await producer.disconnect().catch(() => undefined);
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, 10_000).unref())]);
  });
  return { done };
}

/**
 * Waits until the group's committed offsets reach the end of every source partition (or, given
 * `ends`, those offsets: a source still written to has no end to reach).
 */
export async function waitCaughtUp(brokers: string[], groupId: string, topic: string, timeoutMs = 120_000, ends?: Map<number, bigint>, context?: () => string): Promise<void> {
  const admin = kafkaFor(brokers).admin();
  await admin.connect();
  try {
    await waitGroupCaughtUp(admin, groupId, topic, timeoutMs, ends, context);
  } finally {
    await admin.disconnect();
  }
}

/**
 * waitCaughtUp through a connected admin client (a secured cluster's). `ends`: the offsets to
 * reach; 'first-read' takes the ends the topic has at the first read (what was written before
 * the call: a canary writing on into the topic does not move the target); none: its ends now.
 */
export async function waitGroupCaughtUp(admin: Admin, groupId: string, topic: string, timeoutMs: number, ends?: Map<number, bigint> | 'first-read', context?: () => string): Promise<void> {
  let fixed = ends instanceof Map ? [...ends].map(([partition, high]) => ({ partition, high: String(high) })) : undefined;
  await until(
    `group ${groupId} caught up with ${topic}`,
    async () => {
      const targets = fixed ?? (await admin.fetchTopicOffsets(topic));
      if (ends === 'first-read') fixed = targets;
      const committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions ?? [];
      const behind = targets.filter((e) => {
        const c = committed.find((p) => p.partition === e.partition);
        return !c || BigInt(c.offset) < BigInt(e.high);
      });
      return behind.length === 0 ? true : behind.map((e) => `${e.partition}: ${committed.find((p) => p.partition === e.partition)?.offset ?? '-'} < ${e.high}`).join(', ');
    },
    timeoutMs,
    { intervalMs: 500, done: (v) => v === true, context },
  );
}

/** The last pipeline log lines of each process (kafkajs connection chatter left out), for failure messages. */
export function tails(...ps: PipelineProcess[]): string {
  return ps.map((p) => p.tail()).join('\n');
}

/** Fresh source, sink and dead-letter topics, group and transactional id prefix for one test. */
export async function pipelineTopics(brokers: string[], name: string, partitions: number, replicationFactor: number): Promise<PipelineSetup> {
  const id = uniqueName(name);
  const s: PipelineSetup = { brokers, source: `${id}-in`, sink: `${id}-out`, groupId: `${id}-group`, prefix: id };
  for (const t of [s.source, s.sink, `${s.sink}.dlq`]) await createTopic(brokers, t, partitions, replicationFactor);
  return s;
}
