// The transaction coordinator's APIs (src/kafka/txn-admin.ts) and the __transaction_state decoder
// (src/kafka/txn-log.ts, txn-log-reader.ts) against Kafka's own tools on the same 1-node cluster,
// on both supported Kafka lines: TransactionsCommand list / describe / describe-producers (their
// tables parsed, every column compared) and ConsoleConsumer with TransactionLogMessageFormatter
// (its JSON, every field compared). The transactions: two left open (one over two partitions),
// one committed, one aborted, all from kafkajs transactional producers.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka, Producer } from 'kafkajs';
import { LocalCluster, kafkaFor, uniqueName } from '../harness/index.js';
import { until } from '../harness/wait.js';
import { ensureTopics } from '../../src/kafka/admin.js';
import { TxnAdmin } from '../../src/kafka/txn-admin.js';
import { readTransactionLog } from '../../src/kafka/txn-log-reader.js';
import type { TxnLogValue } from '../../src/kafka/txn-log.js';

const execFileP = promisify(execFile);

/** Runs a Kafka tool class from the cluster's own jars; stdout, stderr and the exit code. */
async function kafkaTool(cluster: LocalCluster, cls: string, args: string[], extraClassPath?: string): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const cp = `${cluster.state.libs}/*${extraClassPath ? `:${extraClassPath}` : ''}`;
    const { stdout, stderr } = await execFileP('java', ['-Xmx256m', '-cp', cp, cls, ...args], { timeout: 120_000, maxBuffer: 64 << 20 });
    return { stdout, stderr, code: 0 };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    if (typeof err.code !== 'number') throw e;
    return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: err.code };
  }
}

/** ToolsUtils.prettyPrintTable's output as rows of header → value (values here never contain spaces). */
function parseTable(out: string): Record<string, string>[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const start = lines.findIndex((l) => /^(TransactionalId|CoordinatorId|ProducerId)\s/.test(l));
  assert.ok(start >= 0, `no table in the tool's output:\n${out}`);
  const headers = lines[start]!.trim().split(/\s+/);
  return lines.slice(start + 1).map((l) => {
    const cells = l.trim().split(/\s+/);
    return Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? '']));
  });
}

const sortRows = (rows: Record<string, string>[]): Record<string, string>[] => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
const none = (v: number): string => (v === -1 ? 'None' : String(v));

/** The formatter prints one JSON object per record with no separator: split them. */
function jsonObjects(out: string): string[] {
  const objects: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && depth > 0 && --depth === 0) objects.push(out.slice(start, i + 1));
  }
  return objects;
}

/** The formatter's JSON of a value, with absent tagged fields at their defaults. */
function formatterValue(data: Record<string, unknown>): Record<string, unknown> {
  return {
    producerId: data.producerId,
    previousProducerId: data.previousProducerId ?? -1,
    nextProducerId: data.nextProducerId ?? -1,
    nextProducerEpoch: data.nextProducerEpoch ?? -1,
    producerEpoch: data.producerEpoch,
    transactionTimeoutMs: data.transactionTimeoutMs,
    transactionStatus: data.transactionStatus,
    transactionPartitions: data.transactionPartitions,
    transactionLastUpdateTimestampMs: data.transactionLastUpdateTimestampMs,
    transactionStartTimestampMs: data.transactionStartTimestampMs,
    clientTransactionVersion: data.clientTransactionVersion ?? 0,
  };
}

/** Ours in the formatter's shape; Kafka 4.x prints TransactionStatus by name, 3.9 by its byte. */
function ourValue(v: TxnLogValue, statusByName: boolean): Record<string, unknown> {
  return {
    producerId: v.producerId,
    previousProducerId: v.previousProducerId,
    nextProducerId: v.nextProducerId,
    nextProducerEpoch: v.nextProducerEpoch,
    producerEpoch: v.producerEpoch,
    transactionTimeoutMs: v.transactionTimeoutMs,
    transactionStatus: statusByName ? v.state : v.stateId,
    transactionPartitions: v.partitions,
    transactionLastUpdateTimestampMs: v.lastUpdateTimestampMs,
    transactionStartTimestampMs: v.startTimestampMs,
    clientTransactionVersion: v.clientTransactionVersion,
  };
}

// Both lines by default; EOSWATCH_KAFKA_VERSION (the harness' own default-version variable) runs one.
const VERSIONS = process.env.EOSWATCH_KAFKA_VERSION ? [process.env.EOSWATCH_KAFKA_VERSION] : ['4.4.0', '3.9.1'];

for (const version of VERSIONS) {
  describe(`transaction coordinator and log, Kafka ${version}`, () => {
    let cluster: LocalCluster;
    let kafka: Kafka;
    let txnAdmin: TxnAdmin;
    const producers: Producer[] = [];
    const topic = uniqueName('txn-out');
    const run = uniqueName('txp');
    const ids = { open1: `${run}-open-1`, open2: `${run}-open-2`, committed: `${run}-committed`, aborted: `${run}-aborted` };
    // Kafka 4.x: a Java producer with transaction version 2 (KIP-890), two commits and an abort.
    const java = version.startsWith('4.') ? `${run}-java-tv2` : undefined;
    const all = [...Object.values(ids), ...(java ? [java] : [])];
    let classes: string | undefined;
    let bootstrap: string[];

    before(async () => {
      cluster = await LocalCluster.start({ nodes: 1, version });
      bootstrap = ['--bootstrap-server', cluster.bootstrapServers];
      kafka = kafkaFor(cluster.brokers);
      const admin = kafka.admin();
      await admin.connect();
      await ensureTopics(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
      await admin.disconnect();
      const transaction = async (id: string, partitions: number[], end: 'open' | 'commit' | 'abort') => {
        // A long timeout: the open transactions must not be aborted by the coordinator mid-test.
        const p = kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 600_000 });
        producers.push(p);
        await p.connect();
        const txn = await p.transaction();
        for (const partition of partitions) await txn.send({ topic, messages: [{ partition, value: `${id}-${partition}-a` }, { partition, value: `${id}-${partition}-b` }] });
        if (end === 'commit') await txn.commit();
        if (end === 'abort') await txn.abort();
      };
      await transaction(ids.committed, [0, 1], 'commit');
      await transaction(ids.aborted, [2], 'abort');
      await transaction(ids.open1, [0, 2], 'open');
      await transaction(ids.open2, [1], 'open');
      if (java) {
        classes = await mkdtemp(join(tmpdir(), 'eoswatch-txnproducer-'));
        await execFileP('javac', ['-d', classes, '-cp', `${cluster.state.libs}/*`, join(import.meta.dirname, '../fixtures/txn-messages/TxnProducer.java')], { timeout: 120_000 });
        const res = await kafkaTool(cluster, 'TxnProducer', [cluster.bootstrapServers, java, topic, 'commit', 'commit', 'abort'], classes);
        assert.equal(res.code, 0, res.stderr);
      }
      txnAdmin = new TxnAdmin(kafka);
      // Markers are written after EndTxn returns: wait for the ended ones to be complete.
      await until(
        'the ended transactions to complete',
        async () => {
          const d = await txnAdmin.describeTransactions([ids.committed, ids.aborted]);
          return [...d.values()].map((x) => x.description?.state);
        },
        30_000,
        { intervalMs: 200, done: (states) => states[0] === 'CompleteCommit' && states[1] === 'CompleteAbort' },
      );
    });

    after(async () => {
      await txnAdmin?.close();
      await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
      await cluster?.down();
      if (classes) await rm(classes, { recursive: true, force: true });
    });

    test('ListTransactions equals TransactionsCommand list, every column', async () => {
      const mine = await txnAdmin.listTransactions();
      assert.equal(mine.length, 1);
      assert.equal(mine[0]!.error, null);
      assert.equal(mine[0]!.apiVersion, version.startsWith('4.') ? 2 : 1);
      const ours = mine.flatMap((b) => b.transactions.map((t) => ({ TransactionalId: t.transactionalId, Coordinator: String(b.nodeId), ProducerId: String(t.producerId), TransactionState: t.state })));
      const tool = await kafkaTool(cluster, 'org.apache.kafka.tools.TransactionsCommand', [...bootstrap, 'list']);
      assert.equal(tool.code, 0, tool.stderr);
      assert.deepEqual(sortRows(ours), sortRows(parseTable(tool.stdout)));
      assert.deepEqual(
        ours.filter((r) => all.includes(r.TransactionalId)).map((r) => `${r.TransactionalId}=${r.TransactionState}`).sort(),
        [`${ids.aborted}=CompleteAbort`, `${ids.committed}=CompleteCommit`, ...(java ? [`${java}=CompleteAbort`] : []), `${ids.open1}=Ongoing`, `${ids.open2}=Ongoing`].sort(),
      );
    });

    test('ListTransactions filters: state (and an unknown one), duration against the tool, pattern where the broker has v2', async () => {
      const ongoing = await txnAdmin.listTransactions({ states: ['Ongoing', 'Bogus'] });
      assert.deepEqual(ongoing[0]!.unknownStateFilters, ['Bogus']);
      assert.deepEqual(ongoing[0]!.transactions.map((t) => t.transactionalId).sort(), [ids.open1, ids.open2]);

      const byDuration = await txnAdmin.listTransactions({ durationMs: 1 });
      const tool = await kafkaTool(cluster, 'org.apache.kafka.tools.TransactionsCommand', [...bootstrap, 'list', '--duration-filter', '1']);
      assert.equal(tool.code, 0, tool.stderr);
      const ours = byDuration.flatMap((b) => b.transactions.map((t) => ({ TransactionalId: t.transactionalId, Coordinator: String(b.nodeId), ProducerId: String(t.producerId), TransactionState: t.state })));
      assert.deepEqual(sortRows(ours), sortRows(parseTable(tool.stdout)));
      // The broker filters on the start of each id's last transaction, ended or not.
      assert.deepEqual(ours.map((r) => r.TransactionalId).sort(), [...all].sort());
      const longer = await txnAdmin.listTransactions({ durationMs: 3_600_000 });
      assert.deepEqual(longer[0]!.transactions, []);

      const byPattern = await txnAdmin.listTransactions({ transactionalIdPattern: `${run}-open-.*` });
      if (version.startsWith('4.')) {
        assert.equal(byPattern[0]!.error, null);
        assert.deepEqual(byPattern[0]!.transactions.map((t) => t.transactionalId).sort(), [ids.open1, ids.open2]);
      } else {
        assert.equal(byPattern[0]!.error?.kind, 'unsupported');
        assert.match(byPattern[0]!.error!.message, /no transactional id pattern.*4\.1/);
      }
    });

    test('DescribeTransactions equals TransactionsCommand describe, every column; an unknown id is an entry error', async () => {
      const unknown = `${run}-never-used`;
      const mine = await txnAdmin.describeTransactions([...all, unknown]);
      for (const id of all) {
        const d = mine.get(id)!;
        assert.equal(d.error, null, id);
        const t = d.description!;
        const tool = await kafkaTool(cluster, 'org.apache.kafka.tools.TransactionsCommand', [...bootstrap, 'describe', '--transactional-id', id]);
        assert.equal(tool.code, 0, tool.stderr);
        const [row, ...rest] = parseTable(tool.stdout);
        assert.deepEqual(rest, []);
        const { TransactionDurationMs, TopicPartitions, ...columns } = row!;
        assert.deepEqual(columns, {
          CoordinatorId: String(d.coordinatorId),
          TransactionalId: id,
          ProducerId: String(t.producerId),
          ProducerEpoch: String(t.producerEpoch),
          TransactionState: t.state,
          TransactionTimeoutMs: String(t.transactionTimeoutMs),
          CurrentTransactionStartTimeMs: none(t.transactionStartTimeMs),
        });
        assert.equal(TransactionDurationMs === 'None', t.transactionStartTimeMs === -1, `${id}: duration ${TransactionDurationMs}`);
        const ours = t.topics.flatMap((x) => x.partitions.map((p) => `${x.topic}-${p}`)).sort();
        assert.deepEqual(ours, (TopicPartitions ? TopicPartitions.split(',') : []).sort(), id);
      }
      assert.deepEqual(mine.get(ids.open1)!.description!.topics.flatMap((x) => x.partitions.map((p) => `${x.topic}-${p}`)).sort(), [`${topic}-0`, `${topic}-2`]);
      assert.equal(mine.get(ids.open1)!.description!.transactionTimeoutMs, 600_000);

      const u = mine.get(unknown)!;
      assert.equal(u.description, null);
      assert.equal(u.error?.name, 'TRANSACTIONAL_ID_NOT_FOUND');
      assert.equal(u.error?.kind, 'error');
      const tool = await kafkaTool(cluster, 'org.apache.kafka.tools.TransactionsCommand', [...bootstrap, 'describe', '--transactional-id', unknown]);
      assert.notEqual(tool.code, 0);
      assert.match(tool.stdout + tool.stderr, /could not be found/);
    });

    test('DescribeProducers equals TransactionsCommand describe-producers on every partition, every column', async () => {
      const mine = await txnAdmin.describeProducers(topic);
      assert.deepEqual([...mine.keys()], [0, 1, 2]);
      const openStart = new Map<number, number>();
      for (const [partition, p] of mine) {
        assert.equal(p.error, null);
        assert.equal(p.leaderId, 1);
        const tool = await kafkaTool(cluster, 'org.apache.kafka.tools.TransactionsCommand', [...bootstrap, 'describe-producers', '--topic', topic, '--partition', String(partition)]);
        assert.equal(tool.code, 0, tool.stderr);
        const ours = p.producers.map((s) => ({
          ProducerId: String(s.producerId),
          ProducerEpoch: String(s.producerEpoch),
          LatestCoordinatorEpoch: String(s.coordinatorEpoch),
          LastSequence: String(s.lastSequence),
          LastTimestamp: String(s.lastTimestamp),
          CurrentTransactionStartOffset: none(s.currentTxnStartOffset),
        }));
        assert.deepEqual(sortRows(ours), sortRows(parseTable(tool.stdout)), `partition ${partition}`);
        for (const s of p.producers) if (s.currentTxnStartOffset !== -1) openStart.set(partition, s.currentTxnStartOffset);
      }
      // Every partition has exactly one open transaction, after the ended one's two records and marker.
      assert.deepEqual([...openStart.keys()].sort(), [0, 1, 2]);
      assert.deepEqual([...openStart.values()], [3, 3, 3]);

      const missing = await txnAdmin.describeProducers(topic, [7]);
      assert.equal(missing.get(7)!.error?.name, 'UNKNOWN_TOPIC_OR_PARTITION');
    });

    test('__transaction_state decoded equals TransactionLogMessageFormatter, every field of every record', async (t) => {
      const { entries } = await readTransactionLog(kafka);
      const versions = new Map<string, number>();
      for (const e of entries) {
        const k = e.record.kind === 'transaction' ? `value v${e.record.value.version}, TV${e.record.value.clientTransactionVersion}` : e.record.kind;
        versions.set(k, (versions.get(k) ?? 0) + 1);
      }
      t.diagnostic(`${entries.length} records: ${[...versions].map(([k, n]) => `${n} ${k}`).join(', ')}`);
      if (java) {
        // TV2: the client's transaction version is in the log, and every end bumps the epoch.
        const tv2 = entries.flatMap((e) => (e.record.kind === 'transaction' && e.record.transactionalId === java ? [e.record.value] : []));
        assert.ok(tv2.some((v) => v.clientTransactionVersion === 2), `a TV2 record for ${java}`);
        assert.ok(new Set(tv2.map((v) => v.producerEpoch)).size >= 3, `epochs ${tv2.map((v) => v.producerEpoch)}`);
      }
      const kinds = new Set(entries.map((e) => (e.record.kind === 'transaction' ? e.record.value.state : e.record.kind)));
      for (const s of ['Empty', 'Ongoing', 'PrepareCommit', 'CompleteCommit', 'PrepareAbort', 'CompleteAbort']) assert.ok(kinds.has(s as never), `a ${s} record in the log (saw ${[...kinds]})`);
      const tool = await kafkaTool(cluster, 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
        ...bootstrap,
        '--topic',
        '__transaction_state',
        '--from-beginning',
        '--formatter',
        'org.apache.kafka.tools.consumer.TransactionLogMessageFormatter',
        '--consumer-property',
        'exclude.internal.topics=false',
        '--max-messages',
        String(entries.length),
        '--timeout-ms',
        '30000',
      ]);
      const lines = jsonObjects(tool.stdout);
      assert.equal(lines.length, entries.length, `the formatter printed ${lines.length} records, we read ${entries.length}:\n${tool.stderr.slice(-2000)}`);
      const parsed = lines.map((l) => JSON.parse(l) as { key: { version?: number; type?: number; data: { transactionalId: string } }; value: { version: number; data: Record<string, unknown> } | null });
      const statusByName = parsed.some((j) => typeof j.value?.data.transactionStatus === 'string');
      assert.equal(statusByName, version.startsWith('4.'), 'Kafka 4.x prints the state by name, 3.9 by byte');
      const theirs = parsed
        .map((j) => JSON.stringify({ keyVersion: j.key.version ?? j.key.type, id: j.key.data.transactionalId, valueVersion: j.value?.version ?? null, value: j.value ? formatterValue(j.value.data) : null }));
      const ours = entries.map((e) => {
        const r = e.record;
        assert.notEqual(r.kind, 'unknown-key');
        if (r.kind === 'unknown-key') throw new Error('unreachable');
        return JSON.stringify({ keyVersion: 0, id: r.transactionalId, valueVersion: r.kind === 'transaction' ? r.value.version : null, value: r.kind === 'transaction' ? ourValue(r.value, statusByName) : null });
      });
      assert.deepEqual([...ours].sort(), [...theirs].sort());
      const mineForOpen = entries.filter((e) => e.record.kind === 'transaction' && e.record.transactionalId === ids.open1);
      const last = mineForOpen[mineForOpen.length - 1]!.record;
      assert.ok(last.kind === 'transaction' && last.value.state === 'Ongoing' && last.value.partitions?.[0]?.topic === topic);
    });
  });
}
