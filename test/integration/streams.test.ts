// A real Kafka Streams app (streams/app, exactly_once_v2, value + 1) run by the instance harness
// (harness/localcluster/streams-app.ts) on a 1-node cluster, watched by a real eoswatch daemon
// (streams, lag through the Streams section, transactions) scraped over HTTP: two instances
// process seeded records, each exactly once by `eoswatch verify check`; an instance SIGKILLed and
// a new one started: the Streams service sees the rebalance (in progress, then counted and timed),
// eos_pipeline_up{engine="streams"} drops and returns, the group's lag grows and drains, and the
// transactions service counts the app's commits under its application.id with no series per
// transactional id. The npm run streams CLI: bad options exit 2, status finds the instances.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTopic, kafkaFor, runEoswatch, uniqueName, useCluster } from '../harness/index.js';
import { until } from '../harness/wait.js';
import { parsePrometheusText, type Parsed as ParsedMetrics } from '../harness/promtext.js';
import { StreamsRun } from '../../harness/localcluster/streams-app.js';
import { freePort } from '../../harness/localcluster/cluster.js';
import { createDaemon } from '../../src/create-daemon.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { produceVerifyRecords } from '../../src/verify/verify.js';
import type { Daemon } from '../../src/daemon.js';
import type { StreamsReport } from '../../src/streams/streams-service.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findStreamsScenarios } from '../../harness/chaos/streams-scenarios.js';
import { runStreamsRound } from '../../harness/chaos/streams-runner.js';
import { formatStreamsChaosTable } from '../../harness/chaos/report.js';
import { countVerdicts } from '../../harness/chaos/verdict.js';

const execFileP = promisify(execFile);
const PARTITIONS = 3;
const SESSION_TIMEOUT_MS = 10_000;

/** Streams rebalances wait out a session timeout, and the app starts slowly: the waits are long. */
const WAIT_MS = 120_000;

/** The samples of a family whose labels include `labels`. */
function samples(p: ParsedMetrics, name: string, labels: Record<string, string> = {}): { labels: Record<string, string>; value: number }[] {
  return p.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
const sum = (xs: { value: number }[]) => xs.reduce((a, s) => a + s.value, 0);

describe('a Kafka Streams app (exactly_once_v2) watched by eoswatch (1-node cluster)', () => {
  let run: StreamsRun | undefined;
  let daemon: Daemon | undefined;
  // Registered before the cluster's own after hook (hooks run in order): instances and daemon go first.
  after(async () => {
    await run?.stopAll({ graceMs: 0, remove: true });
    await daemon?.stop();
  });
  const h = useCluster({ nodes: 1 });
  const app = uniqueName('streams-app');
  const input = `${app}-in`;
  const output = `${app}-out`;
  let base = '';
  const labels = { pipeline: app, engine: 'streams', job_id: '' };

  before(async () => {
    for (const t of [input, output]) await createTopic(h.cluster.brokers, t, PARTITIONS, 1);
    // A short session: the dead member's session runs out in 10 s, not the default 45 s.
    run = await StreamsRun.create({
      bootstrap: h.cluster.bootstrapServers,
      applicationId: app,
      input,
      output,
      threads: 1,
      properties: { 'session.timeout.ms': String(SESSION_TIMEOUT_MS), 'heartbeat.interval.ms': '1000' },
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = validateConfig(
      {
        kafka: { brokers: h.cluster.brokers },
        http: { host: '127.0.0.1', port },
        pipeline: { enabled: false },
        streams: { enabled: true, interval: '1s', applications: [{ applicationId: app }] },
        transactions: { enabled: true, interval: '2s' },
      },
      '(streams test)',
    );
    daemon = createDaemon(config, createLogger('silent')).daemon;
    await daemon.start();
  });

  const scrape = async (): Promise<ParsedMetrics> => parsePrometheusText(await (await fetch(`${base}/metrics`)).text());
  const streamsReport = async (): Promise<StreamsReport | undefined> => {
    const res = await fetch(`${base}/streams`);
    return res.status === 200 ? ((await res.json()) as StreamsReport) : undefined;
  };
  const up = (p: ParsedMetrics) => samples(p, 'eos_pipeline_up', labels)[0]?.value;
  const lag = (p: ParsedMetrics) => samples(p, 'eos_consumer_lag_records', { ...labels, group: app, topic: input });
  const committedTotal = (p: ParsedMetrics) => sum(samples(p, 'eos_consumer_committed_offset', { ...labels, group: app, topic: input }));
  const verify = async (runId: string, records: number) => {
    const r = await runEoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', output, '--run', runId, '--records', String(records), '--partitions', String(PARTITIONS), '--format', 'json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { received: number; duplicates: number; lost: number; orderViolations: number; wrongValue: number; violations: string[] };
    assert.deepEqual([report.received, report.duplicates, report.lost, report.orderViolations, report.wrongValue], [records, 0, 0, 0, 0]);
    assert.deepEqual(report.violations, []);
  };

  test('two instances process the seeded records, each exactly once; the group is Stable with 2 members, up, its lag 0 under the app\'s labels', async () => {
    await run!.start();
    await run!.start();
    const kafka = kafkaFor(h.cluster.brokers);
    const manifest = await produceVerifyRecords(kafka, input, { records: 3000 });
    const caught = await until('the group committed every record, lag 0 on every partition', async () => {
      const p = await scrape();
      const l = lag(p);
      return committedTotal(p) === 3000 && l.length === PARTITIONS && l.every((s) => s.value === 0) ? p : undefined;
    }, WAIT_MS);
    assert.equal(up(caught), 1);
    assert.equal(samples(caught, 'eos_consumer_group_state', { group: app, state: 'Stable' })[0]?.value, 1);
    assert.equal(samples(caught, 'eos_consumer_group_members', { group: app })[0]?.value, 2);
    await verify(manifest.run, 3000);
    const report = await until('the /streams report', streamsReport, WAIT_MS);
    const a = report.applications.find((x) => x.applicationId === app)!;
    assert.equal(a.state, 'Stable');
    assert.equal(a.members.length, 2);
    // Streams' consumer client ids are <application.id>-<process UUID>-StreamThread-<n>-consumer.
    for (const m of a.members) assert.match(m.clientId, new RegExp(`^${app}-[0-9a-f-]{36}-StreamThread-1-consumer$`));
  });

  test('streams.discover: a daemon given no application finds the running app by its group\'s assignor and watches it, its lag included, under its application.id', async () => {
    const port = await freePort();
    const config = validateConfig(
      {
        kafka: { brokers: h.cluster.brokers },
        http: { host: '127.0.0.1', port },
        pipeline: { enabled: false },
        lsoMonitor: { enabled: false },
        audit: { enabled: false },
        streams: { enabled: true, interval: '1s', discover: true },
      },
      '(streams discovery test)',
    );
    const other = createDaemon(config, createLogger('silent')).daemon;
    await other.start();
    try {
      const seen = await until('the app discovered, up, with its lag', async () => {
        const p = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
        return samples(p, 'eos_pipeline_up', labels)[0]?.value === 1 && samples(p, 'eos_consumer_lag_records', { ...labels, group: app, topic: input }).length === PARTITIONS ? p : undefined;
      }, 60_000);
      const report = (await (await fetch(`http://127.0.0.1:${port}/streams`)).json()) as StreamsReport;
      assert.deepEqual(report.applications.map((a) => [a.applicationId, a.state, a.members.length]), [[app, 'Stable', 2]], 'only the Streams app of the cluster (the other groups are not Streams groups)');
      assert.equal(samples(seen, 'eos_consumer_group_members', { group: app })[0]?.value, 2);
      // Lag is read for the discovered application's group only: lag.enabled is false.
      assert.deepEqual([...new Set(samples(seen, 'eos_consumer_lag_records').map((x) => x.labels.group))], [app]);
    } finally {
      await other.stop();
    }
  });

  test('an instance SIGKILLed and a new one started: the rebalance is seen and timed, up drops and returns, the lag drains, the transactions service counts commits under the application', async () => {
    const before = await scrape();
    const rebalancesBefore = sum(samples(before, 'eos_streams_rebalances_total', { application: app }));
    const timedBefore = sum(samples(before, 'eos_streams_rebalance_duration_seconds_count', { application: app }));
    const kafka = kafkaFor(h.cluster.brokers);
    // A steady stream across the kill: the dead instance's partitions fall behind until the rebalance.
    let written = 0;
    const producing = produceVerifyRecords(kafka, input, { records: 3000, perSecond: 200, onProgress: (n) => (written = n) });
    await until('a second of the stream written before the kill', () => written >= 200, 30_000);
    const killedAt = Date.now();
    await run!.kill(1);
    await run!.start(undefined, { wait: false });

    let sawRebalancing = false;
    let sawDown = false;
    let maxLag = 0;
    const settled = await until(
      'a timed rebalance after the kill, the group Stable with 2 members and up again',
      async () => {
        const p = await scrape();
        if (sum(samples(p, 'eos_streams_rebalance_in_progress_seconds', { application: app })) > 0) sawRebalancing = true;
        if (up(p) === 0) sawDown = true;
        maxLag = Math.max(maxLag, sum(lag(p)));
        const timed = sum(samples(p, 'eos_streams_rebalance_duration_seconds_count', { application: app }));
        const members = samples(p, 'eos_consumer_group_members', { group: app })[0]?.value;
        return timed > timedBefore && up(p) === 1 && members === 2 ? p : undefined;
      },
      120_000,
    );
    const settledAt = Date.now();
    assert.ok(sawRebalancing, 'eos_streams_rebalance_in_progress_seconds was above 0 while the group rebalanced');
    assert.ok(sawDown, 'eos_pipeline_up was 0 while the group rebalanced');
    assert.ok(sum(samples(settled, 'eos_streams_rebalances_total', { application: app })) > rebalancesBefore);
    const report = (await streamsReport())!;
    const last = report.applications.find((x) => x.applicationId === app)!.lastRebalance!;
    assert.equal(last.kind, 'completed');
    if (last.kind === 'completed') {
      // The new member's join waits for the dead one until its session times out: the rebalance
      // lasts about the rest of that session, never longer than the whole wait we measured.
      assert.ok(last.durationMs > 0 && last.durationMs <= settledAt - killedAt, `rebalance ${last.durationMs} ms, kill to settled ${settledAt - killedAt} ms`);
      process.stderr.write(`measured: SIGKILL to the group Stable again ${((settledAt - killedAt) / 1000).toFixed(1)} s; rebalance seen for ${(last.durationMs / 1000).toFixed(1)} s (session.timeout.ms ${SESSION_TIMEOUT_MS})\n`);
    }

    const manifest = await producing;
    const drained = await until('the lag drained: every record committed, lag 0', async () => {
      const p = await scrape();
      maxLag = Math.max(maxLag, sum(lag(p)));
      return committedTotal(p) === 6000 && lag(p).every((s) => s.value === 0) ? p : undefined;
    }, WAIT_MS);
    assert.ok(maxLag > 0, 'the dead instance\'s partitions lagged before the rebalance');
    process.stderr.write(`measured: largest lag to the LSO seen ${maxLag} records\n`);
    await verify(manifest.run, 3000);

    // The transactions service: the app's ids (one per instance process and thread) are one
    // application. It counts outcomes from the transaction log only, and only those after its
    // first read of the log (a baseline) began: a trickle of records keeps the app committing
    // until a commit is counted.
    let lastScrape: ParsedMetrics | undefined;
    const txns = await until(
      'committed transactions counted under the application',
      async () => {
        const p = (lastScrape = await scrape());
        if ((samples(p, 'eos_coordinator_transactions_total', { application: app, outcome: 'committed' })[0]?.value ?? 0) > 0) return p;
        await produceVerifyRecords(kafka, input, { records: 6, run: 'trickle' });
        return undefined;
      },
      WAIT_MS,
      {
        intervalMs: 1000,
        context: () => {
          const seen = lastScrape as ParsedMetrics | undefined;
          return `the transactions series: ${JSON.stringify((seen?.samples ?? []).filter((x) => /^eos_transaction/.test(x.name) && !x.name.endsWith('_bucket')))}`;
        },
      },
    );
    assert.equal(samples(txns, 'eos_coordinator_source', { source: 'log' })[0]?.value, 1, 'outcomes come from the transaction log');
    const ids = samples(txns, 'eos_coordinator_transactional_ids', { application: app })[0]?.value ?? 0;
    assert.ok(ids >= 2, `at least the two live instances' ids under the application, found ${ids}`);
    for (const family of ['eos_coordinator_transactions_total', 'eos_coordinator_transactional_ids', 'eos_coordinator_open_transactions', 'eos_coordinator_transaction_duration_seconds_count']) {
      const perId = samples(txns, family).filter((s) => s.labels.application?.startsWith(`${app}-`));
      assert.deepEqual(perId, [], `${family} has no series per transactional id`);
    }
    assert.equal(up(drained), 1);
  });

  test('npm run streams: bad options exit 2 naming them; status finds the instances of a run directory', async () => {
    const cli = async (args: string[]) => {
      try {
        const { stdout, stderr } = await execFileP('node', ['--import', 'tsx', 'harness/localcluster/streams-cli.ts', ...args]);
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    const bad = await cli(['kill', '--dir', run!.dir]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /kill needs --instance N/);
    const missing = await cli(['start', '--dir', run!.dir, '--bootstrap', h.cluster.bootstrapServers]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing --application-id, --input, --output/);
    assert.equal((await cli(['start', '--frob'])).code, 2);
    const status = await cli(['status', '--dir', run!.dir]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^instance 1: stopped/m);
    assert.match(status.stdout, /^instance 2: running +pid \d+ +streams RUNNING/m);
    assert.match(status.stdout, /^instance 3: running +pid \d+ +streams RUNNING/m);
  });

  test('chaos --engine streams, instance-kill: instance 1 SIGKILLed three times mid-stream and restarted, every record once and in order, each killed transaction seen holding the output LSO until it was aborted, the rebalances counted', async (t) => {
    // The instances of the tests above are done: this round runs its own app on the same cluster.
    await run?.stopAll({ graceMs: 0 });
    const workDir = await mkdtemp(join(tmpdir(), 'eoswatch-streams-chaos-'));
    t.after(() => rm(workDir, { recursive: true, force: true }));
    const lines: string[] = [];
    const scenario = findStreamsScenarios('instance-kill')[0]!;
    const records = 2000;
    // The input written over 50 s instead of the scenario's 90: the three kills still land mid-stream (asserted below).
    const r = await runStreamsRound(h.cluster, scenario, 1, { records, rounds: 1, partitions: 2, instances: 2, workDir, daemonPort: 0, seconds: 50, log: (l) => lines.push(l) });
    const results = [r];
    const report = formatStreamsChaosTable({ startedAt: '', kafkaVersion: h.cluster.version, records, rounds: 1, partitions: 2, instances: 2, results, counts: countVerdicts(results), passed: r.passed });
    const context = `${report}\n${lines.join('\n')}\n${r.error ?? ''}`;
    assert.equal(r.verdict, 'PASS', context);
    assert.deepEqual(
      { received: r.received, duplicates: r.duplicates, lost: r.lost, unexpected: r.unexpected, wrongValue: r.wrongValue, orderViolations: r.orderViolations, missed: r.missed },
      { received: records, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0, missed: [] },
      context,
    );
    assert.deepEqual(r.faults.map((f) => f.replace(/ at \d+ %$/, '')), ['SIGKILL instance 1', 'SIGKILL instance 1', 'SIGKILL instance 1'], context);
    assert.ok(!r.faults[2]!.endsWith('at 100 %'), `the last kill came while records were still flowing\n${context}`);
    // missed = []: each kill's open transaction held the output LSO ≥ 2 s and was aborted, ≥ 3
    // rebalances were counted and the app showed down (harness/chaos/streams-scenarios.ts).
    assert.equal(r.observed.lingering.length, 3, context);
    assert.ok(r.observed.transactions.committed > 0, `the app's commits counted under its application\n${context}`);
    process.stderr.write(`${report}\n`);
  });
});
