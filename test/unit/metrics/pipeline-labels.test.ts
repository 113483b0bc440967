// Every pipeline-scoped series carries pipeline, engine and job_id, so every dashboard panel and
// alert joins them with eos_pipeline_up and the checkpoint series. The registry is filled by the
// services' own metric code: the Flink service polling a JobManager that answers with REST answers
// recorded from the seed job at parallelism 2 (test/fixtures/flink, 200 records/s), the LSO monitor
// and the lag service applying readings, the canary and the own pipeline's transaction gauges.
// (subtask-metric-list-early.json, GET …/subtasks/metrics 15 s after the job started, lists no
// committer metrics yet: the KafkaSink's own series do not appear here.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Kafka, logLevel } from 'kafkajs';
import { FlinkService } from '../../../src/flink/flink-service.js';
import type { MetricValue } from '../../../src/flink/poller.js';
import { LsoMonitorService } from '../../../src/kafka/lso-monitor.js';
import { LagService } from '../../../src/lag/lag-service.js';
import { CanaryService } from '../../../src/canary/canary-service.js';
import { pipelineTransactionAgeMetrics } from '../../../src/metrics/lag.js';
import { createLogger } from '../../../src/log.js';
import { createRegistry } from '../../../src/metrics/registry.js';
import { parsePrometheusText, sampleValue, type Sample } from '../../harness/promtext.js';

const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../fixtures/flink/${name}`, import.meta.url), 'utf8')) as T;
const silent = createLogger('silent');

const job = fixture<{ jid: string; name: string; vertices: { id: string }[] }>('job-parallel.json');
const JID = job.jid;
const VID = job.vertices[0]!.id;
const recorded = fixture<MetricValue[]>('vertex-metric-values.json');

/** The recorded JobManager: the seed job's answers; `round` 1 and later: every record counter 200 higher. */
let round = 0;
function answer(path: string, query: URLSearchParams): unknown {
  const overview = fixture<{ jobs: Record<string, unknown>[] }>('overview.json');
  const routes: Record<string, () => unknown> = {
    '/jobs/overview': () => ({ jobs: [{ ...overview.jobs[0], jid: JID, name: job.name }] }),
    '/config': () => fixture('web-config.json'),
    '/jobmanager/config': () => fixture('jobmanager-config.json'),
    [`/jobs/${JID}`]: () => job,
    [`/jobs/${JID}/exceptions`]: () => fixture('exceptions-none.json'),
    [`/jobs/${JID}/checkpoints/config`]: () => fixture('checkpoints-config.json'),
    [`/jobs/${JID}/checkpoints`]: () => fixture('checkpoints.json'),
    [`/jobs/${JID}/vertices/${VID}/subtasks/metrics`]: () => (query.has('get') ? [] : fixture('subtask-metric-list-early.json')),
    [`/jobs/${JID}/vertices/${VID}/metrics`]: () => {
      if (!query.has('get')) return recorded.map((v) => ({ id: v.id }));
      const want = new Set(query.get('get')!.split(','));
      return recorded.filter((v) => want.has(v.id)).map((v) => (/numRecords(In|Out|Send)$/.test(v.id) ? { ...v, value: String(Number(v.value) + 200 * round) } : v));
    },
  };
  return routes[path]?.();
}

let server: Server;
let url = '';
before(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const body = answer(u.pathname, u.searchParams);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { errors: ['Not found'] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => new Promise((r) => server.close(r)));

/** Families whose every series belongs to one pipeline. */
const PIPELINE_SCOPED = [
  'eos_pipeline_up',
  'eos_pipeline_records_total',
  'eos_checkpoints_total',
  'eos_checkpoint_interval_seconds',
  'eos_checkpoint_last_completed_timestamp_seconds',
  'eos_flink_checkpoint_stats_staleness_seconds',
  'eos_pipeline_restarts_total',
  'eos_partition_lso_lag_records',
  'eos_partition_lso_stuck_seconds',
  'eos_partition_open_transaction_age_seconds',
  'eos_lso_monitor_hanging_after_seconds',
  'eos_hanging_transactions',
  'eos_consumer_committed_offset',
  'eos_consumer_lag_records',
  'eos_consumer_lag_seconds',
  'eos_consumer_hw_lag_records',
  'eos_consumer_group_stuck_seconds',
  'eos_canary_records_total',
  'eos_pipeline_transaction_timeout_seconds',
  'eos_pipeline_transaction_open_seconds',
];

const ends = (lso: number[]) => lso.map((l, partition) => ({ partition, high: BigInt(l + 5), lso: BigInt(l) }));

test('every series of a pipeline-scoped family carries pipeline, engine and job_id; a Flink sink or source topic the job\'s', async (t) => {
  const registry = createRegistry();
  const ctx = (name: string) => ({ logger: silent.child({ service: name }), registry, fatal: () => undefined });
  const flink = new FlinkService(
    { enabled: true, restUrls: [url], jobs: { names: [], ids: [] }, pollInterval: 5000, requestTimeout: 2000, tls: { rejectUnauthorized: true }, sinks: [{ job: 'cap-.*', topics: ['cap.sink'] }] },
    ctx('flink'),
  );
  // As the Flink service's definition wires them (src/flink/flink-service.ts): it claims its sink topics from the monitor.
  const sinks = new Set(['cap.sink']);
  const lso = new LsoMonitorService(
    new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }),
    { pipeline: 'orders', topics: ['orders', 'orders.enriched', 'cap.sink'], intervalMs: 1000, hangingAfterMs: 60_000 },
    ctx('lso-monitor'),
  );
  lso.claim(sinks, { topicLabels: (t) => flink.topicLabels(t), onReading: (t, e, now) => flink.lsoReading(t, e, now) });
  // Claimed before any reading: the sink topic's pipeline-level series are the Flink entry's at once.
  assert.equal(sampleValue(parsePrometheusText(await registry.metrics()), 'eos_lso_monitor_hanging_after_seconds', { pipeline: 'cap-.*', engine: 'flink', job_id: '' }), 60);
  const lag = new LagService(
    new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }),
    { enabled: true, groups: ['all'], topics: [], interval: 1000 },
    ctx('lag'),
    { pipeline: 'orders', groupId: 'orders-eos', topicLabels: (t) => flink.topicLabels(t) },
  );
  new CanaryService(new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }), { id: 'c', pipeline: 'orders', sourceTopic: 'orders', sinkTopic: 'orders.enriched', rate: 1, lostAfterMs: 60_000 }, ctx('canary'));
  pipelineTransactionAgeMetrics(registry, 'orders', 60_000, () => new Map([[0, Date.now() - 1000]]));

  const flinkLabels = { pipeline: job.name, engine: 'flink', job_id: JID };
  const parsed = async () => parsePrometheusText(await registry.metrics());

  // Before the Flink service has seen the job, its sink topic carries the flink.sinks entry's job.
  lso.apply('cap.sink', ends([10, 20]), 1_000);
  let p = await parsed();
  assert.equal(sampleValue(p, 'eos_partition_lso_lag_records', { pipeline: 'cap-.*', engine: 'flink', job_id: '', topic: 'cap.sink', partition: '1' }), 5);

  await flink.start();
  t.after(() => flink.stop());
  lso.apply('orders', ends([1, 2, 3]), 2_000);
  lso.apply('orders.enriched', ends([1]), 2_000);
  lso.apply('cap.sink', ends([30, 40]), 2_000);
  const lags = (group: string, topic: string) => [0, 1].map((partition) => ({ group, topic, partition, committed: 5n, lsoLag: 3, hwLag: 4, lagSeconds: 1, stuckSeconds: 0 }));
  const groups = ['orders-eos', 'cap-source', 'downstream', 'other'];
  lag.publish(
    [...lags('orders-eos', 'orders'), ...lags('cap-source', 'cap.src'), ...lags('downstream', 'cap.sink'), ...lags('other', 'misc')],
    groups.map((g) => ({ groupId: g, state: 'Stable', members: 0 })),
    new Map(groups.map((g) => [g, true])),
  );
  p = await parsed();

  // Records: the recorded per-subtask counters (1514 + 1513), then 200 more per subtask.
  assert.equal(sampleValue(p, 'eos_pipeline_records_total', { ...flinkLabels, direction: 'in' }), 3027);
  assert.equal(sampleValue(p, 'eos_pipeline_records_total', { ...flinkLabels, direction: 'out' }), 3027);
  round = 1;
  await flink.pollOnce();
  p = await parsed();
  assert.equal(sampleValue(p, 'eos_pipeline_records_total', { ...flinkLabels, direction: 'in' }), 3427);
  assert.equal(sampleValue(p, 'eos_pipeline_records_total', { ...flinkLabels, direction: 'out' }), 3427);
  assert.equal(sampleValue(p, 'eos_flink_checkpoint_stats_staleness_seconds', flinkLabels), 8, '5 s poll + the recorded 3 s refresh interval');

  // The sink topic's series moved to the job (its job_id), none left under the placeholder.
  const of = (name: string, labels: Record<string, string> = {}) => p.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  for (const name of ['eos_partition_lso_lag_records', 'eos_partition_lso_stuck_seconds', 'eos_partition_open_transaction_age_seconds', 'eos_hanging_transactions']) {
    const sink = of(name, { topic: 'cap.sink' });
    assert.ok(sink.length > 0, name);
    assert.ok(sink.every((s) => s.labels.pipeline === job.name && s.labels.engine === 'flink' && s.labels.job_id === JID), `${name}: ${JSON.stringify(sink.map((s) => s.labels))}`);
    for (const t of ['orders', 'orders.enriched']) assert.ok(of(name, { topic: t }).every((s) => s.labels.pipeline === 'orders' && s.labels.engine === 'eoswatch' && s.labels.job_id === ''), `${name} ${t}`);
  }
  assert.equal(sampleValue(p, 'eos_partition_lso_lag_records', { ...flinkLabels, topic: 'cap.sink', partition: '1' }), 5);
  assert.deepEqual(of('eos_lso_monitor_hanging_after_seconds').map((s) => s.labels.job_id ?? '').sort(), ['', JID], 'one per pipeline whose topics are watched; the placeholder gone');

  // Lag: the own pipeline's group its own, a group on the job's source or sink topic the job's, others the own pipeline's.
  const lagOf = (group: string) => [...new Set(of('eos_consumer_lag_records', { group }).map((s) => `${s.labels.pipeline}/${s.labels.engine}/${s.labels.job_id}`))];
  assert.deepEqual(lagOf('orders-eos'), ['orders/eoswatch/']);
  assert.deepEqual(lagOf('cap-source'), [`${job.name}/flink/${JID}`], 'the job reads cap.src (its KafkaSource metrics say cap_src)');
  assert.deepEqual(lagOf('downstream'), [`${job.name}/flink/${JID}`]);
  assert.deepEqual(lagOf('other'), ['orders/eoswatch/']);

  // Structure: every metric that has a pipeline label has engine and job_id.
  for (const m of registry.getMetricsAsArray() as unknown as { name: string; labelNames: string[] }[]) {
    if (m.labelNames.includes('pipeline')) assert.ok(m.labelNames.includes('engine') && m.labelNames.includes('job_id'), `${m.name} has pipeline but not engine and job_id`);
  }
  // Every series of every pipeline-scoped family.
  const bad = (s: Sample) => !s.labels.pipeline || !['eoswatch', 'flink'].includes(s.labels.engine ?? '') || s.labels.job_id === undefined || (s.labels.engine === 'flink') !== (s.labels.job_id !== '');
  for (const family of PIPELINE_SCOPED) {
    const series = p.samples.filter((s) => s.name === family || /^_(bucket|sum|count)$/.test(s.name.slice(family.length)) && s.name.startsWith(family));
    assert.ok(series.length > 0, `${family} has series`);
    assert.deepEqual(series.filter(bad).map((s) => `${s.name}${JSON.stringify(s.labels)}`), [], family);
  }
});
