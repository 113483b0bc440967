// The transactions service (src/coordinator/transactions-service.ts) against a real 1-node Kafka
// 4.4.0 cluster: __transaction_state read from the beginning as a baseline, then tailed. What the
// coordinator saw, counted per application and never per transactional id:
// - kafkajs producers (transaction version 0/1) and a Java producer of the cluster's own version
//   (TV2, KIP-890: the epoch rises with every transaction) commit and abort: exact counts by
//   outcome, durations and commit completions, and no fencing from TV2's epoch bumps;
// - a second instance initialising the id of an open transaction: one fencing, on both versions;
// - a transaction whose producer went quiet past its (short) timeout: aborted_timeout;
// - a producer SIGKILLed with a transaction open and a 15 min timeout: named hanging within the
//   service's interval (gauge, info series with the transactional id, /transactions with age,
//   partition, start offset and records held back), and cleared once `eoswatch transactions abort`
//   ended it.
// Transaction version 2 needs a 4.x broker; EOSWATCH_KAFKA_VERSION=3.9.1 runs the same on the
// classic protocol only.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Producer } from 'kafkajs';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/log.js';
import { ensureTopics } from '../../src/kafka/admin.js';
import { EndOffsetReader } from '../../src/kafka/offsets.js';
import { readTransactionLog } from '../../src/kafka/txn-log-reader.js';
import { TransactionsService, type TransactionsReport } from '../../src/coordinator/transactions-service.js';
import { kafkaFor, runEoswatch, uniqueName, useCluster } from '../harness/index.js';
import { holds, until } from '../harness/wait.js';

const execFileP = promisify(execFile);
const VERSION = process.env.EOSWATCH_KAFKA_VERSION ?? '4.4.0';
const TV2 = Number(VERSION.split('.')[0]) >= 4;
const INTERVAL_MS = 1000;
const IDLE_AFTER_MS = 3000;

/** A Java transactional producer (test/fixtures/txn-messages/TxnShell.java) driven over stdin. */
class JavaProducer {
  private buf = '';
  private readonly waiters: { cmd: string; resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  readonly child: ChildProcess;

  constructor(classes: string, libs: string, bootstrap: string, id: string, timeoutMs: number) {
    this.child = spawn('java', ['-Xmx128m', '-cp', `${classes}:${libs}/*`, 'TxnShell', bootstrap, id, String(timeoutMs)], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const w = this.waiters.shift();
        if (!w) continue;
        if (line.startsWith(`OK ${w.cmd} `)) w.resolve(line);
        else w.reject(new Error(`${w.cmd}: ${line}`));
      }
    });
    this.child.once('exit', (code, sig) => {
      for (const w of this.waiters.splice(0)) w.reject(new Error(`${w.cmd}: the producer exited (${code ?? sig})`));
    });
  }

  /** Runs one command; resolves with the time it finished (epoch ms). */
  run(line: string): Promise<number> {
    const cmd = line.split(' ')[0]!;
    return new Promise<string>((resolve, reject) => {
      this.waiters.push({ cmd, resolve, reject });
      this.child.stdin!.write(`${line}\n`);
    }).then((l) => Number(l.split(' ')[2]));
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    process.kill(this.child.pid!, 'SIGKILL');
    await exited;
  }
}

describe(`the transactions service, Kafka ${VERSION}`, () => {
  const h = useCluster({ nodes: 1, version: VERSION, overrides: { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000' } });
  const registry = new Registry();
  const run = uniqueName('tsvc').replace(/[^a-z0-9]/g, '');
  const app = (name: string) => `${run}${name}`;
  const topic = uniqueName('tsvc-out');
  let service: TransactionsService;
  let classes: string;
  let url: string;
  let server: ReturnType<ReturnType<typeof express>['listen']> | undefined;
  const javas: JavaProducer[] = [];
  const producers: Producer[] = [];

  const java = (id: string, timeoutMs = 60_000): JavaProducer => {
    const p = new JavaProducer(classes, h.cluster.state.libs, h.cluster.bootstrapServers, id, timeoutMs);
    javas.push(p);
    return p;
  };
  const kjs = async (id: string, transactionTimeout = 60_000): Promise<Producer> => {
    const p = kafkaFor(h.cluster.brokers).producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1, transactionTimeout });
    await p.connect();
    producers.push(p);
    return p;
  };

  /** Every series of a metric as [labels, value]. */
  const series = async (name: string): Promise<[Record<string, string | number>, number][]> =>
    ((await registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [v.labels, v.value] as [Record<string, string | number>, number]);
  const value = async (name: string, labels: Record<string, string>): Promise<number | undefined> =>
    (await series(name)).find(([l]) => Object.entries(labels).every(([k, x]) => String(l[k]) === x))?.[1];
  /** The states the coordinator wrote for an id, for a failure's message. */
  const statesOf = async (id: string): Promise<string> => {
    const { entries } = await readTransactionLog(kafkaFor(h.cluster.brokers), {});
    return entries
      .filter((e) => e.record.kind !== 'unknown-key' && e.record.transactionalId === id)
      .map((e) => (e.record.kind === 'transaction' ? `${e.record.value.state} pid ${e.record.value.producerId} epoch ${e.record.value.producerEpoch} tv ${e.record.value.clientTransactionVersion} at ${e.record.value.lastUpdateTimestampMs}` : 'tombstone'))
      .join('\n');
  };
  const fetchReport = async () => (await (await fetch(url)).json()) as TransactionsReport;
  const outcome = (application: string, o: string) => value('eos_coordinator_transactions_total', { application, outcome: o });
  const histogramCount = async (name: string, application: string): Promise<number | undefined> =>
    (await registry.getSingleMetric(name)?.get())?.values.find((v) => (v as { metricName?: string }).metricName === `${name}_count` && v.labels.application === application)?.value;

  before(async () => {
    const admin = kafkaFor(h.cluster.brokers).admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
    await admin.disconnect();
    classes = await mkdtemp(join(tmpdir(), 'eoswatch-txnshell-'));
    await execFileP('javac', ['-d', classes, '-cp', `${h.cluster.state.libs}/*`, join(import.meta.dirname, '../fixtures/txn-messages/TxnShell.java')], { timeout: 120_000 });
    // History the baseline must not count: a transaction committed before the service starts.
    const early = await kjs(`${app('early')}-1`);
    const t = await early.transaction();
    await t.send({ topic, messages: [{ partition: 0, value: 'early' }] });
    await t.commit();

    service = new TransactionsService(
      kafkaFor(h.cluster.brokers),
      { intervalMs: INTERVAL_MS, idleAfterMs: IDLE_AFTER_MS, patterns: [`^(?<app>${run}[a-z]+)-\\d+$`], maxApplications: 50, topN: 5 },
      { logger: createLogger('silent'), registry, fatal: (e) => assert.fail(e) },
    );
    await service.start();
    const web = express();
    web.use('/transactions', service.router());
    await new Promise<void>((resolve) => {
      server = web.listen(0, '127.0.0.1', () => resolve());
    });
    url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}/transactions`;
    await until('the first pass (the baseline)', async () => service.lastReport);
  });

  after(async () => {
    await service?.stop();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    for (const p of producers) await p.disconnect().catch(() => undefined);
    for (const j of javas) await j.kill();
    if (classes) await rm(classes, { recursive: true, force: true });
  });

  test('the baseline counts no history: the transaction committed before the start is a live id, not an outcome', async () => {
    assert.equal(await value('eos_coordinator_transactional_ids', { application: app('early') }), 1);
    assert.equal(await outcome(app('early'), 'committed'), 0, 'the baseline counts nothing');
    assert.equal(await value('eos_coordinator_source', { source: 'log' }), 1);
    const r = (await (await fetch(url)).json()) as TransactionsReport;
    assert.equal(r.source, 'log');
    assert.equal(r.problem, null);
  });

  test('commits and aborts of classic and TV2 producers, counted per application; TV2 epoch bumps are no fencings', async () => {
    const a = await kjs(`${app('classic')}-1`);
    const b = await kjs(`${app('classic')}-2`);
    for (const p of [a, b]) {
      for (const end of ['commit', 'commit', 'commit', 'abort'] as const) {
        const t = await p.transaction();
        await t.send({ topic, messages: [{ partition: 1, value: end }] });
        await t[end]();
      }
    }
    const j = java(`${app('javatv')}-1`);
    await j.run('init');
    for (const end of ['commit', 'commit', 'abort']) {
      await j.run(`open ${topic} 2 3`);
      await j.run(end);
    }
    await until('6 commits and 2 aborts of the classic app', async () => (await outcome(app('classic'), 'committed')) === 6 && (await outcome(app('classic'), 'aborted')) === 2);
    await until('2 commits and 1 abort of the Java app', async () => (await outcome(app('javatv'), 'committed')) === 2 && (await outcome(app('javatv'), 'aborted')) === 1);
    // A marker-written (completed) state follows each decision: commit completions of commits only.
    await until('the completions of every commit', async () => (await histogramCount('eos_coordinator_commit_completion_seconds', app('classic'))) === 6);
    assert.equal(await histogramCount('eos_coordinator_transaction_duration_seconds', app('classic')), 8);
    assert.equal(await histogramCount('eos_coordinator_transaction_duration_seconds', app('javatv')), 3);
    assert.equal(await histogramCount('eos_coordinator_commit_completion_seconds', app('javatv')), 2);
    for (const a of [app('classic'), app('javatv')]) {
      assert.equal(await value('eos_coordinator_fencings_total', { application: a }), 0, `${a}: no fencing`);
      assert.equal(await outcome(a, 'aborted_timeout'), 0, `${a}: no timeout`);
      assert.equal(await outcome(a, 'fenced'), 0, `${a}: nothing fenced`);
    }
    assert.equal(await value('eos_coordinator_transactional_ids', { application: app('classic') }), 2);
    assert.equal(await value('eos_coordinator_transactional_ids', { application: app('javatv') }), 1);
    if (TV2) assert.equal(await value('eos_coordinator_client_version_ids', { application: app('javatv'), version: '2' }), 1, 'the Java client of a 4.x cluster uses TV2');
    const kjsVersions = (await series('eos_coordinator_client_version_ids')).filter(([l]) => l.application === app('classic'));
    assert.equal(kjsVersions.length, 1);
    assert.notEqual(kjsVersions[0]![0].version, '2', 'kafkajs speaks the classic protocol');
  });

  test('a second instance initialising the id of an open transaction is one fencing (classic)', async () => {
    const id = `${app('fence')}-1`;
    const first = await kjs(id);
    const t = await first.transaction();
    await t.send({ topic, messages: [{ partition: 0, value: 'zombie' }] });
    // A new instance's InitProducerId (kafkajs sends it at its first transaction()): the coordinator
    // fences the open transaction's producer and aborts it.
    const second = await kjs(id);
    const t2 = await second.transaction();
    await t2.abort();
    await until('the fencing counted', async () => (await value('eos_coordinator_fencings_total', { application: app('fence') })) === 1, 30_000, { context: () => statesOf(id) });
    assert.equal(await outcome(app('fence'), 'fenced'), 1);
    assert.equal(await outcome(app('fence'), 'aborted'), 0, 'the fencing is not a client abort');
    await t.abort().catch(() => undefined);
  });

  test('a second instance initialising the id of an open TV2 transaction is one fencing', async () => {
    const id = `${app('jfence')}-1`;
    const first = java(id);
    await first.run('init');
    await first.run(`open ${topic} 0 2`);
    const second = java(id);
    await second.run('init');
    await until('the TV2 fencing counted', async () => (await value('eos_coordinator_fencings_total', { application: app('jfence') })) === 1, 30_000, { context: () => statesOf(id) });
    assert.equal(await outcome(app('jfence'), 'fenced'), 1);
    assert.equal(await outcome(app('jfence'), 'aborted'), 0);
  });

  test('a producer quiet past its transaction timeout: aborted by the coordinator, counted as aborted_timeout', async () => {
    const p = await kjs(`${app('timeout')}-1`, 3000);
    const t = await p.transaction();
    await t.send({ topic, messages: [{ partition: 0, value: 'slow' }] });
    await until('the timeout abort counted', async () => (await outcome(app('timeout'), 'aborted_timeout')) === 1, 30_000);
    assert.equal(await outcome(app('timeout'), 'aborted'), 0);
    assert.equal(await outcome(app('timeout'), 'fenced'), 0, 'a timeout is not a fencing');
    assert.equal(await value('eos_coordinator_fencings_total', { application: app('timeout') }), 0);
  });

  test('a producer writing records with old timestamps (event time, catching up) inside a long transaction is not hanging; once it stops writing, it is', async () => {
    const id = `${app('catchup')}-1`;
    const p = await kjs(id, 600_000);
    const t = await p.transaction();
    const hangingNow = async () => ((await (await fetch(url)).json()) as TransactionsReport).hanging.some((x) => x.transactionalId === id);
    // Records two hours old by their own timestamps, one every 300 ms for 3 idleAfter spans: the
    // transaction holds the LSO all along while its producer writes.
    const old = Date.now() - 2 * 3600_000;
    let checks = 0;
    await holds(
      "a producer that writes is never hanging, whatever its records' timestamps",
      async () => {
        await t.send({ topic, messages: [{ partition: 1, value: 'late', timestamp: String(old) }] });
        checks++;
        return !(await hangingNow());
      },
      3 * IDLE_AFTER_MS + 2 * INTERVAL_MS,
      { intervalMs: 300 },
    );
    assert.ok(checks > 10, `checked ${checks} times while it wrote`);
    const stoppedAt = Date.now();
    await until('named hanging once it stopped writing', hangingNow, IDLE_AFTER_MS + 20 * INTERVAL_MS);
    assert.ok(Date.now() - stoppedAt >= IDLE_AFTER_MS - INTERVAL_MS, `named ${Date.now() - stoppedAt} ms after its last write, not before idleAfter`);
    await t.abort();
    await until('cleared after its abort', async () => !(await hangingNow()), 30_000);
  });

  test('a SIGKILLed producer with a transaction open is named hanging within the interval, and cleared by abort', async () => {
    const id = `${app('dead')}-1`;
    const dead = java(id, 900_000);
    await dead.run('init');
    const sentAt = await dead.run(`open ${topic} 2 5`);
    await dead.kill();
    const ends = new EndOffsetReader(kafkaFor(h.cluster.brokers));
    const end = (await ends.read(topic)).find((p) => p.partition === 2)!;
    await ends.close();
    assert.ok(end.lso < end.high, 'the open transaction holds the LSO');
    const found = await until(
      'the hanging transaction on /transactions',
      async () => ((await (await fetch(url)).json()) as TransactionsReport).hanging.find((x) => x.transactionalId === id),
      IDLE_AFTER_MS + 20 * INTERVAL_MS,
    );
    assert.equal(found.application, app('dead'));
    assert.equal(found.topic, topic);
    assert.equal(found.partition, 2);
    assert.equal(found.startOffset, String(end.lso));
    assert.equal(found.heldBack, String(end.high - end.lso));
    assert.ok(Math.abs(found.ageMs - (Date.now() - sentAt)) < 10_000, `age ${found.ageMs} ms close to the truth`);
    assert.match(found.abortDue, /^in 1[45]m \d+s$/, `abort due in about 15 min: ${found.abortDue}`);
    assert.equal(await value('eos_coordinator_hanging_transactions', { application: app('dead') }), 1);
    const info = (await series('eos_coordinator_hanging_transaction_info')).filter(([l]) => l.transactional_id === id);
    assert.equal(info.length, 1);
    assert.deepEqual({ ...info[0]![0] }, { application: app('dead'), topic, partition: '2', transactional_id: id });
    assert.match(service.ready().detail ?? '', new RegExp(`1 hanging \\(${id} on ${topic}-2\\)`));

    const r = await runEoswatch(['transactions', 'abort', '--bootstrap-server', h.cluster.bootstrapServers, '--transactional-id', id, '--force']);
    assert.equal(r.code, 0, r.stderr);
    await until('the hanging transaction cleared', async () => (await value('eos_coordinator_hanging_transactions', { application: app('dead') })) === 0, 30_000);
    assert.equal((await series('eos_coordinator_hanging_transaction_info')).filter(([l]) => l.transactional_id === id).length, 0, 'its info series removed');
    const after = (await (await fetch(url)).json()) as TransactionsReport;
    assert.equal(after.hanging.some((x) => x.transactionalId === id), false);
  });

  test('a topic deleted under an open transaction leaves only its own partitions unjudged: a producer killed on another topic is still named hanging', async () => {
    const gone = uniqueName('tsvc-gone');
    const admin = kafkaFor(h.cluster.brokers).admin();
    await admin.connect();
    try {
      await ensureTopics(admin, [{ topic: gone, numPartitions: 1, replicationFactor: 1 }]);
      const orphan = java(`${app('orphan')}-1`, 900_000);
      await orphan.run('init');
      await orphan.run(`open ${gone} 0 3`);
      await orphan.kill();
      await admin.deleteTopics({ topics: [gone], timeout: 30_000 });
    } finally {
      await admin.disconnect();
    }
    const id = `${app('dead')}-2`;
    const dead = java(id, 900_000);
    await dead.run('init');
    await dead.run(`open ${topic} 1 4`);
    await dead.kill();
    const found = await until('the hanging transaction on the other topic on /transactions', async () => (await fetchReport()).hanging.find((x) => x.transactionalId === id), IDLE_AFTER_MS + 20 * INTERVAL_MS);
    assert.equal(found.topic, topic);
    assert.equal(found.partition, 1);
    for (const x of [id, `${app('orphan')}-1`]) {
      const r = await runEoswatch(['transactions', 'abort', '--bootstrap-server', h.cluster.bootstrapServers, '--transactional-id', x, '--force']);
      assert.equal(r.code, 0, `${x}: ${r.stderr}`);
    }
    await until('the hanging transaction cleared', async () => !(await fetchReport()).hanging.some((x) => x.transactionalId === id), 30_000);
  });

  test('no series carries a transactional id except the capped hanging info', async () => {
    const ids = new Set<string>();
    for (const name of ['eos_coordinator_open_transactions', 'eos_coordinator_oldest_open_transaction_seconds', 'eos_coordinator_transactions_total', 'eos_coordinator_fencings_total', 'eos_coordinator_transactional_ids', 'eos_coordinator_client_version_ids', 'eos_coordinator_hanging_transactions', 'eos_coordinator_transaction_duration_seconds', 'eos_coordinator_commit_completion_seconds']) {
      for (const [labels] of await series(name)) {
        assert.equal('transactional_id' in labels, false, name);
        if (typeof labels.application === 'string' && labels.application.startsWith(run)) ids.add(labels.application);
      }
    }
    for (const a of ids) assert.doesNotMatch(a, /-\d+$/, `${a} is an application, not an id`);
    assert.deepEqual([...ids].sort(), ['catchup', 'classic', 'dead', 'early', 'fence', 'javatv', 'jfence', 'orphan', 'timeout'].map(app).sort());
  });
});

describe(`the transactions service on a cluster that has had no transaction yet, Kafka ${VERSION}`, () => {
  const h = useCluster({ nodes: 1, version: VERSION });
  const registry = new Registry();
  let service: TransactionsService | undefined;
  after(async () => {
    await service?.stop();
  });

  test('__transaction_state not there yet is an empty log, not an unreadable one: the first transactions are counted', async () => {
    const kafka = kafkaFor(h.cluster.brokers);
    const admin = kafka.admin();
    await admin.connect();
    assert.equal((await admin.listTopics()).includes('__transaction_state'), false, 'a fresh cluster');
    const topic = uniqueName('tsvc-fresh');
    await ensureTopics(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]);
    await admin.disconnect();
    service = new TransactionsService(kafka, { intervalMs: INTERVAL_MS, idleAfterMs: IDLE_AFTER_MS, patterns: [], maxApplications: 10, topN: 5 }, { logger: createLogger('silent'), registry, fatal: (e) => assert.fail(e) });
    await service.start();
    await until('the first pass', async () => service!.lastReport);
    const p = kafka.producer({ transactionalId: 'fresh-app', idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    try {
      for (let i = 0; i < 3; i++) {
        const t = await p.transaction();
        await t.send({ topic, messages: [{ value: String(i) }] });
        await t.commit();
      }
    } finally {
      await p.disconnect();
    }
    const committed = async () => ((await registry.getSingleMetric('eos_coordinator_transactions_total')?.get())?.values ?? []).find((v) => v.labels.outcome === 'committed')?.value;
    await until('3 commits counted', async () => (await committed()) === 3, 30_000);
    assert.equal(service.lastReport?.source, 'log');
    assert.equal(service.lastReport?.problem, null);
    assert.deepEqual(((await registry.getSingleMetric('eos_service_errors_total')?.get())?.values ?? []).filter((v) => v.labels.service === 'transactions' && v.value !== 0), [], 'no read error counted');
  });
});
