// The lag service against a real 1-node cluster: lag measured to the last stable offset ignores an
// open transaction that the high-watermark lag counts; aborted transactions end as no lag; a
// paused consumer's lag in seconds grows at about 1 s/s while its stuck clock runs; a deleted
// group loses its series.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Consumer, Producer } from 'kafkajs';
import { Registry } from 'prom-client';
import { createTopic, kafkaFor, uniqueName, until, useCluster } from '../harness/index.js';
import { LagService } from '../../src/lag/lag-service.js';
import { createLogger } from '../../src/log.js';

const INTERVAL_MS = 1000;

describe('consumer lag to the last stable offset (1-node cluster)', () => {
  const registry = new Registry();
  let service: LagService | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  // Registered before the cluster's own hook, so clients close while the cluster is still up.
  after(async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    await service?.stop();
  });
  const h = useCluster({ nodes: 1 });
  const prefix = uniqueName('lagt');

  before(async () => {
    service = new LagService(kafkaFor(h.cluster.brokers), { enabled: true, groups: [`/^${prefix}-/`], topics: [], interval: INTERVAL_MS }, {
      logger: createLogger('silent'),
      registry,
      fatal: () => undefined,
    });
    await service.start();
  });

  /** The value of a lag metric for a group's partition, or undefined when it has no series. */
  const value = async (metric: string, labels: Record<string, string>): Promise<number | undefined> => {
    const m = registry.getSingleMetric(metric);
    const values = (await m?.get())?.values ?? [];
    return values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
  };
  const txProducer = async (): Promise<Producer> => {
    const p = kafkaFor(h.cluster.brokers).producer({ transactionalId: uniqueName(`${prefix}-tx`), idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    closers.push(() => p.disconnect());
    return p;
  };
  const commitRecords = async (p: Producer, topic: string, n: number, tag = 'c'): Promise<void> => {
    const t = await p.transaction();
    await t.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ partition: 0, value: `${tag}-${i}` })) });
    await t.commit();
  };
  const readCommittedConsumer = async (group: string, topic: string): Promise<{ consumer: Consumer; received: () => number }> => {
    const consumer = kafkaFor(h.cluster.brokers).consumer({ groupId: group, readUncommitted: false, maxWaitTimeInMs: 200 });
    await consumer.connect();
    closers.push(() => consumer.disconnect());
    await consumer.subscribe({ topic, fromBeginning: true });
    let received = 0;
    await consumer.run({ eachMessage: async () => void received++ });
    return { consumer, received: () => received };
  };

  test('a read_committed consumer behind an open transaction has LSO lag 0 while its HW lag counts the transaction; the aborted transaction never becomes lag', async () => {
    const topic = `${prefix}-open`;
    const group = `${prefix}-open-g`;
    await createTopic(h.cluster.brokers, topic, 1, 1);
    const committer = await txProducer();
    await commitRecords(committer, topic, 20);
    const holder = await txProducer();
    const open = await holder.transaction();
    await open.send({ topic, messages: Array.from({ length: 30 }, (_, i) => ({ partition: 0, value: `open-${i}` })) });

    const c = await readCommittedConsumer(group, topic);
    const labels = { group, topic, partition: '0' };
    // Several readings in a row agree: the open transaction's 30 records are HW lag, not LSO lag.
    let agreeing = 0;
    // kafkajs consumers commit before a trailing commit marker (20), Java consumers past it (21):
    // either way there is nothing to read below the LSO (21), and the HW (51) is 30 or 31 ahead.
    await until('LSO lag 0 and HW lag 30+ in 3 readings', async () => {
      const [lso, hw, secs, stuck, committed] = await Promise.all(
        ['eos_consumer_lag_records', 'eos_consumer_hw_lag_records', 'eos_consumer_lag_seconds', 'eos_consumer_group_stuck_seconds', 'eos_consumer_committed_offset'].map((m) => value(m, labels)),
      );
      agreeing = lso === 0 && committed !== undefined && committed >= 20 && hw === 51 - committed && secs === 0 && stuck === 0 ? agreeing + 1 : 0;
      return agreeing >= 3;
    }, 60_000, { intervalMs: INTERVAL_MS });
    assert.equal(c.received(), 20);
    assert.equal(await value('eos_consumer_group_state', { group, state: 'Stable' }), 1);
    assert.equal(await value('eos_consumer_group_state', { group, state: 'Empty' }), 0);
    assert.equal(await value('eos_consumer_group_members', { group }), 1);

    // Aborted: the 30 records and the abort marker (offsets 21..51) hold nothing to read. The LSO
    // moves to the HW (52); nothing remains as lag, in records or seconds, in several readings in a
    // row, even for a consumer that keeps its committed offset before the markers (kafkajs does,
    // and then the HW lag counts the aborted transaction forever).
    await open.abort();
    agreeing = 0;
    await until('no lag after the abort in 3 readings', async () => {
      const [lso, hw, secs, stuck, committed] = await Promise.all(
        ['eos_consumer_lag_records', 'eos_consumer_hw_lag_records', 'eos_consumer_lag_seconds', 'eos_consumer_group_stuck_seconds', 'eos_consumer_committed_offset'].map((m) => value(m, labels)),
      );
      agreeing = lso === 0 && secs === 0 && stuck === 0 && committed !== undefined && committed >= 20 && hw === 52 - committed ? agreeing + 1 : 0;
      return agreeing >= 3;
    }, 60_000, { intervalMs: INTERVAL_MS });
    assert.equal(c.received(), 20, 'no aborted record was delivered');
  });

  test('a paused consumer: lag in seconds grows at about 1 s/s and the stuck clock rises', async () => {
    const topic = `${prefix}-paused`;
    const group = `${prefix}-paused-g`;
    await createTopic(h.cluster.brokers, topic, 1, 1);
    const p = await txProducer();
    await commitRecords(p, topic, 10);
    const c = await readCommittedConsumer(group, topic);
    const labels = { group, topic, partition: '0' };
    await until('caught up', async () => (await value('eos_consumer_committed_offset', labels))! >= 10 && (await value('eos_consumer_lag_records', labels)) === 0);
    const pausedAt = (await value('eos_consumer_committed_offset', labels))!;
    c.consumer.pause([{ topic }]);
    // New committed records keep arriving while the consumer does not move.
    let producing = true;
    const writer = (async () => {
      for (let i = 0; producing; i++) {
        await commitRecords(p, topic, 5, `w${i}`);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    closers.push(async () => {
      producing = false;
      await writer;
    });
    const first = await until('lag in seconds above 1 s', async () => {
      const s = await value('eos_consumer_lag_seconds', labels);
      return s !== undefined && s > 1 ? { at: Date.now(), secs: s } : undefined;
    });
    // At least 10 s of wall time later, 10 readings on.
    const last = await until('a reading 10 s after the first', async () => {
      const s = await value('eos_consumer_lag_seconds', labels);
      const at = Date.now();
      return at - first.at >= 10_000 && s !== undefined && s > first.secs ? { at, secs: s } : undefined;
    }, 70_000);
    producing = false;
    await writer;
    const wall = (last.at - first.at) / 1000;
    const grown = last.secs - first.secs;
    // Each value is off by at most one reading interval, and each is up to one interval old.
    const slack = (4 * INTERVAL_MS) / 1000;
    assert.ok(Math.abs(grown - wall) <= slack, `lag grew ${grown.toFixed(2)} s in ${wall.toFixed(2)} s of wall time`);
    const stuck = (await value('eos_consumer_group_stuck_seconds', labels))!;
    assert.ok(stuck >= wall - slack, `stuck ${stuck} s after ${wall} s`);
    assert.ok((await value('eos_consumer_lag_records', labels))! > 0);
    assert.equal(await value('eos_consumer_committed_offset', labels), pausedAt, 'the paused consumer did not commit');
  });

  test('a deleted group loses its series', async () => {
    const topic = `${prefix}-del`;
    const group = `${prefix}-del-g`;
    await createTopic(h.cluster.brokers, topic, 2, 1);
    const p = await txProducer();
    await commitRecords(p, topic, 5);
    const c = await readCommittedConsumer(group, topic);
    await until('series of the group', async () => (await value('eos_consumer_committed_offset', { group, topic, partition: '0' })) !== undefined);
    await c.consumer.disconnect();
    await until('the group is Empty after its member left', async () => (await value('eos_consumer_group_state', { group, state: 'Empty' })) === 1);
    assert.equal(await value('eos_consumer_lag_records', { group, topic, partition: '0' }), 0, 'an Empty group keeps its lag series: a stopped consumer still lags');
    const admin = kafkaFor(h.cluster.brokers).admin();
    await admin.connect();
    closers.push(() => admin.disconnect());
    await admin.deleteGroups([group]);
    await until('no series of the deleted group', async () => {
      for (const m of ['eos_consumer_lag_records', 'eos_consumer_hw_lag_records', 'eos_consumer_lag_seconds', 'eos_consumer_group_stuck_seconds', 'eos_consumer_committed_offset', 'eos_consumer_group_members', 'eos_consumer_group_state']) {
        if ((await value(m, { group })) !== undefined) return false;
      }
      return true;
    });
  });
});
