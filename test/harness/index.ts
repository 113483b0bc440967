// Test helpers around the real local cluster: one shared cluster per integration file, unique
// topic and group names per test, an independent read_committed reader, and cleanup that stops
// every process by pid even when a test fails.
import { after, before } from 'node:test';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { LocalCluster, type ClusterOptions } from '../../src/localcluster/cluster.js';
import { ensureTopics } from '../../src/kafka/admin.js';

export { LocalCluster };

/**
 * A cluster for one describe block: started in its before hook, stopped (by pid) in its after
 * hook even when tests fail. The process exit hook of LocalCluster is the last resort.
 */
export function useCluster(opts: ClusterOptions = {}): { readonly cluster: LocalCluster } {
  let cluster: LocalCluster | undefined;
  before(async () => {
    cluster = await LocalCluster.start(opts);
  });
  after(async () => {
    await cluster?.down();
  });
  return {
    get cluster(): LocalCluster {
      if (!cluster) throw new Error('cluster not started (did its before hook fail?)');
      return cluster;
    },
  };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function kafkaFor(brokers: string[], clientId = uniqueName('test')): Kafka {
  return new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } });
}

export async function createTopic(brokers: string[], topic: string, partitions: number, replicationFactor: number): Promise<void> {
  const admin = kafkaFor(brokers).admin();
  await admin.connect();
  try {
    await ensureTopics(admin, [{ topic, numPartitions: partitions, replicationFactor }]);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads a topic from the beginning up to its current end with a plain kafkajs consumer
 * (read_committed unless told otherwise), independent of any eoswatch code path.
 */
export async function readAll(
  brokers: string[],
  topic: string,
  opts: { readUncommitted?: boolean; timeoutMs?: number } = {},
): Promise<{ partition: number; message: KafkaMessage }[]> {
  const kafka = kafkaFor(brokers);
  const admin = kafka.admin();
  await admin.connect();
  // The high watermark is the end for read_uncommitted; read_committed stops at the LSO, which equals
  // the high watermark once no transaction is open: wait for the last stable offset to catch up.
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
  await admin.disconnect();
  const out: { partition: number; message: KafkaMessage }[] = [];
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), readUncommitted: opts.readUncommitted ?? false });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const reached = new Set<number>();
  for (const [p, end] of ends) if (end === 0n) reached.add(p);
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  if (reached.size === ends.size) done();
  // END_BATCH_PROCESS also fires for batches holding only control records or aborted data,
  // whose lastOffset still moves the position: that is how a topic ending in a marker is finished.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const end = ends.get(payload.partition) ?? 0n;
    if (BigInt(payload.lastOffset) + 1n >= end && !reached.has(payload.partition)) {
      reached.add(payload.partition);
      if (reached.size === ends.size) done();
    }
  });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) out.push({ partition: batch.partition, message: m });
    },
  });
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      finished,
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error(`readAll(${topic}) did not reach the end of partitions ${[...ends.keys()].filter((p) => !reached.has(p)).join(', ')} in ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return out;
}

/** Spawns a child process and registers its SIGKILL (by pid) for the end of the file. */
export function spawnTracked(cmd: string, args: string[], opts: Parameters<typeof spawn>[2] = {}): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  after(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
  return child;
}

/** Collects a child's stdout and resolves when a line matches. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${buf.slice(-4000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        const m = line.match(pattern);
        if (m) {
          clearTimeout(timer);
          child.stdout?.off('data', onData);
          resolve(m);
          return;
        }
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${code ?? sig}) before a line matched ${pattern}; output:\n${buf.slice(-4000)}`));
    });
  });
}

export const CLI = ['--import', 'tsx', 'src/cli.ts'];
