// PartitionTasks (src/pipeline/partition-tasks.ts) over fake partition tasks and the manual clock:
// what batches and assignments do to the tasks, and where they send the consumer. The tasks'
// own work against Kafka is tested by test/integration/pipeline*.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ManualClock, settle } from '../../../src/runtime/clock.js';
import { Mutex } from '../../../src/runtime/mutex.js';
import { PartitionTasks } from '../../../src/pipeline/partition-tasks.js';
import type { PartitionTask, TaskState } from '../../../src/pipeline/partition-task.js';
import type { SourceBatch } from '../../../src/pipeline/source-consumer.js';
import { ExactlyOnce } from '../../../src/pipeline/commit-strategy.js';
import type { PipelineConfig } from '../../../src/config/types.js';
import type { PermissionWatch } from '../../../src/kafka/permissions.js';
import { pipelineMetrics } from '../../../src/metrics/pipeline.js';
import { recordingLogger } from '../../harness/log.js';

/** A partition task whose init and process answer as the test says; it records what is done to it. */
class FakeTask {
  state: TaskState = 'new';
  nextOffset: bigint | null = null;
  committedOffset: bigint | null = null;
  error: Error | null = null;
  fencedAt: number | null = null;
  openSince: number | null = null;
  readonly topic = 'in';
  readonly transactionalId: string;
  /** The committed offset init() reads, or an error it throws. */
  initAnswer: bigint | null | Error = null;
  processAnswer: boolean | 'gap' = true;
  readonly calls: string[] = [];
  constructor(readonly partition: number) {
    this.transactionalId = `eos-in-${partition}`;
  }
  async waitForBarrier(): Promise<void> {}
  async init(): Promise<bigint | null> {
    this.calls.push('init');
    if (this.initAnswer instanceof Error) throw this.initAnswer;
    this.committedOffset = this.nextOffset = this.initAnswer;
    this.state = 'ready';
    return this.initAnswer;
  }
  bootstrapAt(offset: bigint): void {
    this.calls.push(`bootstrapAt(${offset})`);
    this.committedOffset = this.nextOffset = offset;
  }
  async process(records: unknown[], _isStale: () => boolean, span: { fetched: bigint; last: bigint }): Promise<boolean | 'gap'> {
    this.calls.push(`process(${records.length}, ${span.fetched}..${span.last})`);
    if (this.processAnswer === true) this.nextOffset = span.last + 1n;
    return this.processAnswer;
  }
  async skipEmpty(span: { fetched: bigint; last: bigint }): Promise<void> {
    this.calls.push(`skipEmpty(${span.fetched}..${span.last})`);
  }
  async close(): Promise<void> {
    this.calls.push('close');
    this.state = 'closed';
  }
}

function setup(opts: { startFrom?: 'earliest' | 'none'; maxRecordsPerSecond?: number } = {}) {
  const clock = new ManualClock(0);
  const registry = new Registry();
  const metrics = pipelineMetrics(registry);
  const seeks: string[] = [];
  const failures: string[] = [];
  const created: FakeTask[] = [];
  const { log, records: logs } = recordingLogger();
  const state = { running: true, woken: 0, next: [] as FakeTask[] };
  const control = new Mutex();
  const tasks = new PartitionTasks({
    config: { startFrom: opts.startFrom ?? 'earliest', sessionTimeout: 10_000, faultInjection: { maxRecordsPerSecond: opts.maxRecordsPerSecond ?? 0 } } as PipelineConfig,
    strategy: new ExactlyOnce(),
    clock,
    logger: log,
    metrics,
    labels: { pipeline: 'p', engine: 'eoswatch', job_id: '' },
    permissions: { failed: async () => undefined } as unknown as PermissionWatch,
    serialized: (fn) => control.run(fn),
    newTask: (partition) => {
      const t = state.next.shift() ?? new FakeTask(partition);
      created.push(t);
      return t as unknown as PartitionTask;
    },
    running: () => state.running,
    fail: async (reason) => void failures.push(reason),
    seek: (partition, offset) => void seeks.push(`${partition}@${offset}`),
    wake: () => void state.woken++,
  });
  const batch = (partition: number, fetched: number, count: number): SourceBatch => ({
    partition,
    fetchedOffset: String(fetched),
    lastOffset: String(fetched + count - 1),
    messages: Array.from({ length: count }, (_, i) => ({ offset: String(fetched + i), timestamp: '0', key: null, value: null })),
    isStale: () => false,
  });
  /** The task the next batch of `partition` starts; its init() reads `committed` (or throws it). */
  const nextTask = (partition: number, committed: bigint | null | Error): FakeTask => {
    const t = new FakeTask(partition);
    t.initAnswer = committed;
    state.next.push(t);
    return t;
  };
  return { clock, registry, control, tasks, seeks, failures, created, logs, state, batch, nextTask };
}

describe('PartitionTasks', () => {
  test('a batch of a partition not assigned (or while not running) starts no task', async () => {
    const s = setup();
    s.tasks.assigned(new Set([1]));
    await s.tasks.batch(s.batch(0, 0, 5));
    s.state.running = false;
    await s.tasks.batch(s.batch(1, 0, 5));
    assert.equal(s.created.length, 0);
    assert.equal(s.tasks.size, 0);
  });

  test('the first batch initialises its task, which takes the batch when it starts at the committed offset', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    const t = s.nextTask(0, 40n);
    await s.tasks.batch(s.batch(0, 40, 10));
    assert.deepEqual(t.calls, ['init', 'process(10, 40..49)']);
    assert.deepEqual(s.seeks, []);
    assert.deepEqual(s.tasks.ready(), [t]);
    assert.deepEqual(s.tasks.openSince(), new Map([[0, 0]]));
  });

  test('a first batch fetched elsewhere than the committed offset is dropped, and the consumer sent to the committed offset', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    const t = s.nextTask(0, 40n);
    await s.tasks.batch(s.batch(0, 90, 10));
    assert.deepEqual(t.calls, ['init']);
    assert.deepEqual(s.seeks, ['0@40']);
  });

  test('no committed offset: the partition starts where this process first bootstrapped it, also after its task started over', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    await s.tasks.batch(s.batch(0, 100, 10));
    const first = s.created[0]!;
    assert.deepEqual(first.calls, ['init', 'bootstrapAt(100)', 'process(10, 100..109)']);
    // Started over before its first commit (a revocation handled late); kafkajs fetches on from 250.
    await s.tasks.startOver(first as unknown as PartitionTask);
    assert.deepEqual(s.seeks, ['0@100'], 'sent back to where it was bootstrapped');
    await s.tasks.batch(s.batch(0, 250, 10));
    const second = s.created[1]!;
    assert.deepEqual(second.calls, ['init', 'bootstrapAt(100)']);
    assert.deepEqual(s.seeks, ['0@100', '0@100'], 'the batch from 250 is not taken: the consumer goes back to 100');
    const warns = s.logs.filter((l) => l.msg === 'no committed offset: bootstrapping').map((l) => l.offset);
    assert.deepEqual(warns, ['100', '100']);
  });

  test('no committed offset and startFrom none: the pipeline fails', async () => {
    const s = setup({ startFrom: 'none' });
    s.tasks.assigned(new Set([2]));
    const done = s.tasks.batch(s.batch(2, 0, 1));
    await s.clock.advance(500);
    await done;
    assert.deepEqual(s.failures, ['no committed offset for in-2 and pipeline.startFrom is none']);
    assert.deepEqual(s.created[0]!.calls, ['init', 'close']);
    assert.equal(s.tasks.size, 0);
  });

  test('an initialisation that fails (not refused): the task is dropped, and after 500 ms the consumer is sent back to the batch', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    const t = s.nextTask(0, new Error('NOT_COORDINATOR'));
    const done = s.tasks.batch(s.batch(0, 70, 3));
    await s.clock.advance(499);
    assert.deepEqual(s.seeks, []);
    await s.clock.advance(1);
    await done;
    assert.deepEqual(s.seeks, ['0@70']);
    assert.deepEqual(t.calls, ['init', 'close']);
    assert.equal(s.tasks.size, 0);
    assert.deepEqual(s.failures, []);
  });

  test('a batch past the task position seeks back to it; a send that failed wakes the checkpoint loop', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    const t = s.nextTask(0, 0n);
    await s.tasks.batch(s.batch(0, 0, 10));
    t.processAnswer = 'gap';
    await s.tasks.batch(s.batch(0, 20, 5));
    assert.deepEqual(s.seeks, ['0@10']);
    t.processAnswer = false;
    await s.tasks.batch(s.batch(0, 10, 5));
    assert.equal(s.state.woken, 0, 'a batch refused without an error wakes nothing');
    t.error = new Error('send failed');
    await s.tasks.batch(s.batch(0, 10, 5));
    assert.equal(s.state.woken, 1);
    assert.equal(s.tasks.hasErrored(), true);
  });

  test('an assignment: ready tasks of kept partitions seek to their position; revoked and fenced tasks start over, the fenced one sent back to its committed offset', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0, 1, 2]));
    const tasks = [0, 1, 2].map((p) => s.nextTask(p, BigInt(p * 100)));
    for (const p of [0, 1, 2]) await s.tasks.batch(s.batch(p, p * 100, 10));
    await s.control.run(async () => undefined);
    s.seeks.length = 0;
    tasks[1]!.state = 'fenced';
    s.tasks.assigned(new Set([0, 1]));
    await s.control.run(async () => undefined);
    assert.deepEqual(s.seeks, ['0@10', '1@100']);
    assert.deepEqual([tasks[0]!.state, tasks[1]!.state, tasks[2]!.state], ['ready', 'closed', 'closed']);
    assert.deepEqual(s.tasks.all(), [tasks[0]]);
    const m = await s.registry.getSingleMetric('eos_pipeline_assigned_partitions')!.get();
    assert.equal(m.values[0]!.value, 2);
    const log = s.logs.find((l) => l.msg === 'partitions assigned' && (l.revoked as number[]).length > 0);
    assert.deepEqual([log?.assigned, log?.revoked], [[0, 1], [2]]);
  });

  test('a task fenced longer than the session timeout while its partition stays assigned starts over', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    const t = s.nextTask(0, 5n);
    await s.tasks.batch(s.batch(0, 5, 1));
    t.state = 'fenced';
    t.fencedAt = 1000;
    s.tasks.dropLongFenced(11_000);
    assert.equal(t.state, 'fenced', 'not after exactly the session timeout');
    s.tasks.dropLongFenced(11_001);
    await settle();
    assert.equal(t.state, 'closed');
    assert.equal(s.tasks.size, 0);
    assert.deepEqual(s.seeks, ['0@5']);
  });

  test('an empty batch (control records only) is stepped over by its ready task only', async () => {
    const s = setup();
    s.tasks.assigned(new Set([0]));
    s.tasks.emptyBatch(0, { fetched: 3n, last: 4n });
    const t = s.nextTask(0, 0n);
    await s.tasks.batch(s.batch(0, 0, 3));
    s.tasks.emptyBatch(0, { fetched: 3n, last: 4n });
    assert.deepEqual(t.calls, ['init', 'process(3, 0..2)', 'skipEmpty(3..4)']);
  });

  test('fault injection throttles the batches on the clock', async () => {
    const s = setup({ maxRecordsPerSecond: 10 });
    s.tasks.assigned(new Set([0]));
    const t = s.nextTask(0, 0n);
    await s.tasks.batch(s.batch(0, 0, 10));
    let done = false;
    const second = s.tasks.batch(s.batch(0, 10, 10)).then(() => (done = true));
    await s.clock.advance(999);
    assert.equal(done, false);
    await s.clock.advance(1);
    await second;
    assert.deepEqual(t.calls, ['init', 'process(10, 0..9)', 'process(10, 10..19)']);
  });
});
