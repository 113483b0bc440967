// The live end-to-end test of what operators see: Prometheus (Debian package `prometheus`) on
// loopback with the shipped alert rules, scraping an eoswatch daemon that runs the pipeline, the
// audit, the canary, the LSO monitor and the lag service against the real 3-node cluster. Every dashboard and
// alert expression must be accepted, every metric they reference must exist, the overview's
// panels must return data, and killing eoswatch must turn EosExporterDown pending.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createTopic, runEoswatch, until, useCluster } from '../harness/index.js';
import { killedWithOpenTransaction } from '../harness/txn.js';
import { pipelineConfig, pipelineTopics } from '../harness/pipeline.js';
import { WorkerProcess } from '../../harness/chaos/worker.js';
import { produceSeed } from '../harness/seed.js';
import { RULES_FILE, alertRules, dashboardPanels, grafanaToPromql, metricNames } from '../harness/promql.js';
import { tempDirs } from '../harness/tmp.js';

const PROMETHEUS = process.env.PROMETHEUS ?? 'prometheus';
// Exported only with flink.enabled (this daemon runs eoswatch's own pipeline); their presence, and
// the Flink panels' data, are asserted by test/integration/flink.test.ts on a real Flink job.
const FLINK_ONLY = [
  'eos_pipeline_restarts_total',
  'eos_flink_rest_up',
  'eos_flink_sink_visibility_latency_seconds_bucket',
  'eos_flink_sink_visibility_pending_seconds',
  'eos_flink_sink_commit_time_seconds_total',
  'eos_flink_sink_committables_total',
  'eos_flink_checkpoint_stats_staleness_seconds',
];
// Exported only while a transaction hangs: made so by the test of EosCoordinatorHangingTransaction below.
const HANGING_ONLY = ['eos_coordinator_hanging_transaction_info'];
/** Kafka Streams applications only (the streams: section; test/integration/streams.test.ts runs one). */
const STREAMS_ONLY = ['eos_streams_rebalance_in_progress_seconds', 'eos_streams_rebalances_total', 'eos_streams_rebalance_duration_seconds_bucket'];
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';
const temp = tempDirs('eoswatch-prom-');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

interface PromResponse<T> {
  status: string;
  data: T;
  error?: string;
}

describe('live Prometheus end to end (3-node cluster)', () => {
  const h = useCluster({ nodes: 3 });
  let prom = '';
  // Started in the before hook, so stopped by pid in the after hook of this block (not per test).
  let daemon: WorkerProcess | undefined;
  let prometheus: ChildProcess | undefined;

  const api = async <T>(path: string): Promise<PromResponse<T>> => (await fetch(`${prom}${path}`)).json() as Promise<PromResponse<T>>;
  const query = (q: string) => api<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(q)}`);

  before(async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'prom', 3, 3);
    await produceSeed(h.cluster.brokers, s.source, 3, 3000);
    daemon = new WorkerProcess(
      pipelineConfig(s, {}, {
        canary: { enabled: true, rate: 20, lostAfter: '30s' },
        lsoMonitor: { interval: '1s' },
        lag: { enabled: true, groups: ['all'], interval: '1s' },
        audit: { enabled: true, schedule: '*/1 * * * *', topics: [s.source, s.sink] },
        transactions: { enabled: true, interval: '1s', idleAfter: '3s' },
      }),
      'daemon',
    );
    await daemon.waitFor(/canary started/, 90_000);
    const target = new URL(await daemon.url).host;

    const dir = await temp.make();
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [RULES_FILE],
        scrape_configs: [{ job_name: 'eoswatch', static_configs: [{ targets: [target] }] }],
      }),
    );
    const port = await freePort();
    prom = `http://127.0.0.1:${port}`;
    const p = (prometheus = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--web.enable-lifecycle'], { stdio: ['ignore', 'ignore', 'pipe'] }));
    let out = '';
    p.stderr!.on('data', (d) => (out += d));
    p.on('error', (err) => (out += `\ncannot start ${PROMETHEUS}: ${err.message} (install the Debian package prometheus)`));
    await until('Prometheus ready', async () => (await fetch(`${prom}/-/ready`)).ok, 60_000, { intervalMs: 1000 }).catch((err: Error) => {
      throw new Error(`${err.message}\n${out.slice(-3000)}`);
    });
    // A few scrapes with the canary and checkpoints running, and one audit.
    await until(
      'eoswatch scraped with canary, pipeline, audit and lag data',
      async () => {
        const r = await query(
          'count(eos_canary_records_total{result="received"} > 0) and count(eos_checkpoints_total{outcome="completed"} > 0) and count(eos_audit_check_passed) and count(eos_consumer_lag_records)',
        );
        return r.data.result.length > 0;
      },
      120_000,
      { intervalMs: 1000 },
    );
    // rate() and increase() in the rules and panels need two samples of a counter in their window.
    await until('two scrapes of the counters', async () => (await query('count(rate(eos_checkpoints_total[1m]))')).data.result.length > 0, 60_000, { intervalMs: 1000 });
  });

  after(async () => {
    await daemon?.kill();
    if (prometheus?.pid && prometheus.exitCode === null && prometheus.signalCode === null) {
      const gone = new Promise((r) => prometheus!.once('exit', r));
      process.kill(prometheus.pid, 'SIGKILL');
      await gone;
    }
  });

  test('the /metrics text passes promtool check metrics with no findings', async () => {
    const text = await daemon!.metricsText();
    const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(r.error, undefined, `cannot run ${PROMTOOL}: install the Debian package prometheus`);
    assert.equal(`${r.stdout}${r.stderr}`.trim(), '', 'promtool findings');
    assert.equal(r.status, 0);
  });

  test('Prometheus loaded every alert rule and evaluates it without error', async () => {
    const r = await api<{ groups: { rules: { name: string; health: string; lastError?: string; type: string }[] }[] }>('/api/v1/rules');
    const loaded = r.data.groups.flatMap((g) => g.rules).filter((x) => x.type === 'alerting');
    assert.deepEqual(loaded.map((x) => x.name).sort(), alertRules().map((x) => x.alert).sort());
    const unhealthy = loaded.filter((x) => x.health !== 'ok').map((x) => `${x.name}: ${x.health} ${x.lastError ?? ''}`);
    assert.deepEqual(unhealthy, []);
  });

  test('every alert and dashboard expression is accepted, and every metric they reference exists', async () => {
    const exprs = [...alertRules().map((r) => r.expr), ...dashboardPanels().flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? '')).filter(Boolean).map(grafanaToPromql)];
    const rejected: string[] = [];
    for (const e of exprs) {
      const r = await query(e);
      if (r.status !== 'success') rejected.push(`${e}: ${r.error}`);
    }
    assert.deepEqual(rejected, []);
    const names = new Set(exprs.flatMap(metricNames));
    for (const absent of [...FLINK_ONLY, ...HANGING_ONLY, ...STREAMS_ONLY]) names.delete(absent);
    const missing: string[] = [];
    for (const n of names) {
      const r = await query(`count(${n})`);
      if (!r.data.result.length) missing.push(n);
    }
    assert.deepEqual(missing, [], 'metrics referenced by the dashboard or the alerts but not exported');
  });

  test('every panel of the overview dashboard returns data', async () => {
    const empty: string[] = [];
    // The Flink row's panels have data in test/integration/flink.test.ts (a real Flink job), the Streams row's in streams.test.ts.
    const flinkOnly = (p: { targets?: { expr?: string }[] }) => (p.targets ?? []).every((t) => metricNames(t.expr ?? '').every((n) => FLINK_ONLY.includes(n) || HANGING_ONLY.includes(n) || STREAMS_ONLY.includes(n)));
    for (const p of dashboardPanels().filter((x) => x.targets?.length && !flinkOnly(x))) {
      let rows = 0;
      for (const t of p.targets!) if (t.expr) rows += (await query(grafanaToPromql(t.expr))).data.result.length;
      if (rows === 0) empty.push(p.title);
    }
    assert.deepEqual(empty, [], 'panels without data');
  });

  const alerts = async () => (await api<{ alerts: { labels: Record<string, string>; annotations: Record<string, string>; state: string }[] }>('/api/v1/alerts')).data.alerts;

  test('no alert fires on the healthy pipeline', async () => {
    // The audit may legitimately find the test cluster's settings.
    const active = async () => (await alerts()).filter((a) => a.labels.alertname !== 'EosConfigAuditCritical').map((a) => `${a.labels.alertname} ${a.state}`);
    assert.deepEqual((await active()).filter((a) => a.endsWith(' firing')), [], 'alerts firing on a healthy pipeline');
    // A condition may hold for a moment (on a loaded machine a 1 s checkpoint that took over 3 s
    // makes EosCheckpointStalled pending); it must clear before its `for:` (1 m or more) runs out.
    let last: string[] = [];
    await until('no alert pending on a healthy pipeline', async () => (last = await active()).length === 0, 55_000, { intervalMs: 1000 }).catch((err: Error) => {
      throw new Error(`${err.message}: ${last.join(', ')}`);
    });
  });

  test('a producer SIGKILLed with a transaction open turns EosCoordinatorHangingTransaction pending, naming its transactional id', async () => {
    const topic = `prom-hang-${process.pid}`;
    await createTopic(h.cluster.brokers, topic, 1, 3);
    const id = `prom-dead-${process.pid}`;
    await killedWithOpenTransaction(h.cluster.brokers, id, topic, 0, 3);
    // The alert of the killed producer's transaction: the pipeline's own transactions may be named
    // too while one of its checkpoints takes longer than idleAfter on a loaded machine (a commit
    // held back that long is what idleAfter means), so the alert is picked by its id.
    const mine = (x: { labels: Record<string, string> }) => x.labels.alertname === 'EosCoordinatorHangingTransaction' && x.labels.transactional_id === id;
    let seen: string[] = [];
    await until('EosCoordinatorHangingTransaction pending for the killed producer', async () => {
      const all = await alerts();
      seen = all.filter((x) => x.labels.alertname === 'EosCoordinatorHangingTransaction').map((x) => `${x.labels.transactional_id} on ${x.labels.topic}-${x.labels.partition}`);
      return all.some(mine);
    }, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; hanging alerts seen: ${seen.join(', ') || 'none'}`);
    });
    const a = (await alerts()).find(mine)!;
    assert.equal(a.labels.transactional_id, id);
    assert.equal(a.labels.topic, topic);
    assert.equal(a.labels.partition, '0');
    assert.equal(a.labels.severity, 'critical');
    assert.match(a.annotations.summary ?? '', new RegExp(`Hanging transaction ${id} on ${topic}-0`));
    const r = await runEoswatch(['transactions', 'abort', '--bootstrap-server', h.cluster.bootstrapServers, '--transactional-id', id, '--force']);
    assert.equal(r.code, 0, r.stderr);
    await until('EosCoordinatorHangingTransaction of the killed producer gone after the abort', async () => !(await alerts()).some(mine), 60_000);
  });

  test('eoswatch killed turns EosExporterDown pending', async () => {
    await daemon!.kill();
    await until('EosExporterDown pending', async () => (await alerts()).some((a) => a.labels.alertname === 'EosExporterDown' && (a.state === 'pending' || a.state === 'firing')), 30_000, { intervalMs: 1000 });
    const down = (await alerts()).find((a) => a.labels.alertname === 'EosExporterDown')!;
    assert.equal(down.labels.job, 'eoswatch');
    assert.equal(down.labels.severity, 'critical');
  });
});
