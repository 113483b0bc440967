// `eoswatch transactions` against a real 1-node cluster and Kafka's own TransactionsCommand:
// a transactional producer (kafkajs, in a child process, transaction.timeout.ms 15 min) sends
// records in an open transaction and is SIGKILLed. find-hanging names it (id, partition, start
// offset, age within seconds of the truth) while TransactionsCommand find-hanging reports
// nothing; abort --transactional-id refuses without --force, then ends it (LSO at the high
// watermark, the coordinator no longer Ongoing per TransactionsCommand describe); list agrees
// with TransactionsCommand list; abort by partition refuses a transaction the coordinator knows,
// and with --force moves the LSO while the coordinator still says Ongoing (why the id is the way).
// EOSWATCH_KAFKA_VERSION runs one Kafka line; both by default.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Kafka } from 'kafkajs';
import { LocalCluster, kafkaFor, runEoswatch, uniqueName } from '../harness/index.js';
import { killedWithOpenTransaction } from '../harness/txn.js';
import { until } from '../harness/wait.js';
import { ensureTopics } from '../../src/kafka/admin.js';
import { EndOffsetReader } from '../../src/kafka/offsets.js';

const execFileP = promisify(execFile);

async function kafkaTool(cluster: LocalCluster, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await execFileP('java', ['-Xmx256m', '-cp', `${cluster.state.libs}/*`, 'org.apache.kafka.tools.TransactionsCommand', '--bootstrap-server', cluster.bootstrapServers, ...args], {
      timeout: 120_000,
      maxBuffer: 64 << 20,
    });
    return { stdout, stderr, code: 0 };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    if (typeof err.code !== 'number') throw e;
    return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: err.code };
  }
}

/** ToolsUtils.prettyPrintTable's output as rows of header → value; [] when there is no table. */
function parseTable(out: string, first: RegExp): Record<string, string>[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const start = lines.findIndex((l) => first.test(l));
  if (start < 0) return [];
  const headers = lines[start]!.trim().split(/\s+/);
  return lines.slice(start + 1).map((l) => {
    const cells = l.trim().split(/\s+/);
    return Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? '']));
  });
}

interface HangingJson {
  takenAtMs: number;
  hanging: { transactionalId: string | null; topic: string; partition: number; startOffset: number; heldBack: number; ageMs: number; abortDue: string; kind: string; producerEpoch: number; partitions: string[] }[];
  errors: unknown[];
}

const VERSIONS = process.env.EOSWATCH_KAFKA_VERSION ? [process.env.EOSWATCH_KAFKA_VERSION] : ['4.4.0', '3.9.1'];

for (const version of VERSIONS) {
  describe(`eoswatch transactions, Kafka ${version}`, () => {
    let cluster: LocalCluster;
    let kafka: Kafka;
    let ends: EndOffsetReader;
    const topic = uniqueName('txcli');
    const run = uniqueName('txcli');
    const dead = `${run}-dead`;
    const other = `${run}-other`;
    const started = new Map<string, number>();
    let b: string[];

    const killedProducer = async (id: string, partition: number, count: number): Promise<void> => {
      started.set(id, await killedWithOpenTransaction(cluster.brokers, id, topic, partition, count));
    };

    const partitionEnds = async (partition: number) => (await ends.read(topic)).find((p) => p.partition === partition)!;

    before(async () => {
      cluster = await LocalCluster.start({ nodes: 1, version });
      b = ['--bootstrap-server', cluster.bootstrapServers];
      kafka = kafkaFor(cluster.brokers);
      const admin = kafka.admin();
      await admin.connect();
      await ensureTopics(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
      await admin.disconnect();
      // A committed transaction first (offsets 0, 1 and its marker 2), so the open one starts at 3.
      const p = kafka.producer({ transactionalId: `${run}-committed`, idempotent: true, maxInFlightRequests: 1 });
      await p.connect();
      const txn = await p.transaction();
      await txn.send({ topic, messages: [{ partition: 1, value: 'a' }, { partition: 1, value: 'b' }] });
      await txn.commit();
      await p.disconnect();
      await killedProducer(dead, 1, 3);
      await killedProducer(other, 2, 2);
      ends = new EndOffsetReader(kafka);
    });

    after(async () => {
      await ends?.close();
      await cluster?.down();
    });

    test('find-hanging names the killed producer\'s transaction; TransactionsCommand find-hanging reports nothing', async () => {
      // Both killed producers, each once it has been silent for 5 s (the second was killed later).
      const res = await until('find-hanging to name both killed producers', async () => {
        const r = await runEoswatch(['transactions', 'find-hanging', ...b, '--topic', topic, '--idle', '5s', '--format', 'json']);
        if (r.code !== 3) return undefined;
        const ids = (JSON.parse(r.stdout) as HangingJson).hanging.map((x) => x.transactionalId);
        return ids.includes(dead) && ids.includes(other) ? r : undefined;
      });
      const report = JSON.parse(res.stdout) as HangingJson;
      assert.deepEqual(report.errors, []);
      const h = report.hanging.find((x) => x.transactionalId === dead);
      assert.ok(h, res.stdout);
      assert.equal(h.topic, topic);
      assert.equal(h.partition, 1);
      assert.equal(h.startOffset, 3);
      assert.equal(h.heldBack, 3);
      assert.equal(h.kind, 'idle');
      assert.deepEqual(h.partitions, [`${topic}-1`]);
      const truth = report.takenAtMs - started.get(dead)!;
      assert.ok(Math.abs(h.ageMs - truth) < 3000, `age ${h.ageMs} ms, truth ${truth} ms`);
      assert.match(h.abortDue, /^in 1[45]m /);
      assert.ok(report.hanging.some((x) => x.transactionalId === other && x.partition === 2 && x.startOffset === 0), 'the other one too');
      // The table names it as well.
      const table = await runEoswatch(['transactions', 'find-hanging', ...b, '--topic', topic, '--idle', '5s']);
      assert.equal(table.code, 3);
      assert.match(table.stdout, new RegExp(`^${dead}\\s+${dead}\\s+\\d+\\s+\\d+\\s+${topic}-1\\s+3\\s+\\S+( \\S+)?\\s+3\\s+in 1[45]m \\d+s\\s+idle\\s+${topic}-1$`, 'm'));

      const tool = await kafkaTool(cluster, ['find-hanging', '--topic', topic]);
      assert.equal(tool.code, 0, tool.stderr);
      assert.deepEqual(parseTable(tool.stdout, /^Topic\s/), [], tool.stdout);

      // The transaction is unknown to nobody: an idle limit above its idleness finds nothing.
      const quiet = await runEoswatch(['transactions', 'find-hanging', ...b, '--topic', topic, '--idle', '1h']);
      assert.equal(quiet.code, 0, quiet.stdout + quiet.stderr);
      assert.match(quiet.stdout, /^no hanging transaction \(3 partitions of 1 topics read; 2 held back/);
    });

    test('list agrees with TransactionsCommand list; describe shows the open transaction and its start offset', async () => {
      const r = await runEoswatch(['transactions', 'list', ...b, '--format', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const mine = (JSON.parse(r.stdout) as { transactions: { transactionalId: string; coordinatorId: number; producerId: number; state: string; ageMs: number | null; transactionTimeoutMs: number }[] }).transactions;
      const tool = await kafkaTool(cluster, ['list']);
      assert.equal(tool.code, 0, tool.stderr);
      const key = (x: Record<string, string>) => `${x.TransactionalId} ${x.Coordinator} ${x.ProducerId} ${x.TransactionState}`;
      assert.deepEqual(
        mine.map((t) => key({ TransactionalId: t.transactionalId, Coordinator: String(t.coordinatorId), ProducerId: String(t.producerId), TransactionState: t.state })).sort(),
        parseTable(tool.stdout, /^TransactionalId\s/).map(key).sort(),
      );
      const d = mine.find((t) => t.transactionalId === dead)!;
      assert.equal(d.state, 'Ongoing');
      assert.equal(d.transactionTimeoutMs, 900_000);
      assert.ok(d.ageMs !== null && Math.abs(d.ageMs - (Date.now() - started.get(dead)!)) < 10_000, `age ${d.ageMs}`);
      assert.equal(mine.find((t) => t.transactionalId === `${run}-committed`)!.ageMs, null);
      const ongoing = await runEoswatch(['transactions', 'list', ...b, '--state', 'Ongoing']);
      assert.equal(ongoing.code, 0, ongoing.stderr);
      assert.match(ongoing.stdout, new RegExp(`^${dead}\\s+1\\s+\\d+\\s+Ongoing\\s+${dead}\\s+\\S+( \\S+)?\\s+15m 0s$`, 'm'));
      assert.doesNotMatch(ongoing.stdout, /CompleteCommit/);

      const desc = await runEoswatch(['transactions', 'describe', ...b, '--transactional-id', dead, '--format', 'json']);
      assert.equal(desc.code, 0, desc.stderr);
      const v = JSON.parse(desc.stdout) as { state: string; coordinatorId: number; transactionTimeoutMs: number; startTimestampMs: number; partitions: { topic: string; partition: number; startOffset: number; holdsLso: boolean; lso: number; high: number }[] };
      assert.equal(v.state, 'Ongoing');
      assert.equal(v.coordinatorId, 1);
      assert.ok(Math.abs(v.startTimestampMs - started.get(dead)!) < 3000);
      assert.deepEqual(v.partitions, [{ topic, partition: 1, startOffset: 3, holdsLso: true, lso: 3, high: 6 }]);

      const prod = await runEoswatch(['transactions', 'producers', ...b, '--topic', topic, '--partition', '1']);
      assert.equal(prod.code, 0, prod.stderr);
      assert.match(prod.stdout, new RegExp(`^${topic}-1\\s+\\d+\\s+0\\s+-1\\s+2\\s+\\d+\\s+3\\s+${dead}\\s+yes$`, 'm'));
    });

    test('abort --transactional-id: refused within its timeout, then with --force the LSO reaches the high watermark and the coordinator is no longer Ongoing', async () => {
      const refused = await runEoswatch(['transactions', 'abort', ...b, '--transactional-id', dead]);
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(refused.stderr, /refused: .*within its transaction timeout \(15m 0s\).*aborts it itself in 1[45]m \d+s; --force/);
      assert.equal((await partitionEnds(1)).lso, 3n, 'nothing was done');

      const r = await runEoswatch(['transactions', 'abort', ...b, '--transactional-id', dead, '--force']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /InitProducerId for .* at coordinator 1/);
      assert.match(r.stdout, new RegExp(`coordinator: ${dead} is (Empty|CompleteAbort) \\(was Ongoing\\)`));
      assert.match(r.stdout, new RegExp(`${topic}-1: last stable offset 3 -> 7 \\(high watermark 7\\)`));
      const e = await partitionEnds(1);
      assert.equal(e.lso, e.high);
      assert.equal(e.high, 7n, 'two records, their commit marker, three records, the abort marker');
      const tool = await kafkaTool(cluster, ['describe', '--transactional-id', dead]);
      assert.equal(tool.code, 0, tool.stderr);
      const [row] = parseTable(tool.stdout, /^CoordinatorId\s/);
      assert.notEqual(row!.TransactionState, 'Ongoing');
      assert.match(row!.TransactionState!, /^(Empty|CompleteAbort)$/);
      // A second abort finds nothing to do.
      const again = await runEoswatch(['transactions', 'abort', ...b, '--transactional-id', dead]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /has no open transaction \(state (Empty|CompleteAbort)\): nothing to abort/);
    });

    test('abort by partition: refused for a transaction the coordinator knows; forced, WriteTxnMarkers moves the LSO while the coordinator still says Ongoing', async () => {
      const args = ['transactions', 'abort', ...b, '--topic', topic, '--partition', '2', '--start-offset', '0'];
      const refused = await runEoswatch(args);
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(refused.stderr, new RegExp(`refused: the coordinator knows this transaction \\(transactional id ${other}, Ongoing\\).*--transactional-id ${other}`));
      const wrong = await runEoswatch(['transactions', 'abort', ...b, '--topic', topic, '--partition', '2', '--start-offset', '1']);
      assert.equal(wrong.code, 1);
      assert.match(wrong.stderr, /no open transaction starts at offset 1 on .*-2 \(open there: producer \d+ from 0\)/);

      const r = await runEoswatch([...args, '--force']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /WriteTxnMarkers \(abort, coordinator epoch 0\) written at leader 1/);
      assert.match(r.stdout, new RegExp(`${topic}-2: last stable offset 0 -> 3 \\(high watermark 3\\)`));
      const e = await partitionEnds(2);
      assert.equal(e.lso, 3n);
      assert.equal(e.high, 3n);
      const tool = await kafkaTool(cluster, ['describe', '--transactional-id', other]);
      assert.equal(tool.code, 0, tool.stderr);
      assert.equal(parseTable(tool.stdout, /^CoordinatorId\s/)[0]!.TransactionState, 'Ongoing');
    });
  });
}
