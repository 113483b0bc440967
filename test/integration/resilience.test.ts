// The daemon's supervision against a real 1-node cluster: services start while Kafka is down and
// come up by themselves once it is back, without waiting for one another; a broker outage is
// reported while it lasts and a FAILED pipeline restarts from its committed offsets, exactly once;
// a consumer released in the middle of its join does not stay in the group; a transform's bad
// results and stuck records go to the dead-letter topic while the pipeline stays up; a canary
// never counts another daemon's failed sends as lost.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaFor, readAll, spawnTracked, uniqueName, useCluster, waitForLine } from '../harness/index.js';
import { memoryLogger } from '../harness/log.js';
import { validateConfig } from '../../src/config/load.js';
import { createKafka } from '../../src/kafka/client.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { PipelineService, membershipGroup } from '../../src/pipeline/pipeline-service.js';
import { PipelineProcess, pipelineConfig, pipelineTopics, tails, waitCaughtUp } from '../harness/pipeline.js';
import { holds, until } from '../harness/wait.js';
import { produceSeed } from '../harness/seed.js';

/** A kafkajs consumer that joins GROUP (session timeout 15 s), says "joined" and then does nothing (the test stops the process). */
const FROZEN_MEMBER = `
import { Kafka, logLevel } from 'kafkajs';
const k = new Kafka({ brokers: process.env.BROKERS.split(','), logLevel: logLevel.NOTHING });
const c = k.consumer({ groupId: process.env.GROUP, sessionTimeout: 15000, rebalanceTimeout: 15000, heartbeatInterval: 1000 });
c.on(c.events.GROUP_JOIN, () => console.log('joined'));
await c.connect();
await c.subscribe({ topics: [process.env.TOPIC] });
await c.run({ eachBatch: async () => {} });
`;

async function readyz(p: PipelineProcess): Promise<{ status: number; body: { services: Record<string, { ready: boolean; detail?: string }> } }> {
  const r = await fetch(`${await p.url}/readyz`);
  return { status: r.status, body: (await r.json()) as never };
}

describe('supervision (1-node cluster)', () => {
  const h = useCluster({ nodes: 1 });
  const fast = { initialBackoff: '500ms', maxBackoff: '3s' };

  test('Kafka down at start: LSO monitor and audit start at once, pipeline and canary come up once Kafka does (onFailure: exit)', async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'down-at-start', 2, 1);
    await h.cluster.stop(1);
    let down = true;
    const cfg = pipelineConfig(
      s,
      { onFailure: 'exit' },
      { supervisor: fast, canary: { enabled: true, id: uniqueName('c'), rate: 20, lostAfter: '10s' }, lsoMonitor: { interval: '1s' }, audit: { enabled: true, schedule: '*/5 * * * *', sourceTimeout: '3s' } },
    );
    const t0 = Date.now();
    const p = new PipelineProcess(cfg);
    try {
      await p.waitFor(/LSO monitor started/, 15_000);
      // The audit started at once too: its first report (Kafka unreachable) is served well before a pipeline start gives up.
      await until('/audit answers', async () => (await fetch(`${await p.url}/audit`)).status === 200, 20_000, { context: () => tails(p) });
      assert.ok(Date.now() - t0 < 30_000, `audit served ${Date.now() - t0} ms after launch`);
      await until('a failed pipeline start', async () => /failed: .*restart/.test((await readyz(p)).body.services.pipeline?.detail ?? ''), 150_000, { context: () => tails(p) });
      assert.equal(p.alive, true, 'a failed start is not a reason to exit');
      await h.cluster.start(1);
      down = false;
      await until('pipeline and canary up', async () => (await p.metric('eos_pipeline_up')) === 1 && (await readyz(p)).status === 200, 180_000, { context: () => tails(p) });
      assert.ok(((await p.metric('eos_service_restarts_total', { service: 'pipeline' })) ?? 0) >= 1, 'the pipeline was restarted');
      assert.ok(((await p.metric('eos_service_restarts_total', { service: 'canary' })) ?? 0) >= 1, 'the canary was restarted');
      await until('canary records through the pipeline', async () => ((await p.metric('eos_canary_records_total', { result: 'received' })) ?? 0) >= 20, 60_000, { context: () => tails(p) });
      assert.equal(p.alive, true);
    } finally {
      await p.kill();
      if (down) await h.cluster.start(1);
    }
  });

  test('a broker outage: the failed checkpoint is counted and eos_pipeline_up drops while it lasts; the pipeline restarts by itself, exactly once', async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'outage', 2, 1);
    await produceSeed(s.brokers, s.source, 2, 200);
    // The canary keeps records flowing through the outage, as a live source does (an idle pipeline has nothing to commit, so no checkpoint fails).
    const cfg = pipelineConfig(
      s,
      { onFailure: 'keep-serving', checkpoint: { interval: '500ms', timeout: '5s' }, restartStrategy: { type: 'fixed-delay', delay: '1s' } },
      { supervisor: fast, canary: { enabled: true, id: uniqueName('c'), rate: 20, lostAfter: '30s' } },
    );
    const p = new PipelineProcess(cfg);
    // Seed records (not the canary's) at the sink, by id.
    const seedIds = async () => (await readAll(s.brokers, s.sink)).map((r) => JSON.parse(String(r.message.value)) as { id: string; run?: string }).filter((v) => v.run === undefined).map((v) => v.id);
    let down = false;
    try {
      await until('the first seed records through', async () => (await seedIds()).length >= 200, 60_000, { context: () => tails(p) });
      await until('pipeline up and canary records flowing', async () => (await p.metric('eos_pipeline_up')) === 1 && ((await p.metric('eos_canary_records_total', { result: 'received' })) ?? 0) >= 20, 60_000, { context: () => tails(p) });
      const failedCheckpoints = async () => ((await p.metric('eos_checkpoints_total', { outcome: 'timeout' })) ?? 0) + ((await p.metric('eos_checkpoints_total', { outcome: 'failed' })) ?? 0);
      const failedBefore = await failedCheckpoints();
      await h.cluster.stop(1);
      down = true;
      const stoppedAt = Date.now();
      // Reported during the outage, within the checkpoint timeout (5 s) and a margin, not once it is over.
      await until('eos_pipeline_up 0 during the outage', async () => (await p.metric('eos_pipeline_up')) === 0, 30_000, { context: () => tails(p) });
      const seenAfter = Date.now() - stoppedAt;
      assert.ok((await failedCheckpoints()) > failedBefore, 'the failed checkpoint is counted while the broker is down');
      assert.equal((await readyz(p)).status, 503);
      assert.ok(((await p.metric('eos_checkpoint_consecutive_failures')) ?? 0) >= 1);
      // The supervisor restarts the FAILED pipeline while the broker is still down: the restarted run
      // carries the failures (driver.restart()), so it does not report up.
      await until('the pipeline restarted during the outage', async () => ((await p.metric('eos_service_restarts_total', { service: 'pipeline' })) ?? 0) >= 1, 30_000, { context: () => tails(p) });
      await holds('eos_pipeline_up 0 while the broker is down', async () => (await p.metric('eos_pipeline_up')) === 0, 3_000);
      await h.cluster.start(1);
      down = false;
      await until('pipeline up again after the outage', async () => (await p.metric('eos_pipeline_up')) === 1, 180_000, { context: () => tails(p) });
      assert.ok(((await p.metric('eos_service_restarts_total', { service: 'pipeline' })) ?? 0) >= 1, `restarted\n${tails(p)}`);
      await produceSeed(s.brokers, s.source, 2, 200, { startValue: 200 });
      await until('all seed records at the sink', async () => (await seedIds()).length >= 400, 120_000, { context: () => tails(p) });
      const ids = await seedIds();
      assert.equal(new Set(ids).size, ids.length, 'no duplicate at the sink');
      assert.equal(ids.length, 400, `every record once at the sink (outage seen ${seenAfter} ms after the broker stopped)`);
    } finally {
      await p.kill();
      if (down) await h.cluster.start(1);
    }
  });

  test('bad transform results, throws and stuck records go to the dead-letter topic; the pipeline stays up', async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'bad-transform', 1, 1);
    const dir = await mkdtemp(join(tmpdir(), 'eoswatch-transform-'));
    after(() => rm(dir, { recursive: true, force: true }));
    const mod = join(dir, 'transform.mjs');
    await writeFile(
      mod,
      `export function transform(r) {
  const v = String(r.value);
  if (v === 'shape') return { value: 12345 };
  if (v === 'null') throw null;
  if (v === 'loop') for (;;) {}
  if (v === 'never') return new Promise(() => {});
  return { key: r.key, value: v.toUpperCase() };
}\n`,
    );
    const cfg = pipelineConfig(s, { onFailure: 'exit', transformModule: mod, transformTimeout: '1s' });
    const p = new PipelineProcess(cfg);
    const producer = kafkaFor(s.brokers).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const values = ['a', 'shape', 'b', 'null', 'loop', 'c', 'never', 'd'];
    await producer.send({ topic: s.source, acks: -1, messages: values.map((value) => ({ value, partition: 0 })) });
    await producer.disconnect();
    // /healthz answers while the transform loops (it runs in a worker thread).
    await until('healthz', async () => (await fetch(`${await p.url}/healthz`)).status === 200, 30_000, { context: () => tails(p) });
    await waitCaughtUp(s.brokers, s.groupId, s.source, 60_000);
    const sink = (await readAll(s.brokers, s.sink)).map((r) => String(r.message.value));
    assert.deepEqual(sink, ['A', 'B', 'C', 'D']);
    const dlq = await readAll(s.brokers, `${s.sink}.dlq`);
    assert.deepEqual(
      dlq.map((r) => [String(r.message.value), String(r.message.headers?.['eos.dlq.reason'])]),
      [
        ['shape', 'result: value is a number; expected a Buffer, a string or null'],
        ['null', 'transform threw a non-Error value: null'],
        ['loop', 'transform timed out: no result within 1000 ms (its worker thread was restarted)'],
        ['never', 'transform timed out: no result within 1000 ms (its worker thread was restarted)'],
      ],
    );
    assert.equal(await p.metric('eos_pipeline_up'), 1);
    assert.equal(p.alive, true);
    await p.kill();
  });

  test('a consumer released while it is still joining the group never stays in it (kafkajs would restart it and let it join): one member, every record processed', async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'late-join', 3, 1);
    await produceSeed(s.brokers, s.source, 3, 300);
    const group = membershipGroup(s.groupId);
    // A member that stops answering: the coordinator holds every join of the group until it has
    // dropped it (its session timeout), so the pipeline's consumer is still joining when it is released.
    const frozen = spawnTracked(process.execPath, ['--input-type=module', '-e', FROZEN_MEMBER], { env: { ...process.env, BROKERS: s.brokers.join(','), GROUP: group, TOPIC: s.source } });
    await waitForLine(frozen, /^joined$/, 60_000);
    process.kill(frozen.pid!, 'SIGSTOP');
    const { log, lines } = memoryLogger();
    const config = validateConfig(pipelineConfig(s, { sessionTimeout: '10s' }), 'test', {});
    const svc = new PipelineService(config.pipeline, createKafka(config.kafka, log), { logger: log, registry: createRegistry(), fatal: () => undefined, failed: () => undefined });
    const described = async () => {
      const admin = kafkaFor(s.brokers).admin();
      await admin.connect();
      try {
        return (await admin.describeGroups([group])).groups[0]!;
      } finally {
        await admin.disconnect();
      }
    };
    const members = async () => (await described()).members.length;
    const seedIds = async () => (await readAll(s.brokers, s.sink)).map((r) => (JSON.parse(String(r.message.value)) as { id: string }).id);
    try {
      const first = svc.start();
      await until('the consumer joining', async () => lines.some((l) => l.includes('"msg":"Starting"') && l.includes(group)), 60_000);
      // Its JoinGroup is with the coordinator, held there: the group waits for the frozen member to rejoin.
      await until("the consumer's JoinGroup held (the group preparing a rebalance)", async () => (await described()).state === 'PreparingRebalance', 30_000);
      await svc.stop(); // releases the consumer in the middle of its join
      process.kill(frozen.pid!, 'SIGKILL'); // dropped from the group after its session timeout (15 s)
      await assert.rejects(first, /start interrupted/);
      await svc.start();
      await until('every seed record at the sink', async () => (await seedIds()).length >= 300 || undefined, 120_000);
      const ids = await seedIds();
      assert.equal(new Set(ids).size, 300);
      // The released consumer would have joined by now, and kafkajs never lets it go by itself.
      await until('one member in the membership group', async () => (await members()) === 1, 30_000);
      // Past the session timeout: nobody joins later (checked throughout, not once at the end).
      await holds('one member in the membership group', async () => (await members()) === 1, 12_000, { context: () => lines.filter((l) => /GROUP_JOIN|joined the group|earlier run/.test(l)).join('\n') });
    } finally {
      await svc.stop();
    }
  });

  test("a canary never counts another daemon's failed sends as lost", async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'canary-handover', 1, 1);
    const id = uniqueName('c');
    // Daemon A: the canary alone, its records wait in the source (no pipeline yet).
    const a = new PipelineProcess({
      http: { host: '127.0.0.1', port: 0 },
      kafka: { brokers: s.brokers },
      audit: { enabled: false },
      lsoMonitor: { enabled: false },
      canary: { enabled: true, id, rate: 20, sourceTopic: s.source, sinkTopic: s.sink, lostAfter: '5s' },
    });
    await a.waitFor(/canary started/);
    await until('A sent records', async () => ((await a.metric('eos_canary_records_total', { result: 'sent' })) ?? 0) >= 40, 30_000, { context: () => tails(a) });
    await h.cluster.stop(1);
    try {
      await until('A saw failed sends', async () => ((await a.metric('eos_canary_send_errors_total')) ?? 0) >= 1, 90_000, { context: () => tails(a) });
    } finally {
      await h.cluster.start(1);
    }
    const sentBefore = (await a.metric('eos_canary_records_total', { result: 'sent' }))!;
    await until('A sends again', async () => ((await a.metric('eos_canary_records_total', { result: 'sent' })) ?? 0) >= sentBefore + 40, 90_000, { context: () => tails(a) });
    await a.kill();
    // The source holds A's run with a hole where its sends failed (read_uncommitted shows they were never written).
    const written = (await readAll(s.brokers, s.source, { readUncommitted: true })).map((r) => JSON.parse(String(r.message.value)).seq as number);
    const holes = written.filter((q, i) => i > 0 && q !== written[i - 1]! + 1).length;
    assert.ok(holes >= 1, `A's failed sends left a hole in its sequence: ${written.join(',')}`);
    // Daemon B: pipeline and canary; its pipeline moves A's records to the sink, where B's canary sees them.
    const b = new PipelineProcess(pipelineConfig(s, {}, { canary: { enabled: true, id, rate: 5, lostAfter: '5s' } }));
    await b.waitFor(/canary started/);
    await until("B received A's records", async () => ((await b.metric('eos_canary_records_total', { result: 'received' })) ?? 0) >= written.length, 60_000, { context: () => tails(b) });
    // Past lostAfter (5 s), so that a gap would be counted: checked throughout.
    await holds('no canary record counted lost', async () => (await b.metric('eos_canary_records_total', { result: 'lost' })) === 0, 7_000, { context: () => tails(b) });
    assert.equal(await b.metric('eos_canary_records_total', { result: 'duplicate' }), 0);
    await b.kill();
  });
});
