import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CheckpointCoordinator, IllegalTransition, type CoordinatorConfig } from '../../../src/pipeline/checkpoint-coordinator.js';

const base: CoordinatorConfig = { intervalMs: 1000, timeoutMs: 5000, minPauseMs: 0, tolerableFailedCheckpoints: 0 };

function run(c: CheckpointCoordinator, now: number): number {
  const cp = c.trigger(now);
  c.barrierReached(cp.id);
  c.preCommitted(cp.id);
  return cp.id;
}

describe('checkpoint coordinator', () => {
  test('walks trigger → barrier → preCommit → complete and measures the duration', () => {
    const c = new CheckpointCoordinator(base);
    assert.equal(c.phase, 'IDLE');
    assert.equal(c.shouldTrigger(0), true);
    const cp = c.trigger(0);
    assert.equal(cp.id, 1);
    assert.equal(c.phase, 'BARRIER');
    assert.equal(c.pendingCount, 1);
    c.barrierReached(1);
    assert.equal(c.phase, 'PRE_COMMIT');
    c.preCommitted(1);
    assert.equal(c.phase, 'COMMITTING');
    const r = c.complete(1, 250);
    assert.deepEqual(r, { id: 1, durationMs: 250, outcome: 'completed' });
    assert.equal(c.phase, 'IDLE');
    assert.equal(c.pendingCount, 0);
    assert.equal(c.lastCompletedId, 1);
  });

  test('at most one pending checkpoint', () => {
    const c = new CheckpointCoordinator(base);
    c.trigger(0);
    assert.equal(c.shouldTrigger(10_000), false);
    assert.equal(c.nextTriggerAt(), null);
    assert.throws(() => c.trigger(10_000), IllegalTransition);
  });

  test('interval counts from the last trigger', () => {
    const c = new CheckpointCoordinator(base);
    const id = run(c, 0);
    c.complete(id, 300);
    assert.equal(c.nextTriggerAt(), 1000);
    assert.equal(c.shouldTrigger(999), false);
    assert.equal(c.shouldTrigger(1000), true);
  });

  test('min pause counts from the last completion', () => {
    const c = new CheckpointCoordinator({ ...base, minPauseMs: 2000 });
    const id = run(c, 0);
    c.complete(id, 1500);
    assert.equal(c.nextTriggerAt(), 3500);
    assert.equal(c.shouldTrigger(3499), false);
    assert.equal(c.shouldTrigger(3500), true);
  });

  test('transitions out of order are refused', () => {
    const c = new CheckpointCoordinator(base);
    const cp = c.trigger(0);
    assert.throws(() => c.preCommitted(cp.id), /in BARRIER, expected PRE_COMMIT/);
    assert.throws(() => c.complete(cp.id, 1), /in BARRIER, expected COMMITTING/);
    assert.throws(() => c.barrierReached(cp.id + 1), /checkpoint 2 is not pending/);
    c.barrierReached(cp.id);
    assert.throws(() => c.barrierReached(cp.id), /in PRE_COMMIT, expected BARRIER/);
  });

  test('the deadline is the trigger plus the timeout, and only while a checkpoint is pending', () => {
    const c = new CheckpointCoordinator(base);
    assert.equal(c.deadline, null);
    const cp = c.trigger(100);
    assert.equal(c.deadline, 5100);
    c.barrierReached(cp.id);
    assert.equal(c.deadline, 5100, 'a phase change does not move it');
    c.preCommitted(cp.id);
    c.complete(cp.id, 300);
    assert.equal(c.deadline, null);
    c.trigger(2000);
    assert.equal(c.deadline, 7000);
  });

  test('tolerable 0: the first failure makes the pipeline FAILED', () => {
    const c = new CheckpointCoordinator(base);
    const cp = c.trigger(0);
    const r = c.abort(cp.id, 10, 'failed', 'send failed');
    assert.equal(r.failed, true);
    assert.equal(r.outcome, 'failed');
    assert.equal(c.phase, 'FAILED');
    assert.match(c.failureReason!, /1 consecutive failed checkpoint \(tolerable: 0\); last: send failed/);
    assert.equal(c.shouldTrigger(1_000_000), false);
    assert.throws(() => c.trigger(1_000_000), /pipeline is FAILED/);
  });

  test('tolerable 2: failures are counted, a completion resets them, the third consecutive one fails', () => {
    const c = new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 2 });
    let now = 0;
    const fail = (outcome: 'failed' | 'timeout') => {
      const cp = c.trigger(now);
      now += 1000;
      return c.abort(cp.id, now, outcome, outcome);
    };
    assert.equal(fail('timeout').failed, undefined);
    assert.equal(fail('failed').failed, undefined);
    assert.equal(c.consecutiveFailures, 2);
    const id = run(c, now);
    c.complete(id, (now += 1000));
    assert.equal(c.consecutiveFailures, 0);
    fail('failed');
    fail('failed');
    assert.equal(c.phase, 'IDLE');
    assert.equal(fail('timeout').failed, true);
    assert.equal(c.phase, 'FAILED');
    assert.equal(c.consecutiveFailures, 3);
  });

  test('an abort can happen in any phase, and ids keep increasing', () => {
    const c = new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 10 });
    let cp = c.trigger(0);
    c.abort(cp.id, 1, 'failed', 'x');
    cp = c.trigger(2000);
    c.barrierReached(cp.id);
    c.abort(cp.id, 2001, 'failed', 'x');
    cp = c.trigger(4000);
    c.barrierReached(cp.id);
    c.preCommitted(cp.id);
    c.abort(cp.id, 4001, 'timeout', 'x');
    assert.equal(c.trigger(6000).id, 4);
  });

  test('an abort also delays the next trigger by min pause', () => {
    const c = new CheckpointCoordinator({ ...base, minPauseMs: 3000, tolerableFailedCheckpoints: 1 });
    const cp = c.trigger(0);
    c.abort(cp.id, 500, 'failed', 'x');
    assert.equal(c.nextTriggerAt(), 3500);
  });

  test('rejects nonsense configuration', () => {
    assert.throws(() => new CheckpointCoordinator({ ...base, intervalMs: 0 }), RangeError);
    assert.throws(() => new CheckpointCoordinator({ ...base, timeoutMs: -1 }), RangeError);
    assert.throws(() => new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 1.5 }), RangeError);
  });

  test('a late abort of an earlier checkpoint is refused and leaves the pending one alone', () => {
    const c = new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 5 });
    const first = c.trigger(0).id;
    c.abort(first, 100, 'failed', 'broker down');
    const second = c.trigger(1000);
    c.barrierReached(second.id);
    assert.throws(() => c.abort(first, 1100, 'timeout', 'late timer'), (e: unknown) => e instanceof IllegalTransition && /checkpoint 1 is not pending \(pending: 2\)/.test(e.message));
    assert.deepEqual(c.current, { id: 2, triggeredAt: 1000, phase: 'PRE_COMMIT' });
    assert.equal(c.consecutiveFailures, 1);
    assert.throws(() => c.abort(3, 1100, 'failed', 'future'), IllegalTransition);
    assert.throws(() => new CheckpointCoordinator(base).abort(1, 0, 'failed', 'nothing pending'), /checkpoint 1 is not pending \(pending: none\)/);
  });

  test('configuration bounds: each one named, zero allowed only where it means something', () => {
    const bad: [Partial<CoordinatorConfig>, RegExp][] = [
      [{ intervalMs: 0 }, /^checkpoint interval must be > 0$/],
      [{ timeoutMs: 0 }, /^checkpoint timeout must be > 0$/],
      [{ minPauseMs: -1 }, /^min pause must be >= 0$/],
      [{ tolerableFailedCheckpoints: -1 }, /^tolerable failed checkpoints must be an integer >= 0$/],
      [{ tolerableFailedCheckpoints: 1.5 }, /^tolerable failed checkpoints must be an integer >= 0$/],
    ];
    for (const [cfg, message] of bad) assert.throws(() => new CheckpointCoordinator({ ...base, ...cfg }), (e: unknown) => e instanceof RangeError && message.test(e.message), JSON.stringify(cfg));
    assert.doesNotThrow(() => new CheckpointCoordinator({ ...base, intervalMs: 1, timeoutMs: 1, minPauseMs: 0, tolerableFailedCheckpoints: 0 }));
  });

  test('the first checkpoint may start at once; trigger hands out a copy of the pending checkpoint', () => {
    const c = new CheckpointCoordinator({ ...base, minPauseMs: 500 });
    assert.equal(c.nextTriggerAt(), -Infinity);
    assert.equal(c.current, null);
    const cp = c.trigger(7);
    assert.deepEqual(cp, { id: 1, triggeredAt: 7, phase: 'BARRIER' });
    cp.phase = 'COMMITTING';
    assert.equal(c.phase, 'BARRIER', 'the returned object is not the coordinator\'s state');
    assert.deepEqual(c.current, { id: 1, triggeredAt: 7, phase: 'BARRIER' });
    assert.equal(c.failureReason, null);
    assert.equal(c.pendingCount, 1);
    assert.equal(c.deadline, 5007);
  });

  test('nothing pending has no deadline; the interval wins over a shorter min pause', () => {
    const c = new CheckpointCoordinator({ ...base, minPauseMs: 100 });
    const id = run(c, 0);
    c.complete(id, 50);
    assert.equal(c.nextTriggerAt(), 1000, 'max(0 + 1000, 50 + 100)');
    const cp = c.trigger(1000);
    c.abort(cp.id, 1200, 'failed', 'x');
    assert.equal(c.deadline, null, 'an aborted checkpoint has none either');
  });

  test('failures carried from an earlier run count towards FAILED, and a completion clears them', () => {
    const c = new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 2 }, { consecutiveFailures: 2 });
    assert.equal(c.consecutiveFailures, 2);
    assert.equal(c.phase, 'IDLE', 'carried failures alone do not make it FAILED');
    const r = c.abort(c.trigger(0).id, 10, 'failed', 'again');
    assert.equal(r.failed, true);
    assert.equal(c.failureReason, '3 consecutive failed checkpoints (tolerable: 2); last: again');
    const d = new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 2 }, { consecutiveFailures: 2 });
    d.complete(run(d, 0), 5);
    assert.equal(d.consecutiveFailures, 0);
    assert.equal(new CheckpointCoordinator(base).consecutiveFailures, 0, 'none carried by default');
    for (const bad of [-1, 0.5, NaN]) {
      assert.throws(() => new CheckpointCoordinator(base, { consecutiveFailures: bad }), (e: unknown) => e instanceof RangeError && e.message === 'carried consecutive failures must be an integer >= 0', String(bad));
    }
  });

  test('an abort reports its duration, outcome and reason; the FAILED reason counts the failures in plural', () => {
    const c = new CheckpointCoordinator({ ...base, tolerableFailedCheckpoints: 1 });
    let cp = c.trigger(100);
    assert.deepEqual(c.abort(cp.id, 350, 'timeout', 'slow broker'), { id: 1, durationMs: 250, outcome: 'timeout', reason: 'slow broker' });
    assert.equal(c.phase, 'IDLE');
    cp = c.trigger(2000);
    const r = c.abort(cp.id, 2100, 'failed', 'fenced');
    assert.deepEqual(r, { id: 2, durationMs: 100, outcome: 'failed', reason: 'fenced', failed: true });
    assert.equal(c.failureReason, '2 consecutive failed checkpoints (tolerable: 1); last: fenced');
    assert.equal(c.nextTriggerAt(), null);
    assert.equal(c.current, null);
  });

  test('refusals are IllegalTransitions that say which checkpoint is pending', () => {
    const c = new CheckpointCoordinator(base);
    const isIllegal = (message: string) => (e: unknown) => e instanceof IllegalTransition && e.name === 'IllegalTransition' && e.message === message;
    assert.throws(() => c.barrierReached(1), isIllegal('checkpoint 1 is not pending (pending: none)'));
    c.trigger(0);
    assert.throws(() => c.barrierReached(2), isIllegal('checkpoint 2 is not pending (pending: 1)'));
    assert.throws(() => c.trigger(1), isIllegal('checkpoint 1 is still pending (max concurrent checkpoints is 1)'));
  });

  test('a completed checkpoint lasted from its trigger to its completion', () => {
    const c = new CheckpointCoordinator(base);
    const id = run(c, 100);
    assert.deepEqual(c.complete(id, 350), { id, durationMs: 250, outcome: 'completed' });
  });
});
