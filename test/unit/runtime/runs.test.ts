// The run families (src/runtime/runs.ts) on the manual clock: each run's duration, result and
// last success, one family for every service, a run failing by throwing or by returning false.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ManualClock } from '../../../src/runtime/clock.js';
import { every, failures, measured } from '../../../src/runtime/runs.js';

async function values(registry: Registry, name: string): Promise<Map<string, number>> {
  const m = registry.getSingleMetric(name);
  assert.ok(m, `${name} registered`);
  const out = new Map<string, number>();
  for (const v of (await m.get()).values) out.set(Object.entries(v.labels).map(([k, x]) => `${k}=${x}`).sort().join(','), v.value);
  return out;
}

describe('service runs', () => {
  test('a measured run: its duration on the clock, success 1, the ok counter and when it last succeeded', async () => {
    const registry = new Registry();
    const clock = new ManualClock(5_000_000);
    let release!: () => void;
    const run = measured({ registry, service: 'lag', task: 'reading', clock }, () => new Promise<void>((r) => (release = r)));
    // Both results exist before the first run.
    assert.deepEqual([...(await values(registry, 'eos_service_runs_total'))], [
      ['result=ok,service=lag,task=reading', 0],
      ['result=failed,service=lag,task=reading', 0],
    ]);
    const p = run();
    await clock.advance(1500);
    release();
    await p;
    assert.equal((await values(registry, 'eos_service_run_duration_seconds')).get('service=lag,task=reading'), 1.5);
    assert.equal((await values(registry, 'eos_service_run_success')).get('service=lag,task=reading'), 1);
    assert.equal((await values(registry, 'eos_service_runs_total')).get('result=ok,service=lag,task=reading'), 1);
    assert.equal((await values(registry, 'eos_service_runs_total')).get('result=failed,service=lag,task=reading'), 0);
    assert.equal((await values(registry, 'eos_service_last_success_timestamp_seconds')).get('service=lag,task=reading'), 5001.5);
  });

  test('a run that throws fails and rejects with its error; one that returns false fails and resolves; the last success stays', async () => {
    const registry = new Registry();
    const clock = new ManualClock(1_000_000);
    const results: (boolean | Error)[] = [true, new Error('no broker answered'), false, true];
    let i = 0;
    const run = measured({ registry, service: 'kafka-health', task: 'probe', clock }, async () => {
      const r = results[i++]!;
      await clock.sleep(100);
      if (r instanceof Error) throw r;
      return r;
    });
    const step = async () => {
      const p = run();
      p.catch(() => undefined); // rejected while the clock moves: handled by the caller's assert
      await clock.advance(100);
      return p;
    };
    assert.equal(await step(), true);
    const success = async () => (await values(registry, 'eos_service_run_success')).get('service=kafka-health,task=probe');
    const last = async () => (await values(registry, 'eos_service_last_success_timestamp_seconds')).get('service=kafka-health,task=probe');
    assert.equal(await success(), 1);
    assert.equal(await last(), 1000.1);
    await clock.advance(900);
    await assert.rejects(step(), /no broker answered/);
    assert.equal(await success(), 0);
    assert.equal(await last(), 1000.1, 'a failed run leaves the last success');
    assert.equal(await step(), false);
    assert.equal(await success(), 0);
    await clock.advance(800);
    assert.equal(await step(), true);
    assert.equal(await success(), 1);
    assert.equal(await last(), 1002.1);
    const runs = await values(registry, 'eos_service_runs_total');
    assert.equal(runs.get('result=ok,service=kafka-health,task=probe'), 2);
    assert.equal(runs.get('result=failed,service=kafka-health,task=probe'), 2);
  });

  test('a custom verdict: an audit run that returned no report failed', async () => {
    const registry = new Registry();
    let report: object | undefined = { critical: 0 };
    const run = measured({ registry, service: 'audit', task: 'run' }, async () => report, (r) => r !== undefined);
    await run();
    assert.equal((await values(registry, 'eos_service_run_success')).get('service=audit,task=run'), 1);
    report = undefined;
    await run();
    assert.equal((await values(registry, 'eos_service_run_success')).get('service=audit,task=run'), 0);
  });

  test('every(): one family for all services on a registry, each run measured on the schedule, errors reported', async () => {
    const registry = new Registry();
    const clock = new ManualClock();
    const errors: unknown[] = [];
    let n = 0;
    const a = every(() => undefined, { registry, service: 'lso-monitor', task: 'reading', intervalMs: 1000, clock });
    const b = every(
      () => {
        if (++n === 2) throw new Error('pass failed');
      },
      { registry, service: 'transactions', task: 'pass', intervalMs: 1000, clock, onError: (e) => errors.push(e) },
    );
    a.start();
    b.start();
    await clock.advance(2500);
    await a.stop();
    await b.stop();
    const runs = await values(registry, 'eos_service_runs_total');
    assert.equal(runs.get('result=ok,service=lso-monitor,task=reading'), 3);
    assert.equal(runs.get('result=ok,service=transactions,task=pass'), 2);
    assert.equal(runs.get('result=failed,service=transactions,task=pass'), 1);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /pass failed/);
  });

  test('every(): the first run after firstDelayMs', async () => {
    const registry = new Registry();
    const clock = new ManualClock();
    const starts: number[] = [];
    const p = every(() => void starts.push(clock.now() - 1_000_000), { registry, service: 'canary', task: 'send', intervalMs: 100, firstDelayMs: 100, clock });
    p.start();
    await clock.advance(50);
    assert.deepEqual(starts, []);
    await clock.advance(200);
    await p.stop();
    assert.deepEqual(starts, [100, 200]);
  });

  test('failures(): one family for every service, by what failed and its kind, each present at 0 from the start', async () => {
    const registry = new Registry();
    const clock = new ManualClock();
    const target = { registry, service: 'transactions', task: 'pass', clock };
    const failed = failures(target, ['log', 'poll']);
    assert.deepEqual([...(await values(registry, 'eos_service_errors_total'))], [
      ['kind=permission,service=transactions,task=pass,what=log', 0],
      ['kind=error,service=transactions,task=pass,what=log', 0],
      ['kind=permission,service=transactions,task=pass,what=poll', 0],
      ['kind=error,service=transactions,task=pass,what=poll', 0],
    ]);
    failed('log', 'permission');
    failed('log', 'permission');
    failed('poll');
    // Another service on the same registry counts in the same family, under its own labels.
    failures({ registry, service: 'lag', task: 'reading' }, ['group'])('group', 'error');
    const errors = await values(registry, 'eos_service_errors_total');
    assert.equal(errors.get('kind=permission,service=transactions,task=pass,what=log'), 2);
    assert.equal(errors.get('kind=error,service=transactions,task=pass,what=log'), 0);
    assert.equal(errors.get('kind=error,service=transactions,task=pass,what=poll'), 1, 'the kind defaults to error');
    assert.equal(errors.get('kind=permission,service=transactions,task=pass,what=poll'), 0);
    assert.equal(errors.get('kind=error,service=lag,task=reading,what=group'), 1);
    assert.equal(errors.get('kind=permission,service=lag,task=reading,what=group'), 0);
    assert.equal(errors.size, 6);
    // Counting a failure is no run: the run families are untouched.
    assert.equal((await values(registry, 'eos_service_runs_total')).size, 0);
  });

  test('a bad interval names what was configured, else the service and task', () => {
    assert.throws(() => every(() => undefined, { registry: new Registry(), service: 'lag', task: 'reading', intervalMs: -1 }), /^RangeError: lag reading: interval must be/);

    assert.throws(() => every(() => undefined, { registry: new Registry(), service: 'streams', task: 'reading', name: 'streams.interval', intervalMs: 0 }), /streams\.interval: interval must be a positive number of ms, got 0/);
  });
});
