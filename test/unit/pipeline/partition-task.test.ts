// PartitionTask (src/pipeline/partition-task.ts) on the driver's clock, over a fake producer
// output: its abort path (a rollback that does not answer within the abort timeout replaces the
// producer), the commit latency and the bounded abort on close, all reached by moving a manual
// clock, not by waiting. The task's work against Kafka is tested by test/integration/pipeline*.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka } from 'kafkajs';
import { ManualClock } from '../../../src/runtime/clock.js';
import { NotOwnerError, PartitionTask, isFencedError, type TaskContext } from '../../../src/pipeline/partition-task.js';
import { AtLeastOnce, ExactlyOnce, type CommitStrategy, type PartitionOutput } from '../../../src/pipeline/commit-strategy.js';
import type { PipelineConfig } from '../../../src/config/types.js';
import { recordingLogger } from '../../harness/log.js';

/** A producer output whose every call is traced and can be held open until a test releases it. */
class FakeOutput implements PartitionOutput {
  hasData = false;
  hold: Partial<Record<'rollback' | 'commit' | 'abortOpen', Promise<void>>> = {};
  constructor(
    readonly name: string,
    private readonly trace: string[],
    private readonly clock: ManualClock,
  ) {}
  private async step(what: 'rollback' | 'commit' | 'abortOpen'): Promise<void> {
    this.trace.push(`${this.name}.${what}@${this.clock.now()}`);
    await this.hold[what];
  }
  async send(): Promise<void> {
    this.hasData = true;
  }
  async preCommit(): Promise<boolean> {
    return true;
  }
  commit(): Promise<void> {
    return this.step('commit');
  }
  rollback(): Promise<void> {
    return this.step('rollback');
  }
  abortOpen(): Promise<void> {
    return this.step('abortOpen');
  }
  async disconnect(): Promise<void> {
    this.trace.push(`${this.name}.disconnect`);
  }
}

function setup(strategy: CommitStrategy = new ExactlyOnce()) {
  const clock = new ManualClock(0);
  const trace: string[] = [];
  const { log, records: logs } = recordingLogger();
  const outputs: FakeOutput[] = [];
  strategy.open = async (_kafka: Kafka, id: string) => {
    const o = new FakeOutput(`out${outputs.length}`, trace, clock);
    outputs.push(o);
    trace.push(`open(${id})`);
    return o;
  };
  let committed: bigint | null = 40n;
  let owned = true;
  const ctx: TaskContext = {
    kafka: {} as Kafka,
    config: { name: 'p', transactionalIdPrefix: 'eos', sinkTopic: 'out', partitioning: 'key', groupId: 'g', transactionTimeout: 60_000 } as PipelineConfig,
    strategy,
    transform: { run: async () => ({ out: [], dlq: [] }) as never, close: async () => undefined },
    sinkPartitions: 1,
    dlqTopic: 'out.dlq',
    dlqPartitions: 1,
    logger: log,
    clock,
    readCommitted: async () => {
      trace.push(`readCommitted=${committed}`);
      return committed;
    },
    onFenced: () => trace.push('fenced'),
    owns: async (p) => {
      trace.push(`owns(${p})=${owned}`);
      return owned;
    },
  };
  const task = new PartitionTask('in', 3, ctx);
  return { clock, trace, logs, outputs, task, setCommitted: (c: bigint | null) => (committed = c), setOwned: (o: boolean) => (owned = o) };
}

const never = new Promise<void>(() => undefined);

describe('PartitionTask on the manual clock', () => {
  test('abort: a rollback that does not answer within the abort timeout replaces the producer and resumes from the re-read committed offset', async () => {
    const { clock, trace, logs, outputs, task, setCommitted } = setup();
    assert.equal(await task.init(), 40n);
    assert.equal(task.transactionalId, 'eos-in-3');
    outputs[0]!.hold.rollback = never;
    task.nextOffset = 55n;
    setCommitted(41n);
    trace.length = 0;
    let resumed: bigint | null | undefined;
    const aborting = task.abort(7000).then((r) => (resumed = r));
    await clock.advance(6999);
    assert.equal(resumed, undefined, 'still waiting for the rollback');
    assert.deepEqual(trace, ['out0.rollback@0']);
    await clock.advance(1);
    await aborting;
    assert.equal(resumed, 41n);
    assert.deepEqual(trace, ['out0.rollback@0', 'out0.disconnect', 'owns(3)=true', 'open(eos-in-3)', 'readCommitted=41']);
    assert.deepEqual([task.committedOffset, task.nextOffset, task.error, task.state], [41n, 41n, null, 'ready']);
    const warn = logs.find((l) => l.msg === 'abort failed; re-initialising the producer');
    assert.equal(warn?.err, 'abort did not finish within 7000 ms');
    assert.equal(clock.timersPending, 0, 'the abort timer is gone');
  });

  test('a producer is initialised only for a partition the group lately confirmed as ours: otherwise NotOwnerError and nothing opened', async () => {
    const { trace, outputs, task, setOwned } = setup();
    setOwned(false);
    await assert.rejects(task.init(), (err: Error) => err instanceof NotOwnerError && /partition 3: its producer is not initialised/.test(err.message));
    assert.deepEqual(trace, ['owns(3)=false']);
    assert.equal(outputs.length, 0);
    assert.equal(task.state, 'new');
    setOwned(true);
    assert.equal(await task.init(), 40n);
    assert.deepEqual(trace, ['owns(3)=false', 'owns(3)=true', 'open(eos-in-3)', 'readCommitted=40']);
  });

  test('abort: a producer to replace for a partition the group no longer confirms as ours is not re-initialised (that would fence its new owner)', async () => {
    const { clock, trace, outputs, task, setOwned } = setup();
    await task.init();
    outputs[0]!.hold.rollback = never;
    task.nextOffset = 55n;
    trace.length = 0;
    setOwned(false);
    const aborting = assert.rejects(task.abort(7000), NotOwnerError);
    await clock.advance(7000);
    await aborting;
    assert.deepEqual(trace, ['out0.rollback@0', 'out0.disconnect', 'owns(3)=false']);
    assert.equal(outputs.length, 1, 'no second producer');
  });

  test('abort: a rollback that answers in time rewinds in place, keeping the producer', async () => {
    const { clock, trace, outputs, task } = setup();
    await task.init();
    let release!: () => void;
    outputs[0]!.hold.rollback = new Promise<void>((r) => (release = r));
    task.nextOffset = 50n;
    trace.length = 0;
    let resumed: bigint | null | undefined;
    const aborting = task.abort(7000).then((r) => (resumed = r));
    await clock.advance(6999);
    release();
    await aborting;
    assert.equal(resumed, 40n);
    assert.deepEqual(trace, ['out0.rollback@0']);
    assert.equal(task.nextOffset, 40n);
    assert.equal(outputs.length, 1);
    await clock.advance(10_000);
    assert.equal(outputs.length, 1, 'no late timeout replaces it');
  });

  test('abort, at-least-once: waits for the operation in flight, then rewinds, keeping the producer and what it sent, whatever failed', async () => {
    const { clock, trace, outputs, task } = setup(new AtLeastOnce());
    await task.init();
    let release!: () => void;
    outputs[0]!.hold.commit = new Promise<void>((r) => (release = r));
    task.nextOffset = 70n;
    const committing = task.commit().catch(() => undefined);
    task.error = new Error('send failed');
    trace.length = 0;
    let resumed: bigint | null | undefined;
    const aborting = task.abort(7000).then((r) => (resumed = r));
    await clock.advance(60_000);
    assert.equal(resumed, undefined, 'no timeout cuts the wait: nothing is replaced');
    release();
    await committing;
    await aborting;
    assert.equal(resumed, 70n, 'the commit in flight completed: its offset is where processing resumes');
    assert.deepEqual(trace, ['out0.commit@0']);
    assert.deepEqual([task.nextOffset, task.error, outputs.length], [70n, null, 1]);
  });

  test('commit latency is measured on the clock; committedOffset follows', async () => {
    const { clock, outputs, task } = setup();
    await task.init();
    let release!: () => void;
    outputs[0]!.hold.commit = new Promise<void>((r) => (release = r));
    task.nextOffset = 60n;
    const committing = task.commit();
    await clock.advance(1234);
    release();
    assert.equal(await committing, 1234);
    assert.equal(task.committedOffset, 60n);
  });

  test('close: an open transaction is aborted, bounded by 5 s on the clock, then the producer is closed', async () => {
    const { clock, trace, outputs, task } = setup();
    await task.init();
    outputs[0]!.hold.abortOpen = never;
    trace.length = 0;
    let closed = false;
    const closing = task.close().then(() => (closed = true));
    await clock.advance(4999);
    assert.equal(closed, false);
    await clock.advance(1);
    await closing;
    assert.deepEqual(trace, ['out0.abortOpen@0', 'out0.disconnect']);
    assert.equal(task.state, 'closed');
  });
});

describe('isFencedError', () => {
  const typed = (type: string, message = 'x') => Object.assign(new Error(message), { type });
  test('a newer epoch is fencing, by type or message, anywhere in the cause chain', () => {
    assert.equal(isFencedError(typed('PRODUCER_FENCED')), true);
    assert.equal(isFencedError(typed('INVALID_PRODUCER_EPOCH')), true);
    assert.equal(isFencedError(new Error('wrapped', { cause: typed('PRODUCER_FENCED') })), true);
    assert.equal(isFencedError(new Error('Producer attempted an operation with an old epoch: fenced')), true);
  });

  test('a refused Write on the transactional id is no fencing (the pipeline fails and names the ACL), nor is any other error', () => {
    assert.equal(isFencedError(typed('TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'Transactional Id authorization failed')), false);
    assert.equal(isFencedError(typed('TOPIC_AUTHORIZATION_FAILED')), false);
    assert.equal(isFencedError(new Error('Connection error')), false);
    assert.equal(isFencedError(undefined), false);
  });
});
