// Test helpers around the real local cluster: one shared cluster per integration file, unique
// topic and group names per test, an independent read_committed reader, and cleanup that stops
// every process by pid even when a test fails.
import { after, before } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { LocalCluster, type ClusterOptions } from '../../harness/localcluster/cluster.js';
import { ensureTopics } from '../../src/kafka/admin.js';
import { readTopic, type SinkStable } from '../../src/verify/reader.js';
import { TrackedProcess } from '../../src/runtime/process.js';

export { LocalCluster };
export { until, type UntilOptions } from './wait.js';

/**
 * A cluster for one describe block: started in its before hook, stopped (by pid) in its after
 * hook even when tests fail. The process exit hook of LocalCluster is the last resort.
 */
export function useCluster(opts: ClusterOptions = {}): { readonly cluster: LocalCluster } {
  let cluster: LocalCluster | undefined;
  before(async () => {
    // One more attempt after a start that failed: a cluster that cannot start is the harness's
    // problem, not the test's; the first failure is printed so that it is not lost.
    try {
      cluster = await LocalCluster.start(opts);
    } catch (err) {
      process.stderr.write(`test harness: the local cluster did not start, trying once more: ${(err as Error).message}\n`);
      cluster = await LocalCluster.start(opts);
    }
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
 * Reads a topic from the beginning up to its current end (read_committed unless told otherwise)
 * with the verifier's reader: a plain kafkajs consumer, independent of the pipeline's code path.
 */
export async function readAll(
  brokers: string[],
  topic: string,
  opts: { readUncommitted?: boolean; timeoutMs?: number; onStable?: (s: SinkStable) => void } = {},
): Promise<{ partition: number; message: KafkaMessage }[]> {
  const out: { partition: number; message: KafkaMessage }[] = [];
  await readTopic(kafkaFor(brokers), topic, { ...opts, onRecord: (partition, message) => out.push({ partition, message }) });
  return out;
}

const tracked = new WeakMap<ChildProcess, TrackedProcess>();

/**
 * Spawns a child process (a TrackedProcess: output kept, killed at exit, under a parent-death
 * signal) and ends it (by SIGKILL) after the file's tests.
 */
export function spawnTracked(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): ChildProcess {
  const p = TrackedProcess.spawn(cmd, args, { name: [cmd, ...args].join(' ').slice(0, 80), pipe: true, dieWithParent: true, ...opts });
  tracked.set(p.child!, p);
  after(() => p.end(0));
  return p.child!;
}

/** Resolves when a line of a child's output matches, lines printed before the call included (bounded generously: a daemon started through tsx on a loaded machine can take tens of seconds to print its first line). */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 90_000): Promise<RegExpMatchArray> {
  return trackedOf(child).waitFor(pattern, timeoutMs);
}

/** Ends a child started by spawnTracked (graceMs 0: SIGKILL at once; else SIGTERM, SIGKILL after graceMs) once it has exited. */
export async function endTracked(child: ChildProcess, graceMs = 0): Promise<void> {
  const p = trackedOf(child);
  await p.end(graceMs);
  await p.exited;
}

function trackedOf(child: ChildProcess): TrackedProcess {
  const p = tracked.get(child);
  if (!p) throw new Error('not a child started by spawnTracked');
  return p;
}

/** The product's command line (src/cli.ts: what the installed CLI and the image run). */
export const CLI = ['--import', 'tsx', 'src/cli.ts'];
/** The repository's command line (harness/cli.ts): the product's commands, chaos and demo. */
export const REPO_CLI = ['--import', 'tsx', 'harness/cli.ts'];

/** Runs the eoswatch command line to its end: exit code and output, whatever the code. */
export async function runEoswatch(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  try {
    const { stdout, stderr } = await promisify(execFile)('node', [...CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
