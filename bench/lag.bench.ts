// Benchmark: the lag service reading 1,000 partitions × 20 consumer groups every 15 s, the target
// being every reading done well inside the interval, with a bounded number of requests.
// Run: npm run bench:lag [-- --partitions 1000 --groups 20 --readings 8 --interval 15000 --nodes 1]
// Writes its section of bench/RESULTS.md.
import { parseArgs } from 'node:util';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { BENCH_DIR, installEmergencyStop, intOption, log, withCluster, writeSection } from './common.js';
import { ensureTopics } from '../src/kafka/admin.js';
import { GroupOffsetWriter } from '../src/kafka/offsets.js';
import { LagService, type LagReading } from '../src/lag/lag-service.js';
import { createLogger } from '../src/log.js';
import { pollUntil, PollTimeoutError } from '../src/runtime/poll-until.js';

const { values } = parseArgs({
  options: {
    partitions: { type: 'string', default: '1000' },
    groups: { type: 'string', default: '20' },
    readings: { type: 'string', default: '8' },
    interval: { type: 'string', default: '15000' },
    nodes: { type: 'string', default: '1' },
  },
});
const partitions = intOption(values.partitions, '--partitions', 100);
const groupCount = intOption(values.groups, '--groups', 1);
const readings = intOption(values.readings, '--readings', 2);
const intervalMs = intOption(values.interval, '--interval', 1000);
const nodes = intOption(values.nodes, '--nodes', 1) === 3 ? 3 : 1;
const PER_TOPIC = 100;
const topics = Array.from({ length: Math.ceil(partitions / PER_TOPIC) }, (_, i) => `bench-lag-${String(i).padStart(3, '0')}`);

/** A kafkajs client that counts the requests it sends, by API name (kafkajs logs each at debug level). */
function countingKafka(brokers: string[], counts: Map<string, number>): Kafka {
  return new Kafka({
    clientId: 'bench-lag',
    brokers,
    logLevel: logLevel.DEBUG,
    logCreator: () => (entry) => {
      const m = /^Request (\w+)\(/.exec(entry.log.message);
      if (m) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
    },
  });
}

installEmergencyStop();
await withCluster({ nodes }, async (cluster) => {
  // Generous retries: on a fresh cluster the transaction and offsets topics are created on first use.
  const kafka = new Kafka({ clientId: 'bench-lag-setup', brokers: cluster.brokers, logLevel: logLevel.NOTHING, retry: { retries: 20, maxRetryTime: 5000 } });
  const admin = kafka.admin();
  await admin.connect();
  const t0 = Date.now();
  await ensureTopics(
    admin,
    topics.map((topic) => ({ topic, numPartitions: PER_TOPIC, replicationFactor: nodes })),
    300_000,
  );
  await admin.disconnect();
  log(`${topics.length} topics × ${PER_TOPIC} partitions created in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  // 10 committed records per partition, in transactions (markers included), and an open
  // transaction on every partition of the first topic (LSO < HW there).
  const producer = kafka.producer({ transactionalId: 'bench-lag-tx', idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (const topic of topics) {
    const txn = await producer.transaction();
    await txn.send({ topic, messages: Array.from({ length: PER_TOPIC * 10 }, (_, i) => ({ partition: i % PER_TOPIC, value: `r${i}` })) });
    await txn.commit();
  }
  const holder = kafka.producer({ transactionalId: 'bench-lag-open', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 600_000 });
  await holder.connect();
  const open = await holder.transaction();
  await open.send({ topic: topics[0]!, messages: Array.from({ length: PER_TOPIC }, (_, i) => ({ partition: i, value: 'open' })) });

  // 20 groups with committed offsets on every partition (OffsetCommit of an empty group).
  const writer = new GroupOffsetWriter(kafka);
  for (let g = 0; g < groupCount; g++) {
    for (const topic of topics) {
      await writer.commit(`bench-lag-g${String(g).padStart(2, '0')}`, topic, Array.from({ length: PER_TOPIC }, (_, p) => ({ partition: p, offset: BigInt(g % 10) })));
    }
  }
  await writer.close();
  log(`${groupCount} groups committed on ${topics.length * PER_TOPIC} partitions`);

  const counts = new Map<string, number>();
  const service = new LagService(countingKafka(cluster.brokers, counts), { enabled: true, groups: ['/^bench-lag-g/'], topics: [], interval: intervalMs }, {
    logger: createLogger('warn'),
    registry: new Registry(),
    fatal: () => undefined,
  });
  const seen: LagReading[] = [];
  const load: number[] = [];
  const cpu0 = process.cpuUsage();
  const w0 = Date.now();
  await service.start();
  let countsAfterFirst: Map<string, number> | undefined;
  // Each new reading taken as it comes; too few in time is reported once the service stopped (below).
  await pollUntil(
    `${readings} readings`,
    () => {
      const r = service.lastReading;
      if (r && r !== seen[seen.length - 1]) {
        seen.push(r);
        load.push(loadavg()[0]!);
        if (seen.length === 1) countsAfterFirst = new Map(counts);
        log(`reading ${seen.length}: ${r.groups} groups, ${r.partitions} group-partitions in ${r.durationMs.toFixed(0)} ms`);
      }
      return seen.length >= readings;
    },
    { timeoutMs: (readings + 4) * intervalMs, intervalMs: 200 },
  ).catch((err: unknown) => {
    if (!(err instanceof PollTimeoutError)) throw err;
  });
  const wallMs = Date.now() - w0;
  const cpu = process.cpuUsage(cpu0);
  await service.stop();
  await open.abort();
  await Promise.all([producer.disconnect(), holder.disconnect()]);
  if (seen.length < readings) throw new Error(`only ${seen.length} of ${readings} readings finished in time`);

  // Requests of the steady-state readings (after the first, which also fetches metadata and probes).
  const steady = seen.length - 1;
  const perReading = (api: string) => ((counts.get(api) ?? 0) - (countsAfterFirst?.get(api) ?? 0)) / steady;
  const ms = seen.map((r) => r.durationMs).sort((a, b) => a - b);
  const pct = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
  const section = [
    '<!-- BEGIN LAG BENCH (written by bench/lag.bench.ts) -->',
    '## Lag service (consumer lag to the LSO)',
    '',
    `Generated by \`npm run bench:lag -- --partitions ${partitions} --groups ${groupCount} --readings ${readings} --interval ${intervalMs} --nodes ${nodes}\` on ${new Date().toISOString()}: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, a ${nodes}-node local cluster (Kafka ${cluster.version}) on the same machine. The machine was shared with other work while this ran (1-minute load average during the readings: ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}).`,
    '',
    `Setup: ${topics.length} topics × ${PER_TOPIC} partitions = ${topics.length * PER_TOPIC} partitions, 10 committed records each (one transaction per topic) and an open transaction on the ${PER_TOPIC} partitions of ${topics[0]}; ${groupCount} consumer groups with committed offsets on every partition (${groupCount * topics.length * PER_TOPIC} group-partitions). The lag service polls every ${intervalMs / 1000} s.`,
    '',
    '| what | value |',
    '| --- | --- |',
    `| readings | ${seen.length}, each covering ${seen[seen.length - 1]!.groups} groups and ${seen[seen.length - 1]!.partitions} group-partitions |`,
    `| reading duration min / median / max | ${ms[0]!.toFixed(0)} / ${pct(0.5).toFixed(0)} / ${ms[ms.length - 1]!.toFixed(0)} ms (interval ${intervalMs} ms) |`,
    `| CPU of the benchmark process (lag service + kafkajs) | ${((cpu.user + cpu.system) / 1000 / wallMs * 100).toFixed(1)} % of one core over ${(wallMs / 1000).toFixed(0)} s |`,
    `| requests per steady reading: ListOffsets | ${perReading('ListOffsets').toFixed(1)} (${nodes} broker${nodes > 1 ? 's' : ''} × 2 isolation levels) |`,
    `| requests per steady reading, by API | ${[...counts.keys()].sort().map((a) => `${a} ${perReading(a).toFixed(1)}`).join(', ')} |`,
    `| all requests per steady reading | ${[...counts.keys()].reduce((a, k) => a + perReading(k), 0).toFixed(1)} |`,
    '',
    'ListOffsets is one request per broker and isolation level for all watched partitions (kafkajs groups the partitions by leader); OffsetFetch is one per group, and kafkajs looks up the group coordinator (FindCoordinator) for each OffsetFetch and DescribeGroups; Fetch only for partitions whose committed offset stands at most 100 offsets below the LSO and did not move, once per committed offset and LSO, at most 200 partitions per reading (here the 20 groups sit at 10 different offsets before the LSO of every partition, so the probes go on for 50 readings; an idle real group is probed once).',
    '<!-- END LAG BENCH -->',
  ].join('\n');
  writeSection(join(BENCH_DIR, 'RESULTS.md'), '<!-- BEGIN LAG BENCH', '<!-- END LAG BENCH -->', section);
  process.stdout.write(`${section}\n`);
});
