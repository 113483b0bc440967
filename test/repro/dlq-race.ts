// Reproduction of CI's "200 lost" in the DLQ integration test (test/integration/pipeline.test.ts):
// one 3-node LocalCluster, the DLQ test's scenario in a loop while two busy loops load the CPU,
// and on any lost record the evidence at once and again 5 s later (LSO/HW per sink partition, a
// read_uncommitted read of the lost partition, a fresh read_committed re-read, the pipeline's log
// lines for it, describe-producers).
//
//   node --import tsx --import ./src/kafka/preload.ts test/repro/dlq-race.ts [iterations] [nodes] [busyLoops]
//
// It is a node:test file (the harness registers its cleanup with after()), run directly.
import { test } from 'node:test';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { homedir } from 'node:os';
import { LocalCluster, kafkaFor, readAll } from '../harness/index.js';
import { checkSink, produceSeed, type SentRecord } from '../harness/seed.js';
import { PipelineProcess, pipelineConfig, pipelineTopics, waitCaughtUp, type PipelineSetup } from '../harness/pipeline.js';
import { EndOffsetReader, type PartitionEnds } from '../../src/kafka/offsets.js';

const ITERATIONS = Number(process.argv[2] ?? 30);
const NODES = (Number(process.argv[3] ?? 3) === 1 ? 1 : 3) as 1 | 3;
const BUSY = Number(process.argv[4] ?? 2);
const P = 6;

const fmtEnds = (ends: PartitionEnds[]) => ends.map((e) => `p${e.partition} lso=${e.lso} hw=${e.high}${e.lso < e.high ? ' OPEN' : ''}`).join(' | ');

function describeProducers(cluster: LocalCluster, topic: string, partition: number): string {
  const libs = join(homedir(), '.cache/eoswatch/kafka', cluster.version, 'libs');
  try {
    return execFileSync('java', ['-cp', `${libs}/*`, 'org.apache.kafka.tools.TransactionsCommand', '--bootstrap-server', cluster.bootstrapServers, 'describe-producers', '--topic', topic, '--partition', String(partition)], { encoding: 'utf8', timeout: 60_000 });
  } catch (err) {
    return `describe-producers failed: ${(err as Error).message}`;
  }
}

async function evidence(cluster: LocalCluster, s: PipelineSetup, sent: SentRecord[], lostPartitions: number[], p: PipelineProcess, when: string): Promise<void> {
  const reader = new EndOffsetReader(kafkaFor(s.brokers));
  try {
    console.log(`[evidence ${when}] sink ends: ${fmtEnds(await reader.read(s.sink))}`);
    console.log(`[evidence ${when}] dlq ends: ${fmtEnds(await reader.read(`${s.sink}.dlq`))}`);
  } finally {
    await reader.close();
  }
  const raw = await readAll(s.brokers, s.sink, { readUncommitted: true });
  for (const lp of lostPartitions) {
    const mine = raw.filter((r) => r.partition === lp);
    const pids = new Map<string, number>();
    for (const r of mine) {
      const ctx = (r.message as unknown as { batchContext?: { producerId: string; producerEpoch: number; inTransaction: boolean } }).batchContext;
      const k = `${ctx?.producerId}/${ctx?.producerEpoch}/${ctx?.inTransaction ? 'txn' : 'plain'}`;
      pids.set(k, (pids.get(k) ?? 0) + 1);
    }
    console.log(`[evidence ${when}] read_uncommitted sink p${lp}: ${mine.length} records, offsets ${mine[0]?.message.offset ?? '-'}..${mine.at(-1)?.message.offset ?? '-'}, producer/epoch: ${JSON.stringify([...pids])}`);
    console.log(`[evidence ${when}] describe-producers p${lp}:\n${describeProducers(cluster, s.sink, lp)}`);
    const lines = p.output.split('\n').filter((l) => l.includes(`"partition":${lp}`) || l.includes(`-in-${lp}"`) || /abort|fenc|rebalanc|error/i.test(l));
    console.log(`[evidence ${when}] pipeline lines for p${lp} (${lines.length}):\n${lines.slice(-30).join('\n')}`);
  }
  const again = await checkSink(s.brokers, s.sink, sent, { checkOrder: false });
  console.log(`[evidence ${when}] fresh read_committed re-read: total ${again.total}, lost ${again.lost}, duplicates ${again.duplicates}`);
}

test(`DLQ scenario x${ITERATIONS} on a ${NODES}-node cluster under ${BUSY} busy loops`, { timeout: 4 * 3600_000 }, async () => {
  const cluster = await LocalCluster.start({ nodes: NODES });
  const busy: ChildProcess[] = [];
  const stats = { lossy: 0, openAtCheck: 0, adminShort: 0, iterations: 0 };
  try {
    for (let i = 0; i < BUSY; i++) busy.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
    const brokers = cluster.brokers;
    for (let it = 1; it <= ITERATIONS; it++) {
      const t0 = Date.now();
      const s = await pipelineTopics(brokers, 'dlq', P, NODES);
      const good = await produceSeed(s.brokers, s.source, P, 600);
      const producer = kafkaFor(s.brokers).producer();
      await producer.connect();
      const bad = ['not json at all', JSON.stringify({ ts: 1, value: 3 }), JSON.stringify({ id: 'x', ts: 1, value: 'three' })];
      await producer.send({ topic: s.source, messages: bad.map((value, i) => ({ value, partition: i % P })) });
      await producer.disconnect();
      const good2 = await produceSeed(s.brokers, s.source, P, 600, { startValue: 600 });
      const sent = [...good, ...good2];
      const p = new PipelineProcess(pipelineConfig(s));
      try {
        await waitCaughtUp(s.brokers, s.groupId, s.source);
        // The ends at the moment the check starts, taken alongside it (not before, not to delay it).
        const reader = new EndOffsetReader(kafkaFor(s.brokers));
        // Also what kafkajs' admin.fetchTopicOffsets answers at that moment: the ends the readers took before the fix.
        const admin = kafkaFor(s.brokers).admin();
        await admin.connect();
        const [ends, adminEnds, report] = await Promise.all([
          reader.read(s.sink).finally(() => reader.close()),
          admin.fetchTopicOffsets(s.sink).finally(() => admin.disconnect()),
          checkSink(s.brokers, s.sink, sent, { checkOrder: false }),
        ]);
        const open = ends.filter((e) => e.lso < e.high);
        if (open.length) stats.openAtCheck++;
        const short = adminEnds.filter((o) => BigInt(o.high) < (ends.find((e) => e.partition === o.partition)?.high ?? 0n));
        if (short.length) stats.adminShort++;
        stats.iterations++;
        console.log(
          `[${it}] ${((Date.now() - t0) / 1000).toFixed(1)} s total ${report.total} lost ${report.lost} dup ${report.duplicates}; at check start: ${fmtEnds(ends)}; ` +
            `admin.fetchTopicOffsets high: ${adminEnds.map((o) => `p${o.partition}=${o.high}`).join(' ')}${short.length ? ' (SHORT of the HW: the old reader would stop there)' : ''}; ${report.stable ?? 'no stable line'}`,
        );
        if (report.lost > 0) {
          stats.lossy++;
          const lostPartitions = [...new Set((report.examples ?? []).map((e) => Number(/input partition (\d+)/.exec(e)?.[1])).filter((n) => !Number.isNaN(n)))];
          console.log(`[${it}] LOST ${report.lost}, partitions ${lostPartitions.join(', ')}; examples:\n${(report.examples ?? []).slice(0, 3).join('\n')}`);
          await evidence(cluster, s, sent, lostPartitions, p, 'now');
          await new Promise((r) => setTimeout(r, 5000));
          await evidence(cluster, s, sent, lostPartitions, p, '+5 s');
        }
      } finally {
        await p.kill();
      }
    }
  } finally {
    for (const b of busy) if (b.pid && b.exitCode === null) process.kill(b.pid, 'SIGKILL');
    await cluster.down();
    console.log(`SUMMARY ${JSON.stringify(stats)}`);
  }
});
