import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon } from '../../src/daemon.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { createRegistry } from '../../src/metrics/registry.js';
import type { Service, ServiceHealth } from '../../src/service.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { VERSION } from '../../src/version.js';
import { memoryLogger } from '../harness/log.js';

/** A real Service whose readiness and start/stop behaviour the test controls. */
class ControlledService implements Service {
  isReady = false;
  started = false;
  stopped = false;
  constructor(
    readonly name: string,
    private readonly behaviour: { failStart?: boolean; stopDelayMs?: number } = {},
  ) {}
  async start(): Promise<void> {
    if (this.behaviour.failStart) throw new Error(`${this.name} cannot start`);
    this.started = true;
  }
  async stop(): Promise<void> {
    if (this.behaviour.stopDelayMs) await new Promise((r) => setTimeout(r, this.behaviour.stopDelayMs));
    this.stopped = true;
  }
  ready(): ServiceHealth {
    return this.isReady ? { ready: true } : { ready: false, detail: 'warming up' };
  }
}

const silent = createLogger('silent');

function makeDaemon(services: Service[], gracePeriod = '5s'): Daemon {
  const config = validateConfig({ http: { host: '127.0.0.1', port: 0 }, shutdown: { gracePeriod } }, 'test', {});
  const d = new Daemon({ config, logger: silent, registry: createRegistry(), services });
  after(() => d.stop(1000));
  return d;
}

describe('daemon and HTTP server', () => {
  test('/metrics is valid Prometheus text with eos_build_info and process metrics', async () => {
    const d = makeDaemon([]);
    await d.start();
    const res = await fetch(`${d.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const parsed = parsePrometheusText(await res.text());
    assert.equal(sampleValue(parsed, 'eos_build_info', { version: VERSION }), 1);
    assert.equal(parsed.types.get('eos_build_info'), 'gauge');
    assert.ok(parsed.samples.some((s) => s.name === 'process_cpu_user_seconds_total'));
  });

  test('/readyz is 503 naming the service that is not ready, then 200', async () => {
    const a = new ControlledService('alpha');
    const b = new ControlledService('beta');
    a.isReady = true;
    const d = makeDaemon([a, b]);
    await d.start();
    let res = await fetch(`${d.url}/readyz`);
    assert.equal(res.status, 503);
    const body = (await res.json()) as { status: string; notReady: string[] };
    assert.equal(body.status, 'not ready');
    assert.deepEqual(body.notReady, ['beta: warming up']);
    const metrics = parsePrometheusText(await (await fetch(`${d.url}/metrics`)).text());
    assert.equal(sampleValue(metrics, 'eos_service_ready', { service: 'alpha' }), 1);
    assert.equal(sampleValue(metrics, 'eos_service_ready', { service: 'beta' }), 0);
    b.isReady = true;
    res = await fetch(`${d.url}/readyz`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { status: string }).status, 'ready');
  });

  test('a service that fails to start fails readiness but not the server', async () => {
    const good = new ControlledService('good');
    good.isReady = true;
    const broken = new ControlledService('broken', { failStart: true });
    const d = makeDaemon([good, broken]);
    await d.start();
    assert.equal(good.started, true);
    assert.equal((await fetch(`${d.url}/healthz`)).status, 200);
    const res = await fetch(`${d.url}/readyz`);
    assert.equal(res.status, 503);
    const body = (await res.json()) as { notReady: string[] };
    assert.equal(body.notReady.length, 1);
    assert.match(body.notReady[0]!, /^broken: failed: broken cannot start; restart 1 in \d+ s$/);
    assert.equal((await fetch(`${d.url}/metrics`)).status, 200);
  });

  test('landing page links the endpoints; unknown paths are 404', async () => {
    const d = makeDaemon([]);
    await d.start();
    const html = await (await fetch(`${d.url}/`)).text();
    for (const p of ['/metrics', '/healthz', '/readyz']) assert.match(html, new RegExp(`href="${p}"`));
    assert.equal((await fetch(`${d.url}/nope`)).status, 404);
  });

  test('stop() stops services in reverse order and closes the server', async () => {
    const order: string[] = [];
    class Recording extends ControlledService {
      override async stop(): Promise<void> {
        order.push(this.name);
      }
    }
    const d = makeDaemon([new Recording('first'), new Recording('second')]);
    await d.start();
    const url = d.url!;
    assert.equal(await d.stop(), true);
    assert.deepEqual(order, ['second', 'first']);
    await assert.rejects(fetch(`${url}/healthz`));
  });

  test('stop() gives up after the grace period when a service hangs', async () => {
    const d = makeDaemon([new ControlledService('slow', { stopDelayMs: 5000 })]);
    await d.start();
    const t0 = Date.now();
    assert.equal(await d.stop(300), false);
    assert.ok(Date.now() - t0 < 2000);
  });

  test('listening on a port in use is a clear error', async () => {
    const d1 = makeDaemon([]);
    await d1.start();
    const config = validateConfig({ http: { host: '127.0.0.1', port: d1.port } }, 'test', {});
    const d2 = new Daemon({ config, logger: silent, registry: createRegistry(), services: [] });
    await assert.rejects(d2.start(), /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
  });
});

describe('logging', () => {
  test('secret paths are redacted', () => {
    const { log, lines } = memoryLogger();
    log.info({ kafka: { sasl: { mechanism: 'plain', username: 'u', password: 'hunter2' }, ssl: { passphrase: 'pp-secret', key: 'PRIVATE' } }, password: 'top' }, 'config');
    log.child({ service: 'x' }).warn({ sasl: { password: 'child-secret' } }, 'child');
    const all = lines.join('');
    for (const secret of ['hunter2', 'pp-secret', 'PRIVATE', 'top', 'child-secret']) assert.ok(!all.includes(secret), `${secret} leaked: ${all}`);
    assert.match(all, /"username":"u"/);
    assert.match(all, /\[REDACTED\]/);
  });
});
