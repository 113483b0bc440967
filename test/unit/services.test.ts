// The service registry (src/services.ts, src/service.ts defineService) and the daemon built from
// it (src/create-daemon.ts): which services a configuration switches on, in which order, and
// that a new service is its definition alone: supervision, readiness, its route and the
// measurement of its runs come without a line of its own.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../src/config/load.js';
import { createDaemon } from '../../src/create-daemon.js';
import { createLogger } from '../../src/log.js';
import { SERVICES } from '../../src/services.js';
import { defineService, type Service, type ServiceContext, type ServiceHealth } from '../../src/service.js';
import type { Periodic } from '../../src/runtime/periodic.js';
import { every } from '../../src/runtime/runs.js';
import { Router } from 'express';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { until } from '../harness/wait.js';

const silent = createLogger('silent');
const services = (config: Record<string, unknown>) =>
  Object.keys(createDaemon(validateConfig({ kafka: { brokers: ['127.0.0.1:1'] }, ...config }, 't.yaml'), silent).daemon.readiness().services);

describe('the service registry', () => {
  test('each definition is named once, after the service it builds', () => {
    const names = SERVICES.map((d) => d.name);
    assert.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), []);
    assert.deepEqual(names, ['kafka-health', 'pipeline', 'lso-monitor', 'transactions', 'flink', 'streams', 'lag', 'canary', 'audit', 'status']);
  });

  test('the configuration switches services on: the defaults, then everything, in the registry order', () => {
    assert.deepEqual(services({ pipeline: { enabled: false }, lsoMonitor: { enabled: false } }), ['kafka-health', 'audit', 'status'], 'the audit is on by default');
    assert.deepEqual(services({ pipeline: { enabled: false }, lsoMonitor: { enabled: true, topics: [] } }), ['kafka-health', 'audit', 'status'], 'an LSO monitor with no topic to watch is not built');
    assert.deepEqual(services({ pipeline: { enabled: false }, streams: { enabled: true, applications: [{ applicationId: 'orders' }] } }), ['kafka-health', 'streams', 'lag', 'audit', 'status'], 'a Streams application brings the lag service along');
    assert.deepEqual(services({ pipeline: { enabled: false }, streams: { enabled: true, discover: true } }), ['kafka-health', 'streams', 'lag', 'audit', 'status'], 'discovering Streams applications too');
    assert.deepEqual(services({ pipeline: { enabled: false }, streams: { enabled: false, discover: true } }), ['kafka-health', 'audit', 'status'], 'discover without enabled does nothing');
    assert.deepEqual(
      services({
        pipeline: { enabled: true, sourceTopic: 'in', sinkTopic: 'out', groupId: 'g', transactionalIdPrefix: 'p' },
        flink: { enabled: true, restUrls: ['http://127.0.0.1:1'], sinks: [{ job: 'j', topics: ['f-out'] }] },
        lag: { enabled: true, groups: ['g'] },
        streams: { enabled: true, applications: [{ applicationId: 'orders' }] },
        canary: { enabled: true },
        audit: { enabled: true },
        transactions: { enabled: true },
      }),
      ['kafka-health', 'pipeline', 'lso-monitor', 'transactions', 'flink', 'streams', 'lag', 'canary', 'audit', 'status'],
    );
  });

  test('a new service is its definition: supervised (a failure restarts it), in /readyz, its route served, its runs measured', async () => {
    let instances = 0;
    class Beat implements Service {
      readonly name = 'beat';
      private readonly periodic: Periodic;
      runs = 0;
      constructor(private readonly ctx: ServiceContext) {
        instances++;
        this.periodic = every(() => ++this.runs < 3 || this.runs % 2 === 0, { registry: ctx.registry, service: this.name, task: 'tick', intervalMs: 20 });
      }
      async start(): Promise<void> {
        this.periodic.start();
      }
      async stop(): Promise<void> {
        await this.periodic.stop();
      }
      ready(): ServiceHealth {
        return { ready: this.runs > 0, detail: `${this.runs} runs` };
      }
      fail(): void {
        void this.stop().then(() => this.ctx.failed?.(new Error('beat lost its rhythm')));
      }
    }
    let beat: Beat | undefined;
    const def = defineService({
      name: 'beat',
      section: 'beat',
      enabled: () => true,
      create: ({ ctx }) => {
        beat = new Beat(ctx);
        const router = Router();
        router.get('/', (_req, res) => void res.json({ runs: beat!.runs }));
        return { service: beat, routes: [{ path: '/beat', description: 'the beat', router }] };
      },
    });
    const config = validateConfig({ http: { host: '127.0.0.1', port: 0 }, supervisor: { initialBackoff: '10ms', maxBackoff: '20ms' } }, 't.yaml');
    const { daemon } = createDaemon(config, silent, undefined, [def]);
    after(() => daemon.stop(1000));
    await daemon.start();
    const metrics = async () => parsePrometheusText(await (await fetch(`${daemon.url}/metrics`)).text());
    await until('beat ready', async () => (await fetch(`${daemon.url}/readyz`)).status === 200);
    assert.ok(((await (await fetch(`${daemon.url}/beat`)).json()) as { runs: number }).runs > 0);
    await until('a failed run measured', async () => sampleValue(await metrics(), 'eos_service_runs_total', { service: 'beat', task: 'tick', result: 'failed' })! >= 1);
    const m = await metrics();
    assert.ok(sampleValue(m, 'eos_service_runs_total', { service: 'beat', task: 'tick', result: 'ok' })! >= 2);
    assert.ok(sampleValue(m, 'eos_service_run_duration_seconds', { service: 'beat', task: 'tick' }) !== undefined);
    assert.equal(sampleValue(m, 'eos_service_ready', { service: 'beat' }), 1);
    beat!.fail();
    await until('restarted by the supervisor', async () => sampleValue(await metrics(), 'eos_service_restarts_total', { service: 'beat' })! >= 1);
    await until('ready again', async () => (await fetch(`${daemon.url}/readyz`)).status === 200);
    assert.equal(instances, 1, 'restarted as the same instance (stop, then start)');
  });
});
