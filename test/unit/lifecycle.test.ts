// The life of a long-running command (src/lifecycle.ts): a stop that overran the grace period
// ends the process at once with the reason as its last line; a clean stop hands back the reason
// for the command's own last line. And the demo's configuration, which keeps serving.
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { describeReason, runUntilStoppedOutcome } from '../../src/lifecycle.js';
import { demoConfig, demoExitLine } from '../../harness/demo/kafka.js';
import { memoryLogger } from '../harness/log.js';
import { until } from '../harness/wait.js';

const last = (lines: string[]) => JSON.parse(lines.at(-1)!) as Record<string, unknown> & { msg: string };
const never = () => new Promise<Error>(() => undefined);

describe('runUntilStopped', () => {
  afterEach(() => {
    // The second-signal handlers runUntilStopped leaves for the rest of the process.
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
  });

  test('a stop that overran the grace period exits at once with code 1, the reason its last line', async () => {
    const { log, lines } = memoryLogger();
    const exits: number[] = [];
    const run = runUntilStoppedOutcome(async () => ({ stop: async () => false, fatal: never() }), log, { gracePeriodMs: 20_000, exit: (code) => exits.push(code) });
    await new Promise((r) => setImmediate(r));
    process.emit('SIGTERM');
    const outcome = await run;
    assert.deepEqual(outcome, { code: 1, why: 'SIGTERM', clean: false });
    assert.deepEqual(exits, [1], 'the process is ended, not left to whatever still holds the event loop');
    const l = last(lines);
    assert.equal(l.msg, 'exiting: shutdown after SIGTERM did not finish within the grace period of 20 s (shutdown.gracePeriod); services still stopping are cut off');
    assert.equal(l.exitCode, 1);
  });

  test('a clean stop after a signal: code 0, "stopped" with the reason, and the process is not ended here', async () => {
    const { log, lines } = memoryLogger();
    const exits: number[] = [];
    const run = runUntilStoppedOutcome(async () => ({ stop: async () => true, fatal: never() }), log, { gracePeriodMs: 1000, cleanupMs: 60_000, exit: (code) => exits.push(code) });
    await new Promise((r) => setImmediate(r));
    process.emit('SIGINT');
    assert.deepEqual(await run, { code: 0, why: 'SIGINT', clean: true });
    assert.deepEqual(exits, []);
    assert.equal(last(lines).msg, 'stopped');
    assert.equal(last(lines).reason, 'SIGINT');
  });

  test('a fatal service error: code 1 even when the stop is clean; the clean-up after it is bounded', async () => {
    const { log, lines } = memoryLogger();
    const exits: number[] = [];
    const outcome = await runUntilStoppedOutcome(async () => ({ stop: async () => true, fatal: Promise.resolve(new Error('pipeline FAILED')) }), log, {
      gracePeriodMs: 1000,
      cleanupMs: 50,
      exit: (code) => exits.push(code),
    });
    assert.deepEqual(outcome, { code: 1, why: 'fatal service error: pipeline FAILED', clean: true });
    // A clean-up that hangs (the demo's cluster, a stuck producer) is cut off after cleanupMs.
    const hold = setInterval(() => undefined, 1000);
    await until('the exit once the clean-up was cut off', () => exits.length > 0, 5000, { intervalMs: 10 });
    clearInterval(hold);
    assert.deepEqual(exits, [1]);
    assert.match(last(lines).msg, /^exiting: clean-up after fatal service error: pipeline FAILED did not finish within 0\.05 s/);
  });

  test('a second signal during shutdown exits at once, saying so', async () => {
    const { log, lines } = memoryLogger();
    const exits: number[] = [];
    let release!: (v: boolean) => void;
    const run = runUntilStoppedOutcome(async () => ({ stop: () => new Promise<boolean>((r) => (release = r)), fatal: never() }), log, { gracePeriodMs: 1000, exit: (code) => exits.push(code) });
    await new Promise((r) => setImmediate(r));
    process.emit('SIGTERM');
    await new Promise((r) => setImmediate(r));
    process.emit('SIGINT');
    assert.deepEqual(exits, [1]);
    assert.equal(last(lines).msg, 'exiting at once: SIGINT during shutdown (after SIGTERM)');
    release(true);
    await run;
  });

  test('describeReason', () => {
    assert.equal(describeReason({ signal: 'SIGTERM' }), 'SIGTERM');
    assert.equal(describeReason({ error: new Error('boom') }), 'fatal service error: boom');
  });
});

describe('the demo', () => {
  test('its config keeps serving through a FAILED pipeline and restarts it, on 1 and 3 nodes', () => {
    for (const brokers of [['127.0.0.1:1'], ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3']]) {
      const c = demoConfig(brokers, 0);
      assert.equal(c.pipeline.onFailure, 'keep-serving', `${brokers.length} node(s)`);
      assert.equal(c.pipeline.restartStrategy.type, 'exponential-delay');
      assert.equal(c.pipeline.restartStrategy.attempts, 0, 'never gives up while the demo runs');
      assert.equal(c.pipeline.restartStrategy.initialBackoff, 1000);
      assert.equal(c.pipeline.restartStrategy.maxBackoff, 10_000);
    }
  });

  test('its last line says why it exits', () => {
    assert.equal(demoExitLine({ code: 0, why: 'SIGINT', clean: true }, undefined), 'demo exiting (SIGINT, exit code 0): Kafka cluster stopped, data and logs kept');
    assert.equal(
      demoExitLine({ code: 1, why: 'fatal service error: pipeline FAILED', clean: true }, undefined),
      'demo exiting (fatal service error: pipeline FAILED, exit code 1): Kafka cluster stopped, data and logs kept',
    );
    assert.equal(demoExitLine(undefined, new Error('topics: cannot create\nmore')), 'demo exiting (error: topics: cannot create, exit code 1): Kafka cluster stopped, data and logs kept');
  });
});
