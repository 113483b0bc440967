import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon } from '../../src/daemon.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { backoffDelay, nextAttempt, restartDelay, type BackoffConfig } from '../../src/restart.js';
import type { RestartPolicy, Service, ServiceHealth } from '../../src/service.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { holds, until } from '../harness/wait.js';

/** Fails its first `failures` starts; a start may take `startMs`; records every start and stop. */
class Flaky implements Service {
  starts = 0;
  stops = 0;
  running = false;
  restartPolicy?: RestartPolicy;
  constructor(
    readonly name: string,
    private failures = 0,
    private readonly startMs = 0,
  ) {}
  async start(): Promise<void> {
    this.starts++;
    if (this.startMs) await new Promise((r) => setTimeout(r, this.startMs));
    if (this.failures > 0) {
      this.failures--;
      throw new Error(`${this.name}: cluster not reachable`);
    }
    this.running = true;
  }
  async stop(): Promise<void> {
    this.stops++;
    this.running = false;
  }
  ready(): ServiceHealth {
    return { ready: this.running, detail: this.running ? 'running' : 'not running' };
  }
}

const silent = createLogger('silent');

function makeDaemon(services: Service[]): { d: Daemon; metrics: () => Promise<string> } {
  const config = validateConfig(
    { http: { host: '127.0.0.1', port: 0 }, supervisor: { initialBackoff: '50ms', maxBackoff: '200ms', jitter: 0 } },
    'test',
    {},
  );
  const registry = createRegistry();
  const d = new Daemon({ config, logger: silent, registry, services });
  after(() => d.stop(1000));
  return { d, metrics: () => registry.metrics() };
}

describe('restart policies (pure)', () => {
  const b: BackoffConfig = { initialBackoff: 1000, maxBackoff: 8000, multiplier: 2, jitter: 0, resetAfter: 60_000 };
  test('exponential backoff doubles up to the maximum', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(b, a)), [1000, 2000, 4000, 8000, 8000, 8000]);
  });
  test('jitter spreads a delay within ±jitter and never past the maximum', () => {
    const j = { ...b, jitter: 0.5 };
    assert.equal(backoffDelay(j, 2, () => 0), 1000);
    assert.equal(backoffDelay(j, 2, () => 0.999999), 3000);
    assert.equal(backoffDelay(j, 4, () => 0.999999), 8000);
  });
  test('fixed-delay and exponential-delay give up after `attempts`; none at once; 0 = no limit', () => {
    assert.equal(restartDelay({ type: 'none' }, 1), null);
    const fixed = { type: 'fixed-delay' as const, delay: 300, attempts: 2, resetAfter: 1000 };
    assert.deepEqual([1, 2, 3].map((a) => restartDelay(fixed, a)), [300, 300, null]);
    assert.equal(restartDelay({ ...fixed, attempts: 0 }, 1000), 300);
    const exp = { type: 'exponential-delay' as const, attempts: 3, ...b };
    assert.deepEqual([1, 2, 3, 4].map((a) => restartDelay(exp, a, () => 0.5)), [1000, 2000, 4000, null]);
  });
  test('a run longer than resetAfter starts the count again', () => {
    assert.equal(nextAttempt(5, 59_999, 60_000), 6);
    assert.equal(nextAttempt(5, 60_000, 60_000), 1);
  });
});

describe('supervisor', () => {
  test('services start at once: a start that hangs holds up no other', async () => {
    const slow = new Flaky('slow', 0, 3000);
    const fast = new Flaky('fast');
    const { d } = makeDaemon([slow, fast]);
    const t0 = Date.now();
    await d.start();
    await until('fast started', () => fast.running, 10_000, { intervalMs: 20 });
    assert.ok(Date.now() - t0 < 2000, `fast started after ${Date.now() - t0} ms`);
    assert.equal(slow.running, false);
  });

  test('a failed start is retried with backoff until it succeeds, counted, and /readyz says so meanwhile', async () => {
    const svc = new Flaky('pipeline', 3);
    const { d, metrics } = makeDaemon([svc]);
    await d.start();
    await d.firstAttempts();
    const r = await fetch(`${d.url}/readyz`);
    assert.equal(r.status, 503);
    assert.match(((await r.json()) as { notReady: string[] }).notReady[0]!, /^pipeline: failed: pipeline: cluster not reachable; restart/);
    await until('started', () => svc.running, 10_000, { intervalMs: 20 });
    assert.equal(svc.starts, 4);
    assert.equal((await fetch(`${d.url}/readyz`)).status, 200);
    assert.equal(sampleValue(parsePrometheusText(await metrics()), 'eos_service_restarts_total', { service: 'pipeline' }), 3);
  });

  test('a runtime failure is restarted by the service policy; a policy that gives up leaves it failed', async () => {
    const again = new Flaky('canary');
    const once = new Flaky('pipeline');
    once.restartPolicy = { delay: (attempt) => (attempt <= 1 ? 10 : null), resetAfterMs: 60_000 };
    const { d, metrics } = makeDaemon([again, once]);
    await d.start();
    await until('both running', () => again.running && once.running, 10_000, { intervalMs: 20 });
    for (const s of [again, once]) {
      s.running = false;
      d.serviceFailed(s.name, new Error('boom'));
    }
    await until('restarted', () => again.running && once.running, 10_000, { intervalMs: 20 });
    assert.equal(again.stops, 1, 'stopped before the restart');
    once.running = false;
    d.serviceFailed('pipeline', new Error('boom again'));
    const body = (await (await fetch(`${d.url}/readyz`)).json()) as { notReady: string[] };
    assert.deepEqual(body.notReady, ['pipeline: failed: boom again; not restarted (its restart strategy gave up)']);
    const m = parsePrometheusText(await metrics());
    assert.equal(sampleValue(m, 'eos_service_restarts_total', { service: 'pipeline' }), 1);
    assert.equal(sampleValue(m, 'eos_service_restarts_total', { service: 'canary' }), 1);
  });

  test('stop() during a start in flight stops the service and cancels pending retries', async () => {
    const svc = new Flaky('slow', 0, 300);
    const failing = new Flaky('failing', 1000);
    const { d } = makeDaemon([svc, failing]);
    await d.start();
    assert.equal(await d.stop(2000), true);
    assert.equal(svc.running, false);
    const starts = failing.starts;
    await holds('no retry after stop', () => failing.starts === starts, 300, { intervalMs: 20 });
  });
});
