// The Flink service against a real Flink 1.20 session cluster (harness/localcluster/flink-cluster.ts)
// running the seed's job (flink/job) on a real 1-node Kafka: the metrics appear and move with the
// job, a TaskManager SIGKILL shows as job down then up again with one restart counted, and the
// sink holds every record exactly once (eoswatch's verifier, read_committed). The short Flink chaos
// run of CI is here too: the tm-kill scenario of `npm run chaos -- --engine flink`, with a live
// Prometheus evaluating the alerts and the dashboard's Flink panels.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAudit } from '../../src/audit/runner.js';
import { checkpointChecks } from '../../src/audit/checks/checkpoint.js';
import { flinkJobsSource, jobTarget } from '../../src/audit/sources/flink.js';
import { FlinkService } from '../../src/flink/flink-service.js';
import { TransactionsService } from '../../src/coordinator/transactions-service.js';
import { LsoMonitorService } from '../../src/kafka/lso-monitor.js';
import { LocalFlinkCluster } from '../../harness/localcluster/flink-cluster.js';
import { createLogger } from '../../src/log.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { checkSinkTopic, produceVerifyRecords } from '../../src/verify/verify.js';
import { findFlinkScenarios } from '../../harness/chaos/flink-scenarios.js';
import { LivePrometheus } from '../../harness/chaos/prometheus.js';
import { freePort } from '../../harness/localcluster/cluster.js';
import { createTopic, kafkaFor, uniqueName, useCluster } from '../harness/index.js';
import { exactFlinkRound } from '../harness/flink-round.js';
import { dashboardPanels, grafanaToPromql } from '../harness/promql.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { until } from '../harness/wait.js';

const silent = createLogger('silent');

/** Flink's REST server refreshes task metrics every 10 s and a job restarts slowly: its waits are long. */
const WAIT_MS = 120_000;

describe('Flink service on a real Flink cluster', { timeout: 1_500_000 }, () => {
  const kafka = useCluster({ nodes: 1 });
  let flink: LocalFlinkCluster | undefined;

  /** Two-partition source and sink topics and the seed's job on them, running; cancelled after the test. */
  const runningJob = async (t: TestContext, sourceTag: string, sinkTag: string, nameTag: string, opts: { args: Record<string, string | number>; parallelism?: number }) => {
    const f = flink!;
    const source = uniqueName(sourceTag);
    const sink = uniqueName(sinkTag);
    await createTopic(kafka.cluster.brokers, source, 2, 1);
    await createTopic(kafka.cluster.brokers, sink, 2, 1);
    const name = uniqueName(nameTag);
    const jobId = await f.submit({ bootstrap: kafka.cluster.bootstrapServers, sourceTopic: source, sinkTopic: sink, ...(opts.parallelism ? { parallelism: opts.parallelism } : {}), args: { name, ...opts.args } });
    t.after(() => f.cancel(jobId).catch(() => undefined));
    await f.waitJobRunning(jobId, 300_000);
    return { source, sink, name, jobId };
  };
  before(async () => {
    flink = await LocalFlinkCluster.start({ taskManagers: 1, slots: 2 });
  });
  after(async () => {
    await flink?.down();
  });

  test('metrics appear and move with the job; a TaskManager SIGKILL is down, then up, with one restart', async (t) => {
    const f = flink!;
    const brokers = kafka.cluster.brokers;
    const { source, sink, name, jobId } = await runningJob(t, 'flink-src', 'flink-sink', 'eos-job', { args: { 'checkpoint-interval-ms': 1000 } });

    const registry = createRegistry();
    const service = new FlinkService(
      { enabled: true, restUrls: [f.restUrl], jobs: { names: ['eos-job-.*'], ids: [] }, pollInterval: 500, requestTimeout: 3000, tls: { rejectUnauthorized: true }, sinks: [] },
      { logger: silent, registry, fatal: () => undefined },
    );
    await service.start();
    t.after(() => service.stop());
    const labels = { pipeline: name, engine: 'flink', job_id: jobId };
    const metric = async (n: string, extra: Record<string, string> = {}) => sampleValue(parsePrometheusText(await registry.metrics()), n, { ...labels, ...extra });

    // Up and checkpointing: completed checkpoints counted and each observed once.
    await until('job up', async () => ((await metric('eos_pipeline_up')) === 1 ? true : undefined), WAIT_MS);
    assert.equal(await metric('eos_checkpoint_interval_seconds'), 1);
    assert.equal(await metric('eos_checkpoint_tolerable_failures'), 0);
    const c1 = await until('3 completed checkpoints', async () => {
      const v = (await metric('eos_checkpoints_total', { outcome: 'completed' })) ?? 0;
      return v >= 3 ? v : undefined;
    }, WAIT_MS);
    const observed = (await metric('eos_checkpoint_duration_seconds_count', { outcome: 'completed' })) ?? 0;
    assert.ok(observed >= 1 && observed <= c1, `each completed checkpoint observed at most once (${observed} of ${c1})`);
    const lastTs = (await metric('eos_checkpoint_last_completed_timestamp_seconds'))!;
    assert.ok(Math.abs(lastTs - Date.now() / 1000) < 60, `last completed checkpoint is recent (${lastTs})`);

    // Records flow through the exactly-once sink.
    const k = kafkaFor(brokers);
    const manifest = await produceVerifyRecords(k, source, { records: 2000 });
    const check = () =>
      checkSinkTopic(k, sink, {
        run: manifest.run,
        records: 2000,
        partitions: 2,
        valueDelta: 1,
        thresholds: { maxDuplicateRate: 0, maxLossRate: 0, maxOutOfOrderRate: 0 },
      });
    const report = await until('every record in the sink', async () => {
      const r = await check();
      return r.violations.length === 0 ? r : undefined;
    }, WAIT_MS);
    assert.equal(report.duplicates, 0);
    assert.equal(report.lost, 0);
    assert.equal(report.wrongValue, 0, 'value + 1');
    // The sink's transactions: committed committables counted, commit time measured.
    await until('successful committables', async () => (((await metric('eos_flink_sink_committables_total', { outcome: 'successful' })) ?? 0) >= 1 ? true : undefined), WAIT_MS);
    // Flink's REST metrics are refreshed every metrics.fetcher.update-interval (10 s): the writer's commit time may come later.
    await until('commit time measured', async () => (((await metric('eos_flink_sink_commit_time_seconds_total')) ?? 0) > 0 ? true : undefined), WAIT_MS);
    assert.equal(await metric('eos_flink_sink_committables_total', { outcome: 'failed' }), 0);
    await until('the completed counter moving with the job', async () => (((await metric('eos_checkpoints_total', { outcome: 'completed' })) ?? 0) > c1 ? true : undefined), WAIT_MS);

    // Every Flink series renders as valid exposition text.
    const lint = spawnSync(process.env.PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: await registry.metrics(), encoding: 'utf8' });
    assert.equal(lint.error, undefined, 'cannot run promtool: install the Debian package prometheus');
    assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'promtool findings');

    // A TaskManager SIGKILL: RUNNING with tasks scheduled is down; a new TaskManager brings it back.
    const restartsBefore = (await metric('eos_pipeline_restarts_total')) ?? 0;
    await f.kill(f.taskManager(1));
    await until('job down after TaskManager loss', async () => ((await metric('eos_pipeline_up')) === 0 ? true : undefined), WAIT_MS);
    await f.startTaskManager(1);
    await until('job up again', async () => ((await metric('eos_pipeline_up')) === 1 ? true : undefined), 300_000);
    await until('one restart counted', async () => (((await metric('eos_pipeline_restarts_total')) ?? 0) === restartsBefore + 1 ? true : undefined), WAIT_MS);
    await until('restored from a checkpoint', async () => ((await metric('eos_checkpoint_restored_id', { savepoint: 'false' })) ?? 0) > 0 ? true : undefined, WAIT_MS);
    assert.ok(((await metric('eos_checkpoints_total', { outcome: 'failed' })) ?? 0) > 0, 'checkpoints triggered while the tasks were down are counted as failed');
    const after = await until('checkpoints completing after the restore', async () => {
      const v = (await metric('eos_checkpoints_total', { outcome: 'completed' })) ?? 0;
      return v > c1 + 2 ? v : undefined;
    }, WAIT_MS);
    assert.ok(after > c1);
  });

  test('records in and out counted for a job that processes records; the LSO series of its sink carry the job\'s pipeline, engine and job_id', async (t) => {
    const f = flink!;
    const brokers = kafka.cluster.brokers;
    const { source, sink, name, jobId } = await runningJob(t, 'flink-rec-src', 'flink-rec-sink', 'eos-rec', { args: { 'checkpoint-interval-ms': 1000 }, parallelism: 2 });

    const registry = createRegistry();
    const ctx = { logger: silent, registry, fatal: () => undefined };
    const service = new FlinkService(
      { enabled: true, restUrls: [f.restUrl], jobs: { names: [name], ids: [] }, pollInterval: 500, requestTimeout: 3000, tls: { rejectUnauthorized: true }, sinks: [{ job: name, topics: [sink] }] },
      ctx,
    );
    // Wired as src/create-daemon.ts wires them; the monitor starts first, before the job is seen.
    const lso = new LsoMonitorService(
      kafkaFor(brokers),
      { pipeline: 'default', topics: [sink], intervalMs: 500, hangingAfterMs: 60_000, onReading: service.lsoReading.bind(service), topicLabels: (x) => (x === sink ? service.topicLabels(x) : undefined) },
      ctx,
    );
    await lso.start();
    t.after(() => lso.stop());
    await service.start();
    t.after(() => service.stop());
    const labels = { pipeline: name, engine: 'flink', job_id: jobId };
    const scrape = async () => parsePrometheusText(await registry.metrics());

    const k = kafkaFor(brokers);
    const records = 3000;
    await produceVerifyRecords(k, source, { records, perSecond: 300 });
    // Flink's REST server refreshes task metrics every metrics.fetcher.update-interval (10 s).
    const counted = await until(`${records} records in and out`, async () => {
      const p = await scrape();
      const v = ['in', 'out'].map((direction) => sampleValue(p, 'eos_pipeline_records_total', { ...labels, direction }) ?? 0);
      return v.every((x) => x >= records) ? v : undefined;
    }, WAIT_MS);
    assert.deepEqual(counted, [records, records], 'each record read once by the source and written once by the sink writer');
    const p = await scrape();
    assert.equal(sampleValue(p, 'eos_flink_checkpoint_stats_staleness_seconds', labels), 0.5 + 3, 'poll interval + the REST cache (web.refresh-interval 3 s)');

    const sinkSeries = await until('the sink\'s LSO series under the job\'s labels only', async () => {
      const q = await scrape();
      const series = q.samples.filter((x) => x.name === 'eos_partition_lso_lag_records' && x.labels.topic === sink);
      return series.length === 2 && series.every((x) => x.labels.pipeline === name && x.labels.engine === 'flink' && x.labels.job_id === jobId) ? q : undefined;
    }, WAIT_MS);
    for (const family of ['eos_partition_lso_stuck_seconds', 'eos_partition_open_transaction_age_seconds', 'eos_hanging_transactions']) {
      const series = sinkSeries.samples.filter((x) => x.name === family && x.labels.topic === sink);
      assert.ok(series.length > 0, family);
      assert.deepEqual([...new Set(series.map((x) => `${x.labels.pipeline}/${x.labels.engine}/${x.labels.job_id}`))], [`${name}/flink/${jobId}`], family);
    }
    const hangingAfter = sinkSeries.samples.filter((x) => x.name === 'eos_lso_monitor_hanging_after_seconds');
    assert.deepEqual(hangingAfter.map((x) => x.labels), [{ ...labels }], 'one hangingAfter series, the job\'s (the placeholder before the first poll is gone)');
    const lint = spawnSync(process.env.PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: await registry.metrics(), encoding: 'utf8' });
    assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'promtool findings');
  });

  test('a Flink job\'s per-checkpoint commit latency: the KafkaSink\'s transactions from __transaction_state, one value per completed checkpoint, engine="flink"', async (t) => {
    const f = flink!;
    const brokers = kafka.cluster.brokers;
    const prefix = uniqueName('cl-sink');
    const intervalMs = 1000;
    const { source, name, jobId } = await runningJob(t, 'flink-cl-src', 'flink-cl-sink', 'eos-cl', { args: { 'checkpoint-interval-ms': intervalMs, 'transactional-id-prefix': prefix }, parallelism: 2 });

    const registry = createRegistry();
    const ctx = { logger: silent, registry, fatal: () => undefined };
    // The service's debug line per observation: which checkpoint, how many transactions, from where.
    const observed: { checkpoint: number; transactions: number; seconds: number; from: string }[] = [];
    const debug = createLogger('debug', {
      write: (line: string) => {
        const o = JSON.parse(line) as { msg?: string; checkpoint: number; transactions: number; seconds: number; from: string };
        if (o.msg === 'KafkaSink commit latency of a checkpoint') observed.push({ checkpoint: o.checkpoint, transactions: o.transactions, seconds: o.seconds, from: o.from });
      },
    });
    const service = new FlinkService(
      {
        enabled: true,
        restUrls: [f.restUrl],
        jobs: { names: [name], ids: [] },
        pollInterval: 500,
        requestTimeout: 3000,
        tls: { rejectUnauthorized: true },
        sinks: [],
        transactionalIdPrefixes: [{ job: 'nothing-.*', prefix: 'not-this-one' }, { job: name, prefix }],
      },
      { ...ctx, logger: debug },
    );
    // Wired as src/create-daemon.ts wires them, in the same registry.
    const txns = new TransactionsService(kafkaFor(brokers), { intervalMs: 500, idleAfterMs: 60_000, patterns: [], maxApplications: 100, topN: 10 }, ctx);
    assert.ok(service.tracksCommits);
    txns.onEvents((events, baseline) => service.transactionEvents(events, baseline));
    await service.start();
    t.after(() => service.stop());
    await txns.start();
    t.after(() => txns.stop());
    const labels = { pipeline: name, engine: 'flink', job_id: jobId };
    const reading = async () => {
      const p = parsePrometheusText(await registry.metrics());
      const bucket = (le: string) => sampleValue(p, 'eos_kafka_transaction_commit_latency_seconds_bucket', { ...labels, le }) ?? 0;
      return {
        count: sampleValue(p, 'eos_kafka_transaction_commit_latency_seconds_count', labels) ?? 0,
        sum: sampleValue(p, 'eos_kafka_transaction_commit_latency_seconds_sum', labels) ?? 0,
        underMs: bucket('0.001'),
        underInterval: bucket(String(intervalMs / 1000)),
        completed: sampleValue(p, 'eos_checkpoints_total', { ...labels, outcome: 'completed' }) ?? 0,
        series: p.samples.filter((x) => x.name === 'eos_kafka_transaction_commit_latency_seconds_count').map((x) => x.labels),
      };
    };
    assert.equal((await reading()).count, 0, 'no value before the sink committed anything');

    // A steady stream, so each checkpoint has a transaction in both sink subtasks.
    const k = kafkaFor(brokers);
    const writing = produceVerifyRecords(k, source, { records: 9000, perSecond: 300 });
    t.after(() => writing.catch(() => undefined));
    const first = await until('3 per-checkpoint commit latencies', async () => {
      const r = await reading();
      return r.count >= 3 ? r : undefined;
    }, WAIT_MS);
    // 8 more checkpoints at a 1 s interval within 12 s (the steady stream gives each its transactions).
    await until('8 more completed checkpoints within 12 s', async () => (await reading()).completed - first.completed >= 8, 12_000);
    // Stopped, so that the reading and the debug lines hold the same observations.
    await txns.stop();
    await service.stop();
    const second = await reading();
    await writing;
    console.log(`commit latency: first ${JSON.stringify(first)}; second ${JSON.stringify(second)}; mean ${((1000 * second.sum) / second.count).toFixed(1)} ms`);
    assert.deepEqual(second.series, [labels], 'one series, the job\'s, engine="flink"');
    const grown = second.count - first.count;
    const completed = second.completed - first.completed;
    assert.ok(completed >= 8, `checkpoints completed at a 1 s interval: ${completed}`);
    assert.ok(grown >= completed - 2 && grown <= completed + 2, `one value per completed checkpoint: ${grown} values for ${completed} checkpoints`);
    assert.ok(second.count <= second.completed, `never more values than completed checkpoints: ${second.count} for ${second.completed}`);
    assert.equal(second.underMs, 0, 'every value positive (above 1 ms: an EndTxn and its markers)');
    assert.equal(second.underInterval, second.count, 'every value below the checkpoint interval');
    // Each value: one checkpoint, both sink subtasks' transactions, spanned from the completion (one host, one clock).
    const ids = observed.map((o) => o.checkpoint);
    assert.equal(observed.length, second.count, 'one debug line per value');
    assert.deepEqual([...ids].sort((a, b) => a - b), ids, 'in checkpoint order');
    assert.equal(new Set(ids).size, ids.length, 'each checkpoint once');
    assert.ok(observed.every((o) => o.from === 'checkpoint' && o.transactions >= 1 && o.transactions <= 2), JSON.stringify(observed));
    // Both subtasks write in every checkpoint of the steady stream (the first may precede a partition's first record).
    assert.ok(observed.slice(1).every((o) => o.transactions === 2), JSON.stringify(observed));
    assert.equal(observed.reduce((a, o) => a + o.seconds, 0).toFixed(6), second.sum.toFixed(6));
  });

  test('the live audit flags a job submitted with unsafe checkpoint settings and passes a safe one', async (t) => {
    const f = flink!;
    const brokers = kafka.cluster.brokers;
    const topics = [uniqueName('audit-src'), uniqueName('audit-sink')];
    for (const topic of topics) await createTopic(brokers, topic, 1, 1);
    const submit = async (name: string, args: Record<string, string | number | boolean>) => {
      const id = await f.submit({ bootstrap: kafka.cluster.bootstrapServers, sourceTopic: topics[0]!, sinkTopic: topics[1]!, args: { name, ...args } });
      t.after(() => f.cancel(id).catch(() => undefined));
      return id;
    };
    const safeName = uniqueName('audit-safe');
    const unsafeName = uniqueName('audit-unsafe');
    const safe = await submit(safeName, { 'tolerable-failed': 0, 'min-pause-ms': 500, 'checkpoint-timeout-ms': 60000, retention: 'RETAIN_ON_CANCELLATION' });
    const unsafe = await submit(unsafeName, {
      'checkpointing-mode': 'AT_LEAST_ONCE',
      'tolerable-failed': 5,
      'checkpoint-timeout-ms': 2000,
      'min-pause-ms': 0,
      'max-concurrent': 3,
      unaligned: true,
      retention: 'DELETE_ON_CANCELLATION',
    });
    const source = flinkJobsSource({ enabled: true, restUrls: [f.restUrl], jobs: { names: ['audit-(safe|unsafe)-.*'], ids: [] }, pollInterval: 5000, requestTimeout: 5000, tls: { rejectUnauthorized: true }, sinks: [] });
    const report = await runAudit([source], checkpointChecks);
    assert.deepEqual(report.sources.map((s) => [s.ok, s.error]), [[true, undefined]]);
    const verdicts = (target: string) => Object.fromEntries(report.findings.filter((x) => x.target === target).map((x) => [x.check, x.passed]));
    const s1 = verdicts(jobTarget({ name: safeName, jid: safe }));
    for (const id of ['checkpoint.mode', 'checkpoint.tolerable-failures', 'checkpoint.timeout', 'checkpoint.min-pause', 'checkpoint.retain-on-cancellation', 'checkpoint.max-concurrent', 'checkpoint.unaligned-exactly-once']) {
      assert.equal(s1[id], true, `safe job: ${id}`);
    }
    const u = verdicts(jobTarget({ name: unsafeName, jid: unsafe }));
    for (const id of ['checkpoint.mode', 'checkpoint.tolerable-failures', 'checkpoint.timeout', 'checkpoint.min-pause', 'checkpoint.retain-on-cancellation', 'checkpoint.max-concurrent']) {
      assert.equal(u[id], false, `unsafe job: ${id}`);
    }
    // Flink itself turns unaligned checkpoints off in AT_LEAST_ONCE mode: the live config says so.
    const unaligned = report.findings.find((x) => x.target === jobTarget({ name: unsafeName, jid: unsafe }) && x.check === 'checkpoint.unaligned-exactly-once');
    assert.equal(unaligned?.observed, 'unaligned checkpoints false, mode AT_LEAST_ONCE');
  });

  test('chaos tm-kill: three TaskManager SIGKILLs under the job, every record once and in order, each killed transaction seen holding the LSO until Flink aborts it, the Flink panels with data', async (t) => {
    const workDir = mkdtempSync(join(tmpdir(), 'eoswatch-flink-chaos-'));
    t.after(() => rmSync(workDir, { recursive: true, force: true }));
    const daemonPort = await freePort();
    const prometheus = await LivePrometheus.start({ dir: join(workDir, 'prometheus'), target: `127.0.0.1:${daemonPort}` });
    t.after(() => prometheus.stop());
    const tm = findFlinkScenarios('tm-kill')[0]!;
    const t0 = Date.now();
    const { r, context } = await exactFlinkRound(kafka.cluster, flink!, tm, { records: 2000, partitions: 2, parallelism: 2, seconds: 90, workDir, daemonPort, prometheus });
    assert.deepEqual(r.faults.map((f) => f.replace(/ at \d+ %$/, '')), ['SIGKILL TaskManager', 'SIGKILL TaskManager', 'SIGKILL TaskManager'], context);
    assert.ok(!r.faults[2]!.endsWith('at 100 %'), `the last kill came while records were still flowing\n${context}`);
    // missed = []: each kill's open transaction held the sink's LSO ≥ 3 s until the restored job
    // aborted it, the job showed down, 3 failovers were counted (harness/chaos/flink-scenarios.ts).
    assert.equal(r.observed.lingering.length, 3, context);
    assert.ok(r.observed.visibility.count > 0, `the visibility latency observed checkpoints\n${context}`);
    assert.ok(r.observed.alertsFired.includes('EosFlinkJobRestarting'), context);

    // The dashboard's Flink row, evaluated by Prometheus while eoswatch still watched the job.
    const at = (t0 + r.durationSeconds * 1000 - 2000) / 1000;
    const flinkPanels = dashboardPanels().filter((p) => (p.targets ?? []).some((x) => /eos_flink_sink_|eos_pipeline_restarts_total/.test(x.expr ?? '')));
    assert.equal(flinkPanels.length, 4);
    const empty: string[] = [];
    for (const p of flinkPanels) {
      let rows = 0;
      for (const x of p.targets ?? []) rows += (await prometheus.query(grafanaToPromql(x.expr!), at)).length;
      if (rows === 0) empty.push(p.title);
    }
    assert.deepEqual(empty, [], 'Flink panels without data');
  });

  // Last in the file: it kills the JobManager, which ends every job of the cluster.
  test('JobManager SIGKILL: REST down and job down; resubmitted from its newest retained checkpoint, the new job is watched and the vanished one dropped', async (t) => {
    const f = flink!;
    const brokers = kafka.cluster.brokers;
    const [source, sink] = [uniqueName('jm-src'), uniqueName('jm-sink')];
    for (const topic of [source, sink]) await createTopic(brokers, topic, 1, 1);
    const name = uniqueName('jm-job');
    const submit = (fromPath?: string) => f.submit({ bootstrap: kafka.cluster.bootstrapServers, sourceTopic: source, sinkTopic: sink, args: { name }, fromPath });
    const oldId = await submit();
    await f.waitJobRunning(oldId, 300_000);
    const registry = createRegistry();
    const service = new FlinkService(
      { enabled: true, restUrls: [f.restUrl], jobs: { names: ['jm-job-.*'], ids: [] }, pollInterval: 500, requestTimeout: 3000, tls: { rejectUnauthorized: true }, sinks: [] },
      { logger: silent, registry, fatal: () => undefined },
    );
    await service.start();
    t.after(() => service.stop());
    const value = async (n: string, labels: Record<string, string> = {}) => sampleValue(parsePrometheusText(await registry.metrics()), n, labels);
    const oldLabels = { pipeline: name, engine: 'flink', job_id: oldId };
    await until('2 completed checkpoints', async () => (((await value('eos_checkpoints_total', { ...oldLabels, outcome: 'completed' })) ?? 0) >= 2 ? true : undefined), WAIT_MS);

    await f.kill(f.state.jobmanager);
    await until('REST down', async () => ((await value('eos_flink_rest_up')) === 0 ? true : undefined), WAIT_MS);
    assert.equal(await value('eos_pipeline_up', oldLabels), 0, 'a job nobody can see is not up');

    await f.startJobManager();
    const checkpoint = await f.latestRetainedCheckpoint(oldId);
    assert.ok(checkpoint, 'a retained checkpoint of the lost job');
    const newId = await submit(checkpoint);
    t.after(() => f.cancel(newId).catch(() => undefined));
    await f.waitJobRunning(newId, 300_000);
    const newLabels = { pipeline: name, engine: 'flink', job_id: newId };
    await until('the resubmitted job up', async () => ((await value('eos_pipeline_up', newLabels)) === 1 ? true : undefined), WAIT_MS);
    await until('restored from the retained checkpoint', async () => {
      const id = await value('eos_checkpoint_restored_id', newLabels);
      return id !== undefined && id > 0 ? id : undefined;
    }, 60_000).catch(async (err: Error) => {
      const lines = (await registry.metrics()).split('\n').filter((l) => l.includes(newId));
      throw new Error(`${err.message}\n${lines.join('\n')}`);
    });
    assert.equal(await value('eos_flink_rest_up'), 1);
    assert.equal(await value('eos_pipeline_up', oldLabels), undefined, 'the vanished job is no longer exported');
    assert.equal(await value('eos_checkpoints_total', { ...oldLabels, outcome: 'completed' }), undefined);
  });
});
