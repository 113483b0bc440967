// Soak: one `eoswatch run` with the pipeline (keep-serving, default restart strategy), the canary
// and the LSO monitor, while a broker is stopped for --down seconds every --every minutes, for
// --minutes minutes. Samples /metrics every 5 s; at the end waits (up to 10 min) for the group to
// catch up with the source as it was when the faults were over, checks the sink read_committed
// against the source (no canary record twice, none written before then missing) and writes its
// section of bench/RESULTS.md. Every 30 s it also counts the members of the pipeline's membership
// group `<groupId>.members` (DescribeGroups): one daemon must be exactly one member, or partitions
// are held by a consumer whose batches nobody processes.
// On a 1-node cluster each bounce is a full outage (what a sidecar sees when its cluster restarts).
// Run: npm run bench:soak [-- --minutes 30 --every 5 --down 60 --nodes 1]
import { parseArgs } from 'node:util';
import { WorkerProcess } from '../harness/chaos/worker.js';
import { createTopic, kafkaFor, readAll } from '../test/harness/index.js';
import { waitCaughtUp } from '../test/harness/pipeline.js';
import { parsePrometheusText, sampleValue } from '../test/harness/promtext.js';
import { BENCH_DIR, fmt, makeOutDir, generatedBy, installEmergencyStop, intOption, log, mdTable, printUsageAndExit, runMain, withCluster, writeSection } from './common.js';
import { join } from 'node:path';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { Admin } from 'kafkajs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    every: { type: 'string', default: '5' },
    down: { type: 'string', default: '60' },
    nodes: { type: 'string', default: '1' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) printUsageAndExit(import.meta.url);
const minutes = intOption(values.minutes, '--minutes', 1);
const everyMin = intOption(values.every, '--every', 1);
const downS = intOption(values.down, '--down', 1);
const nodes = intOption(values.nodes, '--nodes', 1) as 1 | 3;
if (nodes !== 1 && nodes !== 3) throw new Error('--nodes: expected 1 or 3');

interface Sample {
  t: number;
  up: number;
  ready: boolean;
  sent: number;
  received: number;
  lost: number;
  duplicate: number;
  restarts: number;
  failedCheckpoints: number;
  completedCheckpoints: number;
  hanging: number;
  /** process_resident_memory_bytes of the daemon */
  rss: number;
  /** process_cpu_seconds_total of the daemon */
  cpu: number;
}

async function sample(w: WorkerProcess, t0: number): Promise<Sample | undefined> {
  try {
    const m = parsePrometheusText(await w.metricsText());
    const v = (name: string, labels: Record<string, string> = {}) => sampleValue(m, name, labels) ?? 0;
    const ready = (await fetch(`${await w.url}/readyz`)).status === 200;
    return {
      t: (Date.now() - t0) / 1000,
      up: v('eos_pipeline_up'),
      ready,
      sent: v('eos_canary_records_total', { result: 'sent' }),
      received: v('eos_canary_records_total', { result: 'received' }),
      lost: v('eos_canary_records_total', { result: 'lost' }),
      duplicate: v('eos_canary_records_total', { result: 'duplicate' }),
      restarts: v('eos_service_restarts_total', { service: 'pipeline' }),
      failedCheckpoints: v('eos_checkpoints_total', { outcome: 'failed' }) + v('eos_checkpoints_total', { outcome: 'timeout' }),
      completedCheckpoints: v('eos_checkpoints_total', { outcome: 'completed' }),
      hanging: v('eos_hanging_transactions'),
      rss: v('process_resident_memory_bytes'),
      cpu: v('process_cpu_seconds_total'),
    };
  } catch {
    return undefined;
  }
}

/** Members of a consumer group (DescribeGroups), or undefined when the cluster does not answer within 10 s. */
async function groupMembers(admin: Admin, group: string): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 10_000)));
  try {
    return await Promise.race([admin.describeGroups([group]).then((d) => d.groups[0]?.members.length ?? 0, () => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  installEmergencyStop();
  const startedAt = new Date();
  await withCluster({ nodes }, async (cluster) => {
    const id = `soak-${Date.now().toString(36)}`;
    const topics = { source: `${id}-in`, sink: `${id}-out` };
    for (const t of [topics.source, topics.sink, `${topics.sink}.dlq`]) await createTopic(cluster.brokers, t, 3, nodes);
    const config = {
      http: { host: '127.0.0.1', port: 0 },
      log: { level: 'info' },
      kafka: { brokers: cluster.brokers },
      audit: { enabled: false },
      pipeline: { enabled: true, sourceTopic: topics.source, sinkTopic: topics.sink, groupId: `${id}-group`, transactionalIdPrefix: id, startFrom: 'earliest', onFailure: 'keep-serving' },
      canary: { enabled: true, id, rate: 50, lostAfter: '2m' },
      lsoMonitor: { interval: '5s' },
    };
    const outDir = makeOutDir('soak-');
    const logFile = join(outDir, 'eoswatch.log');
    const w = new WorkerProcess(config, 'soak', { logFile });
    await w.url;
    const t0 = Date.now();
    const samples: Sample[] = [];
    // The membership group, counted every 30 s on a loop of its own (a DescribeGroups during an
    // outage waits for the cluster and must not hold up the /metrics samples).
    const membersGroup = `${id}-group.members`;
    const admin = kafkaFor(cluster.brokers).admin();
    await admin.connect();
    const members: { t: number; n: number }[] = [];
    let countingMembers = true;
    const memberLoop = (async () => {
      while (countingMembers) {
        const n = await groupMembers(admin, membersGroup);
        if (n !== undefined) members.push({ t: (Date.now() - t0) / 1000, n });
        for (let i = 0; i < 60 && countingMembers; i++) await new Promise((r) => setTimeout(r, 500));
      }
    })();
    interface Bounce {
      node: number;
      stopAt: number;
      startAt: number;
      upZeroAt?: number;
      upAgainAt?: number;
    }
    const bounces: Bounce[] = [];
    // The soak's schedule: a sample every 5 s for --minutes, a broker down for --down seconds every
    // --every minutes. Time windows to measure over, not waits for a condition (nothing to poll for).
    const end = t0 + minutes * 60_000;
    let nextBounce = t0 + everyMin * 60_000;
    let k = 0;
    while (Date.now() < end) {
      const s = await sample(w, t0);
      if (s) samples.push(s);
      const b = bounces.at(-1);
      if (b && s) {
        if (b.upZeroAt === undefined && s.up === 0 && s.t >= b.stopAt) b.upZeroAt = s.t;
        if (b.upZeroAt !== undefined && b.upAgainAt === undefined && s.up === 1 && s.t >= b.startAt) b.upAgainAt = s.t;
      }
      if (Date.now() >= nextBounce && Date.now() + downS * 1000 < end) {
        const node = nodes === 1 ? 1 : (k++ % 3) + 1;
        log(`stopping node ${node} for ${downS} s`);
        // Times count from when the broker is down (a controlled shutdown takes a while).
        await cluster.stop(node);
        const stopAt = (Date.now() - t0) / 1000;
        const bounce: Bounce = { node, stopAt, startAt: Infinity };
        bounces.push(bounce);
        const until = Date.now() + downS * 1000;
        while (Date.now() < until) {
          const x = await sample(w, t0);
          if (x) {
            samples.push(x);
            if (bounce.upZeroAt === undefined && x.up === 0) bounce.upZeroAt = x.t;
          }
          await new Promise((r) => setTimeout(r, 5000));
        }
        await cluster.start(node);
        bounce.startAt = (Date.now() - t0) / 1000;
        log(`node ${node} back`);
        // On a loaded machine a stop and a start can take minutes: the broker always gets at least
        // --every minus --down of uptime before the next stop, or the outages would run together.
        nextBounce = Math.max(nextBounce + everyMin * 60_000, Date.now() + Math.max(60_000, everyMin * 60_000 - downS * 1000));
        continue;
      }
      await new Promise((r) => setTimeout(r, 5000));
    }
    // Let the backlog through (bounded), then stop the daemon cleanly. The canary goes on writing,
    // so the target is the source's end when the faults are over: the group has caught up once its
    // committed offsets reach it.
    const faultsOverAt = (Date.now() - t0) / 1000;
    const ends = new Map((await admin.fetchTopicOffsets(topics.source)).map((o) => [o.partition, BigInt(o.high)]));
    const caughtUpAt = Date.now();
    const caughtUp = await waitCaughtUp(cluster.brokers, `${id}-group`, topics.source, 600_000, ends).then(
      () => `yes, in ${fmt((Date.now() - caughtUpAt) / 1000)} s`,
      (err: Error) => `no: ${err.message}`,
    );
    // The daemon must still answer at the end; if it does not, the last good sample stands and the
    // section says so.
    const final = await sample(w, t0);
    if (final) samples.push(final);
    const last = final ?? samples.at(-1)!;
    countingMembers = false;
    await memberLoop;
    // The members at the end, while the daemon still runs (retried: the cluster may be slow to answer).
    let membersAtEnd: number | undefined;
    for (let i = 0; i < 5 && membersAtEnd === undefined; i++) membersAtEnd = await groupMembers(admin, membersGroup);
    await admin.disconnect().catch(() => undefined);
    const exit = await w.stop(60_000);
    // The brokers' logs go beside the daemon's (the cluster's directory is removed at the end).
    for (const n of cluster.state.nodes) copyFileSync(n.logFile, join(outDir, `broker-${n.id}.log`));
    const columns = Object.keys(samples[0] ?? {}) as (keyof Sample)[];
    writeFileSync(join(outDir, 'samples.csv'), [columns.join(','), ...samples.map((x) => columns.map((c) => String(x[c])).join(','))].join('\n') + '\n');
    // Every canary record written to the source (read_committed) appears exactly once at the sink.
    // Records written after the faults were over may still have been on their way when the
    // daemon stopped: only those before count as missing.
    const ids = async (topic: string) =>
      (await readAll(cluster.brokers, topic, { timeoutMs: 300_000 }))
        .map((r) => ({ id: (JSON.parse(String(r.message.value)) as { id?: string }).id, before: BigInt(r.message.offset) < (ends.get(r.partition) ?? 0n) }))
        .filter((x): x is { id: string; before: boolean } => !!x.id);
    const src = await ids(topics.source);
    const sink = (await ids(topics.sink)).map((x) => x.id);
    const sinkSet = new Set(sink);
    const srcBefore = src.filter((x) => x.before);
    const missing = srcBefore.filter((x) => !sinkSet.has(x.id)).length;
    const after = src.filter((x) => !x.before);
    const afterAtSink = after.filter((x) => sinkSet.has(x.id)).length;
    const dup = sink.length - sinkSet.size;
    const totalS = (Date.now() - startedAt.getTime()) / 1000;
    const downSamples = samples.filter((s) => s.up === 0).length;
    // RSS after warm-up (the first bounce's minute before it) against the last minutes: growth across bounces would be a leak.
    const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;
    const rssIn = (from: number, to: number) => samples.filter((s) => s.t >= from && s.t < to && s.rss > 0).map((s) => s.rss);
    const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : 0);
    const warm = median(rssIn(everyMin * 60 - 60, everyMin * 60));
    const lastT = samples.at(-1)?.t ?? 0;
    const late = median(rssIn(lastT - 120, lastT + 1));
    const peak = Math.max(0, ...samples.map((s) => s.rss));
    // The median of each interval between bounces: a leak grows from one to the next, a plateau does not.
    const windows = Array.from({ length: Math.ceil(lastT / (everyMin * 60)) }, (_, i) => median(rssIn(i * everyMin * 60, (i + 1) * everyMin * 60)));
    // CPU of the daemon: over the whole run, and over the last 5 minutes of the faults.
    const first = samples[0];
    const cpuShare = (a: Sample | undefined, b: Sample | undefined) => (a && b && b.t > a.t ? `${fmt((100 * (b.cpu - a.cpu)) / (b.t - a.t), 1)} %` : 'n/a');
    const lastFive = samples.find((s) => s.t >= lastT - 300);
    const moreThanOne = members.filter((m) => m.n > 1);
    const logText = readFileSync(logFile, 'utf8');
    const rejoined = logText.split('\n').filter((l) => l.includes('a consumer of an earlier run rejoined the group')).length;
    const rows = bounces.map((b, i) => [
      i + 1,
      b.node,
      fmt(b.stopAt),
      b.upZeroAt === undefined ? 'never' : fmt(b.upZeroAt - b.stopAt),
      fmt(b.startAt),
      b.upAgainAt === undefined ? 'not seen' : fmt(b.upAgainAt - b.startAt),
    ]);
    const section = [
      '<!-- BEGIN SOAK BENCH (written by bench/soak.bench.ts) -->',
      '## Soak: broker bounces under the pipeline, canary and LSO monitor',
      '',
      generatedBy(`npm run bench:soak -- --minutes ${minutes} --every ${everyMin} --down ${downS} --nodes ${nodes}`, 'bench/soak.bench.ts', startedAt, totalS),
      '',
      `One \`eoswatch run\`: pipeline (EXACTLY_ONCE, checkpoint 1s, timeout 30s, tolerableFailedCheckpoints 0, onFailure keep-serving, default exponential-delay restart), canary at 50 records/s (lostAfter 2m), LSO monitor; ${nodes}-node cluster, 3 partitions; node stopped (SIGTERM) for ${downS} s every ${everyMin} min. /metrics sampled every 5 s (so times below are ±5 s); a checkpoint fails (and eos_pipeline_up drops) once it has waited checkpoint.timeout for the broker.`,
      '',
      mdTable(['bounce', 'node', 'stopped at (s)', 'eos_pipeline_up 0 after the broker was down (s)', 'started at (s)', 'up again after start (s)'], rows),
      '',
      mdTable(
        ['what', 'value'],
        [
          ['pipeline restarts (eos_service_restarts_total)', fmt(last.restarts)],
          ['checkpoints completed / failed or timed out', `${fmt(last.completedCheckpoints)} / ${fmt(last.failedCheckpoints)}`],
          ['samples with eos_pipeline_up 0', `${downSamples} of ${samples.length}`],
          ['canary sent / received / lost / duplicate (metrics)', `${fmt(last.sent)} / ${fmt(last.received)} / ${fmt(last.lost)} / ${fmt(last.duplicate)}`],
          [
            `canary records in the source (read_committed) until the faults were over (${fmt(faultsOverAt)} s) / missing at the sink / records twice at the sink`,
            `${fmt(srcBefore.length)} / ${fmt(missing)} / ${fmt(dup)}`,
          ],
          ['canary records written after that, while the daemon caught up / at the sink when it stopped', `${fmt(after.length)} / ${fmt(afterAtSink)}`],
          ['hanging transactions at the end', fmt(last.hanging)],
          ['daemon RSS: median of the minute before the first bounce / of the last 2 minutes / peak', `${mib(warm)} / ${mib(late)} / ${mib(peak)}`],
          [`daemon RSS: median of each ${everyMin}-minute interval (a bounce at the end of each)`, windows.map((w) => (w / 1048576).toFixed(0)).join(', ') + ' MiB'],
          ['daemon CPU (process_cpu_seconds_total, share of one core): whole run / last 5 minutes', `${cpuShare(first, samples.at(-1))} / ${cpuShare(lastFive, samples.at(-1))}`],
          [
            `members of ${membersGroup.replace(id, '<id>')}: at the end / most seen / counts with more than one (of ${members.length}, every 30 s)`,
            `${membersAtEnd ?? 'no answer'} / ${Math.max(0, ...members.map((m) => m.n))} / ${moreThanOne.length}${moreThanOne.length ? ` (at ${moreThanOne.map((m) => `${fmt(m.t)} s: ${m.n}`).join(', ')})` : ''}`,
          ],
          ['consumers of an earlier run disconnected when they rejoined (daemon log)', fmt(rejoined)],
          ['group caught up with the source before the check (bounded by 10 min)', caughtUp],
          ['daemon answered /metrics at the end', final ? 'yes' : 'no (figures from the last good sample)'],
          ['daemon exit code on SIGTERM', String(exit)],
        ],
      ),
      '<!-- END SOAK BENCH -->',
    ].join('\n');
    writeSection(join(BENCH_DIR, 'RESULTS.md'), '<!-- BEGIN SOAK BENCH', '<!-- END SOAK BENCH -->', section);
    log(section);
  });
}

runMain(main);
