// The checkpoint driver over fake participants and a manual clock: no Kafka, no timers. Each test
// asserts the order of the participants' calls, the phase the driver was in at each call, and the
// metric series the outcome leaves (src/metrics/checkpoint-stats.ts, src/metrics/pipeline.ts).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { CheckpointDriver, type CheckpointParticipant, type DriverConfig, type PendingCounts } from '../../../src/pipeline/checkpoint-driver.js';
import { ManualClock, settle } from '../../../src/runtime/clock.js';
import { IllegalTransition } from '../../../src/pipeline/checkpoint-coordinator.js';
import { AtLeastOnce, ExactlyOnce, type CommitStrategy } from '../../../src/pipeline/commit-strategy.js';
import { pipelineMetrics } from '../../../src/metrics/pipeline.js';
import { createLogger } from '../../../src/log.js';

interface Gate<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}
function gate<T = void>(): Gate<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

type Step<T> = T | Error | Gate<T>;
const play = <T>(s: Step<T>): Promise<T> => (s instanceof Error ? Promise.reject(s) : typeof s === 'object' && s !== null && 'promise' in s ? s.promise : Promise.resolve(s));

/** A participant whose every step is scripted; it writes each call, with the driver's phase, to a shared trace. */
class Fake implements CheckpointParticipant {
  hasOpenTransaction = false;
  error: Error | null = null;
  fenced = false;
  counts: PendingCounts = { in: 0, out: 0, dlq: 0 };
  drainStep: Step<void> = undefined;
  /** One entry per call; the last one repeats. */
  preCommitSteps: Step<boolean>[] = [true];
  commitSteps: Step<number>[] = [5];
  abortStep: Step<bigint | null> = 0n;
  private preCommits = 0;
  private commits = 0;

  constructor(
    readonly name: string,
    private readonly trace: string[],
    private readonly phase: () => string,
  ) {}

  private log(call: string): void {
    this.trace.push(`${this.name}.${call}@${this.phase()}`);
  }
  setBarrier(id: number): void {
    this.log(`setBarrier(${id})`);
  }
  releaseBarrier(): void {
    this.log('releaseBarrier');
  }
  drain(): Promise<void> {
    this.log('drain');
    return play(this.drainStep);
  }
  preCommit(): Promise<boolean> {
    this.log('preCommit');
    return play(this.preCommitSteps[Math.min(this.preCommits++, this.preCommitSteps.length - 1)]!);
  }
  commit(): Promise<number> {
    this.log('commit');
    return play(this.commitSteps[Math.min(this.commits++, this.commitSteps.length - 1)]!);
  }
  takePending(): PendingCounts {
    this.log('takePending');
    const c = this.counts;
    this.counts = { in: 0, out: 0, dlq: 0 };
    return c;
  }
  abort(timeoutMs: number): Promise<bigint | null> {
    this.log(`abort(${timeoutMs})`);
    return play(this.abortStep);
  }
}

const labels = { pipeline: 'p', engine: 'eoswatch' as const, job_id: '' };
const baseConfig: DriverConfig = {
  intervalMs: 1000,
  timeoutMs: 5000,
  minPauseMs: 0,
  tolerableFailedCheckpoints: 0,
  abortTimeoutMs: 7000,
  faultInjection: { commitDelay: 0, commitDelayTimes: 0 },
};

function setup(opts: { config?: Partial<DriverConfig>; strategy?: CommitStrategy; running?: boolean } = {}) {
  const clock = new ManualClock();
  const registry = new Registry();
  const trace: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const failures: string[] = [];
  const driver = new CheckpointDriver<Fake>(
    { ...baseConfig, ...opts.config },
    {
      clock,
      strategy: opts.strategy ?? new ExactlyOnce(),
      metrics: pipelineMetrics(registry),
      labels,
      logger: createLogger('debug', sink),
      running: () => opts.running ?? true,
      fail: async (reason) => {
        trace.push(`fail@${driver.phase}`);
        failures.push(reason);
      },
      rewound: (p, resume) => trace.push(`${p.name}.rewound(${resume})`),
      abortFailed: async (p, err) => {
        trace.push(`${p.name}.abortFailed(${(err as Error).message})`);
      },
    },
  );
  const fake = (name: string) => new Fake(name, trace, () => driver.phase);
  return { clock, registry, trace, logs, failures, driver, fake };
}

/** Runs one checkpoint while the clock moves on by `ms`: true when it completed. */
async function runFor(driver: CheckpointDriver<Fake>, clock: ManualClock, participants: Fake[], ms: number): Promise<boolean> {
  const done = driver.run(participants);
  await clock.advance(ms);
  return done;
}

/** The calls after the barrier was reached, and what became of each participant. */
const outcomeCalls = (trace: string[]): string[] => trace.filter((t) => !/setBarrier|drain|releaseBarrier|preCommit/.test(t));

/** What a checkpoint over participants a and b begins and ends with. */
const barrierOfAB = ['a.setBarrier(1)@BARRIER', 'b.setBarrier(1)@BARRIER', 'a.drain@BARRIER', 'b.drain@BARRIER'];
const releaseOfAB = ['a.releaseBarrier@IDLE', 'b.releaseBarrier@IDLE'];

type Snapshot = Record<string, number>;
/** Every series of the checkpoint and pipeline families the driver sets, by a short name. */
async function snapshot(registry: Registry): Promise<Snapshot> {
  const out: Snapshot = {};
  const read = async (metric: string, key: (l: Record<string, string | number>) => string | undefined) => {
    const m = registry.getSingleMetric(metric);
    if (!m) return;
    for (const v of (await m.get()).values) {
      const k = key(v.labels as Record<string, string | number>);
      if (k === undefined) continue;
      const name = (v as { metricName?: string }).metricName;
      const suffix = name && name !== metric ? name.slice(metric.length) : '';
      if (suffix === '_bucket') continue;
      out[`${k}${suffix}`] = v.value;
    }
  };
  await read('eos_checkpoints_total', (l) => `checkpoints.${l.outcome}`);
  await read('eos_checkpoint_failures_total', (l) => `failures.${l.reason}`);
  await read('eos_checkpoint_duration_seconds', (l) => `duration.${l.outcome}`);
  await read('eos_checkpoints_pending', () => 'pending');
  await read('eos_checkpoint_consecutive_failures', () => 'consecutiveFailures');
  await read('eos_checkpoint_tolerable_failures', () => 'tolerable');
  await read('eos_checkpoint_interval_seconds', () => 'interval');
  await read('eos_checkpoint_last_completed_timestamp_seconds', () => 'lastCompleted');
  await read('eos_pipeline_up', () => 'up');
  await read('eos_transactions_total', (l) => `transactions.${l.outcome}`);
  await read('eos_pipeline_records_total', (l) => `records.${l.direction}`);
  await read('eos_kafka_transaction_commit_latency_seconds', () => 'commitLatency');
  return out;
}

/** The series of a driver that has run nothing yet, with the values a test expects changed. */
function expected(changes: Snapshot, config: Partial<DriverConfig> = {}): Snapshot {
  const c = { ...baseConfig, ...config };
  return {
    'checkpoints.completed': 0,
    'checkpoints.failed': 0,
    'checkpoints.timeout': 0,
    'failures.TIMEOUT': 0,
    'failures.FENCED': 0,
    'failures.SEND_FAILED': 0,
    'failures.PRE_COMMIT_FAILED': 0,
    'failures.COMMIT_FAILED': 0,
    pending: 0,
    consecutiveFailures: 0,
    tolerable: c.tolerableFailedCheckpoints,
    interval: c.intervalMs / 1000,
    'transactions.committed': 0,
    'transactions.aborted': 0,
    'records.in': 0,
    'records.out': 0,
    'records.dlq': 0,
    ...changes,
  };
}

/** The failure reasons counted (non-zero) in eos_checkpoint_failures_total. */
const failureCounts = (s: Snapshot): Snapshot =>
  Object.fromEntries(Object.entries(s).flatMap(([k, v]) => (k.startsWith('failures.') && v !== 0 ? [[k.slice('failures.'.length), v]] : [])));

const fencedError = () => Object.assign(new Error('Producer fenced: a newer epoch of the transactional id'), { type: 'PRODUCER_FENCED' });

describe('checkpoint driver', () => {
  test('before any checkpoint: the configuration and zeroes are exported, nothing is pending', async () => {
    const { registry, driver } = setup({ config: { tolerableFailedCheckpoints: 3, intervalMs: 2500 } });
    assert.deepEqual(await snapshot(registry), expected({}, { tolerableFailedCheckpoints: 3, intervalMs: 2500 }));
    assert.equal(driver.phase, 'IDLE');
    assert.equal(driver.current, null);
    assert.equal(driver.consecutiveFailures, 0);
    assert.equal(driver.lastCompletedId, 0);
    assert.equal(driver.lastAbortReason, '');
    assert.equal(driver.nextTriggerAt(), -Infinity);
    assert.equal(driver.shouldTrigger(0), true);
  });

  test('a checkpoint walks barrier → drain → preCommit → commit; only participants with something to commit commit', async () => {
    const { clock, registry, trace, logs, driver, fake } = setup();
    const a = fake('a');
    a.hasOpenTransaction = true;
    a.counts = { in: 10, out: 9, dlq: 1 };
    a.commitSteps = [40];
    const b = fake('b');
    b.preCommitSteps = [false];
    const t0 = clock.t;
    const done = driver.run([a, b]);
    assert.equal(driver.phase, 'BARRIER');
    assert.deepEqual(driver.current, { id: 1, triggeredAt: t0, phase: 'BARRIER' });
    assert.equal((await snapshot(registry)).pending, 1);
    await clock.advance(250);
    assert.equal(await done, true);
    assert.deepEqual(trace, [
      ...barrierOfAB,
      'a.preCommit@PRE_COMMIT',
      'b.preCommit@PRE_COMMIT',
      'a.commit@COMMITTING',
      'a.takePending@COMMITTING',
      ...releaseOfAB,
    ]);
    assert.equal(driver.lastCompletedId, 1);
    assert.equal(driver.nextTriggerAt(), t0 + 1000);
    assert.deepEqual(
      await snapshot(registry),
      expected({
        'checkpoints.completed': 1,
        'duration.completed_sum': 0,
        'duration.completed_count': 1,
        up: 1,
        lastCompleted: t0 / 1000,
        'transactions.committed': 1,
        'records.in': 10,
        'records.out': 9,
        'records.dlq': 1,
        commitLatency_sum: 0.04,
        commitLatency_count: 1,
      }),
    );
    assert.deepEqual(
      logs.filter((l) => l.msg === 'checkpoint completed').map((l) => [l.level, l.checkpoint, l.transactions]),
      [['debug', 1, 1]],
    );
    assert.equal(clock.timersPending, 0, 'every deadline was cleared');
  });

  test('the duration runs from the trigger to the completion', async () => {
    const { clock, registry, driver, fake } = setup();
    const a = fake('a');
    const commit = gate<number>();
    a.commitSteps = [commit];
    const done = driver.run([a]);
    await clock.advance(1500);
    commit.resolve(12);
    assert.equal(await done, true);
    const s = await snapshot(registry);
    assert.equal(s['duration.completed_sum'], 1.5);
    assert.equal(s.lastCompleted, clock.t / 1000);
    assert.equal(s.commitLatency_sum, 0.012);
  });

  test('a completed checkpoint of a stopping pipeline leaves eos_pipeline_up alone', async () => {
    const { registry, driver, fake } = setup({ running: false });
    assert.equal(await driver.run([fake('a')]), true);
    assert.equal((await snapshot(registry)).up, undefined);
  });

  test('checkpoint timeout in the barrier: every participant is aborted and rewound, outcome timeout', async () => {
    const { clock, registry, trace, logs, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 1 } });
    const a = fake('a');
    a.hasOpenTransaction = true;
    a.counts = { in: 3, out: 3, dlq: 0 };
    a.abortStep = 17n;
    const b = fake('b');
    b.drainStep = gate(); // a send that is never acknowledged
    b.abortStep = null;
    const done = driver.run([a, b]);
    await clock.advance(4999);
    assert.equal(driver.phase, 'BARRIER', 'not timed out a millisecond early');
    await clock.advance(1);
    assert.equal(await done, false);
    assert.deepEqual(trace, [
      ...barrierOfAB,
      'a.abort(7000)@IDLE',
      'b.abort(7000)@IDLE',
      'a.rewound(17)',
      'b.rewound(null)',
      ...releaseOfAB,
    ]);
    assert.equal(driver.lastAbortReason, 'checkpoint 1 barrier did not finish within 5000 ms');
    assert.equal(driver.consecutiveFailures, 1);
    assert.deepEqual(
      await snapshot(registry),
      expected(
        { 'checkpoints.timeout': 1, 'failures.TIMEOUT': 1, 'duration.timeout_sum': 5, 'duration.timeout_count': 1, consecutiveFailures: 1, up: 0, 'transactions.aborted': 1 },
        { tolerableFailedCheckpoints: 1 },
      ),
    );
    const warn = logs.find((l) => l.msg === 'checkpoint aborted; rewinding to the committed offsets');
    assert.deepEqual([warn?.level, warn?.checkpoint, warn?.outcome, warn?.failure, warn?.transactions], ['warn', 1, 'timeout', 'TIMEOUT', 1]);
    // The next one may start at once: the interval has passed, and min pause (0) counts from the abort.
    assert.equal(driver.nextTriggerAt(), clock.t);
  });

  test('a participant failing preCommit: the others are aborted too, nothing is committed, outcome failed', async () => {
    const { clock, registry, trace, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 1 } });
    const a = fake('a');
    a.hasOpenTransaction = true;
    const b = fake('b');
    b.preCommitSteps = [new Error('sendOffsets: NOT_COORDINATOR')];
    b.error = new Error('sendOffsets: NOT_COORDINATOR');
    const c = fake('c');
    assert.equal(await runFor(driver, clock, [a, b, c], 10), false);
    assert.deepEqual(trace.filter((t) => !/setBarrier|drain|releaseBarrier/.test(t)), [
      'a.preCommit@PRE_COMMIT',
      'b.preCommit@PRE_COMMIT',
      'c.preCommit@PRE_COMMIT',
      'a.abort(7000)@IDLE',
      'b.abort(7000)@IDLE',
      'c.abort(7000)@IDLE',
      'a.rewound(0)',
      'b.rewound(0)',
      'c.rewound(0)',
    ]);
    assert.equal(driver.phase, 'IDLE');
    assert.equal(driver.lastAbortReason, 'sendOffsets: NOT_COORDINATOR');
    assert.deepEqual(
      await snapshot(registry),
      expected(
        { 'checkpoints.failed': 1, 'failures.PRE_COMMIT_FAILED': 1, 'duration.failed_sum': 0, 'duration.failed_count': 1, consecutiveFailures: 1, up: 0, 'transactions.aborted': 2 },
        { tolerableFailedCheckpoints: 1 },
      ),
    );
  });

  test('a participant failing preCommit with no failure tolerated: the pipeline is FAILED, nothing is rewound', async () => {
    const { clock, registry, trace, failures, driver, fake } = setup();
    const a = fake('a');
    const b = fake('b');
    b.preCommitSteps = [new Error('send failed')];
    assert.equal(await runFor(driver, clock, [a, b], 10), false);
    assert.deepEqual(trace.filter((t) => !/setBarrier|drain|releaseBarrier/.test(t)), ['a.preCommit@PRE_COMMIT', 'b.preCommit@PRE_COMMIT', 'fail@FAILED']);
    assert.deepEqual(failures, ['1 consecutive failed checkpoint (tolerable: 0); last: send failed']);
    assert.equal(driver.phase, 'FAILED');
    assert.equal(driver.nextTriggerAt(), null);
    await assert.rejects(driver.run([a]), (e: unknown) => e instanceof IllegalTransition && /pipeline is FAILED/.test(e.message));
    const s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.failed'], s.consecutiveFailures, s.up, s.pending], [1, 1, 0, 0]);
  });

  test('an unknown commit outcome (a commit that never answers) times out: committed participants count as committed, the rest is aborted', async () => {
    const { clock, registry, trace, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 5 } });
    const a = fake('a');
    a.hasOpenTransaction = true;
    a.counts = { in: 4, out: 4, dlq: 0 };
    a.commitSteps = [30];
    const b = fake('b');
    b.hasOpenTransaction = true;
    b.counts = { in: 6, out: 5, dlq: 1 };
    b.commitSteps = [gate<number>()];
    assert.equal(await runFor(driver, clock, [a, b], 5000), false);
    assert.deepEqual(outcomeCalls(trace), [
      'a.commit@COMMITTING',
      'b.commit@COMMITTING',
      'a.takePending@IDLE',
      'b.abort(7000)@IDLE',
      'b.rewound(0)',
    ]);
    assert.equal(driver.lastAbortReason, 'checkpoint 1 commit did not finish within 5000 ms');
    assert.deepEqual(
      await snapshot(registry),
      expected(
        {
          'checkpoints.timeout': 1,
          'failures.TIMEOUT': 1,
          'duration.timeout_sum': 5,
          'duration.timeout_count': 1,
          consecutiveFailures: 1,
          up: 0,
          'transactions.committed': 1,
          'transactions.aborted': 1,
          'records.in': 4,
          'records.out': 4,
        },
        { tolerableFailedCheckpoints: 5 },
      ),
    );
  });

  test('a commit that fails (outcome unknown to the broker too) is a failed checkpoint; an abort that fails hands the participant over', async () => {
    const { clock, registry, trace, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 5 } });
    const a = fake('a');
    a.commitSteps = [new Error('commit: REQUEST_TIMED_OUT')];
    a.abortStep = new Error('InitProducerId: COORDINATOR_NOT_AVAILABLE');
    const b = fake('b');
    b.preCommitSteps = [false];
    b.abortStep = 3n;
    assert.equal(await runFor(driver, clock, [a, b], 1), false);
    assert.deepEqual(outcomeCalls(trace), [
      'a.commit@COMMITTING',
      'a.abort(7000)@IDLE',
      'b.abort(7000)@IDLE',
      'a.abortFailed(InitProducerId: COORDINATOR_NOT_AVAILABLE)',
      'b.rewound(3)',
    ]);
    const s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.failed'], s['checkpoints.timeout'], s['transactions.committed'], s['transactions.aborted']], [1, 0, 0, 0]);
    assert.deepEqual(failureCounts(s), { COMMIT_FAILED: 1 });
    assert.equal(driver.lastAbortReason, 'commit: REQUEST_TIMED_OUT');
  });

  test('a fenced participant is never aborted (that would fence the new owner back); with no failure tolerated the pipeline is FAILED', async () => {
    const { clock, registry, trace, failures, driver, fake } = setup();
    const a = fake('a');
    a.fenced = true;
    a.error = fencedError();
    a.preCommitSteps = [a.error];
    const b = fake('b');
    b.hasOpenTransaction = true;
    assert.equal(await runFor(driver, clock, [a, b], 1), false);
    assert.deepEqual(failures, ['1 consecutive failed checkpoint (tolerable: 0); last: Producer fenced: a newer epoch of the transactional id']);
    assert.equal(driver.phase, 'FAILED');
    assert.ok(!trace.some((t) => /abort|commit\b/.test(t)), trace.join(' '));
    const s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.failed'], s['transactions.aborted'], s.up], [1, 2, 0]);
    assert.deepEqual(failureCounts(s), { FENCED: 1 });
  });

  test('a fenced participant with failures tolerated: the others rewind, the fenced one is left alone, and the next checkpoint goes on without it', async () => {
    const { clock, registry, trace, failures, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 1 } });
    const a = fake('a');
    a.fenced = true;
    a.error = fencedError();
    a.preCommitSteps = [a.error];
    const b = fake('b');
    b.hasOpenTransaction = true;
    b.abortStep = 40n;
    assert.equal(await runFor(driver, clock, [a, b], 1), false);
    assert.deepEqual(trace.filter((t) => /abort|rewound/.test(t)), ['b.abort(7000)@IDLE', 'b.rewound(40)']);
    assert.deepEqual(failures, []);
    trace.length = 0;
    await clock.advance(1000);
    assert.equal(await runFor(driver, clock, [b], 1), true);
    assert.deepEqual(trace, ['b.setBarrier(2)@BARRIER', 'b.drain@BARRIER', 'b.preCommit@PRE_COMMIT', 'b.commit@COMMITTING', 'b.takePending@COMMITTING', 'b.releaseBarrier@IDLE']);
    const s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.failed'], s['checkpoints.completed'], s.consecutiveFailures, s.up], [1, 1, 0, 1]);
    assert.deepEqual(failureCounts(s), { FENCED: 1 });
  });

  test('tolerable failures: counted while tolerated, reset by a completion, FAILED once exceeded; a restart carries them', async () => {
    const { clock, registry, failures, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 2 } });
    const a = fake('a');
    const failOnce = async (reason: string) => {
      a.preCommitSteps = [new Error(reason)];
      assert.equal(await runFor(driver, clock, [a], 1000), false);
    };
    await failOnce('one');
    await failOnce('two');
    assert.equal(driver.phase, 'IDLE');
    assert.equal(driver.consecutiveFailures, 2);
    assert.equal((await snapshot(registry)).consecutiveFailures, 2);
    a.preCommitSteps = [true];
    assert.equal(await runFor(driver, clock, [a], 1000), true);
    assert.equal(driver.consecutiveFailures, 0);
    assert.equal((await snapshot(registry)).consecutiveFailures, 0);
    await failOnce('three');
    await failOnce('four');
    assert.deepEqual(failures, []);
    await failOnce('five');
    assert.equal(driver.phase, 'FAILED');
    assert.deepEqual(failures, ['3 consecutive failed checkpoints (tolerable: 2); last: five']);
    let s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.failed'], s['checkpoints.completed'], s.consecutiveFailures, s.up], [5, 1, 3, 0]);

    // The pipeline restarts: a checkpoint may run again, the failures stay counted.
    driver.restart();
    assert.equal(driver.phase, 'IDLE');
    assert.equal(driver.consecutiveFailures, 3);
    assert.equal(driver.current, null);
    await failOnce('six');
    assert.equal(driver.phase, 'FAILED', 'still failing after the restart: FAILED at once');
    assert.deepEqual(failures.at(-1), '4 consecutive failed checkpoints (tolerable: 2); last: six');
    driver.restart();
    a.preCommitSteps = [true];
    assert.equal(await runFor(driver, clock, [a], 1), true);
    assert.equal(driver.consecutiveFailures, 0);
    assert.equal(driver.lastCompletedId, 1, 'checkpoint ids start again after a restart');
    s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.failed'], s['checkpoints.completed'], s.consecutiveFailures, s.up], [6, 2, 0, 1]);
  });

  test('fault injection: commitDelay waits between preCommit and commit, for commitDelayTimes checkpoints that commit something', async () => {
    const { clock, trace, logs, driver, fake } = setup({ config: { faultInjection: { commitDelay: 3000, commitDelayTimes: 1 } } });
    const a = fake('a');
    // Nothing to commit: no delay, and the one delay is not used up.
    a.preCommitSteps = [false, true];
    assert.equal(await runFor(driver, clock, [a], 1), true);
    assert.equal(logs.filter((l) => l.msg === 'fault injection: pre-committed, waiting before commit').length, 0);
    trace.length = 0;
    await clock.advance(1000);
    const done = driver.run([a]);
    await clock.advance(2999);
    assert.equal(driver.phase, 'COMMITTING');
    assert.ok(!trace.includes('a.commit@COMMITTING'), 'not committed during the delay');
    await clock.advance(1);
    assert.equal(await done, true);
    assert.ok(trace.includes('a.commit@COMMITTING'));
    const line = logs.find((l) => l.msg === 'fault injection: pre-committed, waiting before commit');
    assert.deepEqual([line?.level, line?.checkpoint, line?.delayMs, line?.transactions], ['warn', 2, 3000, 1]);
    // Used up: the next checkpoint commits at once.
    await clock.advance(1000);
    assert.equal(await runFor(driver, clock, [a], 0), true);
    assert.equal(logs.filter((l) => l.msg === 'fault injection: pre-committed, waiting before commit').length, 1);
  });

  test('fault injection: with commitDelayTimes 0 every checkpoint waits; a delay past the timeout fails it before commit', async () => {
    const { clock, registry, trace, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 9, faultInjection: { commitDelay: 2000, commitDelayTimes: 0 } } });
    const a = fake('a');
    for (let i = 0; i < 3; i++) {
      const done = driver.run([a]);
      await clock.advance(1999);
      assert.equal(driver.phase, 'COMMITTING', `checkpoint ${i + 1} waits`);
      await clock.advance(1);
      assert.equal(await done, true);
    }
    const late = setup({ config: { tolerableFailedCheckpoints: 9, faultInjection: { commitDelay: 5000, commitDelayTimes: 0 } } });
    const b = late.fake('b');
    b.hasOpenTransaction = true;
    assert.equal(await runFor(late.driver, late.clock, [b], 5000), false);
    assert.ok(!late.trace.includes('b.commit@COMMITTING'), 'never committed after its deadline');
    assert.equal(late.driver.lastAbortReason, 'checkpoint 1 timed out before commit');
    const s = await snapshot(late.registry);
    assert.deepEqual([s['checkpoints.timeout'], s['duration.timeout_sum'], s['transactions.aborted']], [1, 5, 1]);
    assert.equal((await snapshot(registry))['checkpoints.completed'], 3);
    assert.equal(trace.filter((t) => t === 'a.commit@COMMITTING').length, 3);
  });

  test('a late failure of an older checkpoint does not abort the pending one', async () => {
    const { clock, registry, trace, driver, fake } = setup({ config: { tolerableFailedCheckpoints: 5 } });
    const a = fake('a');
    const stalePreCommit = gate<boolean>();
    const commit2 = gate<number>();
    a.preCommitSteps = [stalePreCommit, true];
    a.commitSteps = [commit2];
    assert.equal(await runFor(driver, clock, [a], 5000), false);
    await clock.advance(1000);
    const done = driver.run([a]);
    await clock.advance(1);
    assert.deepEqual(driver.current, { id: 2, triggeredAt: clock.t - 1, phase: 'COMMITTING' });
    // Checkpoint 1's preCommit answers at last, with an error: it was aborted long ago.
    stalePreCommit.reject(new Error('late: checkpoint 1 preCommit failed'));
    await settle();
    assert.deepEqual(driver.current, { id: 2, triggeredAt: clock.t - 1, phase: 'COMMITTING' });
    assert.equal(trace.filter((t) => t.startsWith('a.abort')).length, 1, 'aborted once, for checkpoint 1');
    commit2.resolve(3);
    assert.equal(await done, true);
    assert.equal(driver.lastCompletedId, 2);
    assert.equal(driver.lastAbortReason, 'checkpoint 1 preCommit did not finish within 5000 ms');
    const s = await snapshot(registry);
    assert.deepEqual([s['checkpoints.timeout'], s['checkpoints.failed'], s['checkpoints.completed'], s.consecutiveFailures], [1, 0, 1, 0]);
  });

  test('at most one checkpoint at a time: a second run while one is pending is refused and disturbs nothing', async () => {
    const { clock, driver, fake } = setup();
    const a = fake('a');
    const commit = gate<number>();
    a.commitSteps = [commit];
    const done = driver.run([a]);
    await clock.advance(1);
    await assert.rejects(driver.run([a]), (e: unknown) => e instanceof IllegalTransition && e.message === 'checkpoint 1 is still pending (max concurrent checkpoints is 1)');
    assert.equal(driver.phase, 'COMMITTING');
    commit.resolve(1);
    assert.equal(await done, true);
  });

  test('at-least-once: offsets are committed only after every send before the barrier is acknowledged; no transactions are counted', async () => {
    const { clock, registry, trace, driver, fake } = setup({ strategy: new AtLeastOnce(), config: { tolerableFailedCheckpoints: 1 } });
    const a = fake('a');
    a.counts = { in: 8, out: 8, dlq: 0 };
    const acked = gate();
    a.drainStep = acked;
    const b = fake('b');
    b.preCommitSteps = [false];
    const done = driver.run([a, b]);
    await clock.advance(100);
    assert.equal(driver.phase, 'BARRIER');
    trace.push('a.sends acknowledged');
    acked.resolve();
    await clock.advance(1);
    assert.equal(await done, true);
    assert.deepEqual(trace, [
      ...barrierOfAB,
      'a.sends acknowledged',
      'a.preCommit@PRE_COMMIT',
      'b.preCommit@PRE_COMMIT',
      'a.commit@COMMITTING',
      'a.takePending@COMMITTING',
      ...releaseOfAB,
    ]);
    // A failed one counts no aborted transaction either.
    await clock.advance(1000);
    a.preCommitSteps = [new Error('x')];
    a.error = new Error('x');
    assert.equal(await driver.run([a, b]), false);
    const s = await snapshot(registry);
    assert.deepEqual(
      [s['checkpoints.completed'], s['checkpoints.failed'], s['transactions.committed'], s['transactions.aborted'], s['records.in'], s['records.out']],
      [1, 1, 0, 0, 8, 8],
    );
  });

  test('each failed checkpoint counts one typed reason: from the error and the phase it came in, a timeout first, then fencing', async () => {
    /** Runs one checkpoint over a and b as `script` sets them up, then `during` acts while it runs; the reasons counted. */
    const reasonOf = async (script: (a: Fake, b: Fake) => void, during: (a: Fake) => Promise<void> | void = () => undefined, config: Partial<DriverConfig> = {}) => {
      const { clock, registry, driver, fake, logs } = setup({ config: { tolerableFailedCheckpoints: 5, ...config } });
      const a = fake('a');
      const b = fake('b');
      script(a, b);
      const done = driver.run([a, b]);
      await settle();
      await during(a);
      await clock.advance(10_000);
      assert.equal(await done, false);
      const counts = failureCounts(await snapshot(registry));
      const warn = logs.find((l) => l.msg === 'checkpoint aborted; rewinding to the committed offsets');
      assert.equal(warn?.failure, Object.keys(counts)[0], 'the abort log names the reason counted');
      return counts;
    };
    const sendError = () => new Error('send: NOT_LEADER_FOR_PARTITION');

    // A send failed before the checkpoint: its participant's preCommit throws that very error.
    assert.deepEqual(
      await reasonOf((a) => {
        a.error = sendError();
        a.preCommitSteps = [a.error];
      }),
      { SEND_FAILED: 1 },
    );
    // A send in flight at the barrier fails while the barrier drains it.
    assert.deepEqual(
      await reasonOf(
        (a) => (a.drainStep = gate()),
        (a) => {
          a.error = sendError();
          a.preCommitSteps = [a.error];
          (a.drainStep as Gate<void>).resolve();
        },
      ),
      { SEND_FAILED: 1 },
    );
    // The barrier itself fails (a drain that rejects): a send failed.
    assert.deepEqual(
      await reasonOf((a) => {
        a.drainStep = sendError();
      }),
      { SEND_FAILED: 1 },
    );
    // preCommit's own failure, even beside a participant whose earlier send failed with another error.
    assert.deepEqual(
      await reasonOf((a, b) => {
        a.error = sendError();
        a.preCommitSteps = [true];
        b.preCommitSteps = [new Error('sendOffsets: NOT_COORDINATOR')];
      }),
      { PRE_COMMIT_FAILED: 1 },
    );
    // A commit fails.
    assert.deepEqual(
      await reasonOf((a) => {
        a.commitSteps = [new Error('commit: REQUEST_TIMED_OUT')];
      }),
      { COMMIT_FAILED: 1 },
    );
    // A commit is fenced: the participant learns it while committing.
    assert.deepEqual(
      await reasonOf(
        (a) => (a.commitSteps = [gate<number>()]),
        (a) => {
          a.fenced = true;
          (a.commitSteps[0] as Gate<number>).reject(fencedError());
        },
      ),
      { FENCED: 1 },
    );
    // The commit delay of fault injection runs past the timeout: a timeout, not a commit failure.
    assert.deepEqual(await reasonOf(() => undefined, undefined, { faultInjection: { commitDelay: 6000, commitDelayTimes: 0 } }), { TIMEOUT: 1 });
    // A participant fenced while the checkpoint times out in the barrier: the timeout is the reason.
    assert.deepEqual(
      await reasonOf((a, b) => {
        a.fenced = true;
        b.drainStep = gate();
      }),
      { TIMEOUT: 1 },
    );
  });

  test('the commit strategies undo a failed checkpoint: exactly-once replaces a stuck or failed producer and rolls back otherwise; at-least-once keeps what was sent', async () => {
    /** An undo target whose steps say which one ran (and with what timeout) by what they return. */
    const target = (busy: boolean, failed: boolean) => {
      const calls: string[] = [];
      return {
        calls,
        busy,
        failed,
        keep: async () => (calls.push('keep'), 1n),
        rollback: async (ms: number) => (calls.push(`rollback(${ms})`), 2n),
        replace: async () => (calls.push('replace'), 3n),
      };
    };
    const eo = new ExactlyOnce();
    assert.equal(eo.mode, 'EXACTLY_ONCE');
    const cases: [boolean, boolean, string, bigint][] = [
      [false, false, 'rollback(7000)', 2n],
      [true, false, 'replace', 3n],
      [false, true, 'replace', 3n],
      [true, true, 'replace', 3n],
    ];
    for (const [busy, failed, step, resume] of cases) {
      const t = target(busy, failed);
      assert.equal(await eo.undo(t, 7000), resume, JSON.stringify({ busy, failed }));
      assert.deepEqual(t.calls, [step], JSON.stringify({ busy, failed }));
    }
    const alo = new AtLeastOnce();
    assert.equal(alo.mode, 'AT_LEAST_ONCE');
    for (const busy of [false, true]) {
      for (const failed of [false, true]) {
        const t = target(busy, failed);
        assert.equal(await alo.undo(t), 1n);
        assert.deepEqual(t.calls, ['keep'], JSON.stringify({ busy, failed }));
      }
    }
  });
});
