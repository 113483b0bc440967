// sendPerPartition on a recording sender: one request per partition, records in their order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from 'kafkajs';
import { sendPerPartition } from '../../../src/kafka/send.js';

type Request = { topic: string; messages: Message[]; acks?: number };

function recorder(fail?: (r: Request) => Error | undefined) {
  const requests: Request[] = [];
  return {
    requests,
    async send(r: Request): Promise<unknown> {
      requests.push(r);
      const e = fail?.(r);
      if (e) throw e;
      return [...new Set(r.messages.map((x) => x.partition))].map((partition) => ({ topicName: r.topic, partition, errorCode: 0, baseOffset: '0' }));
    },
  };
}

const m = (partition: number | undefined, value: string): Message => ({ partition, value });
const values = (r: Request) => r.messages.map((x) => x.value);

test('one request per partition, partitions in order of first appearance, records in their order, acks=all', async () => {
  const s = recorder();
  await sendPerPartition(s, 'sink', [m(2, 'a'), m(0, 'b'), m(2, 'c'), m(1, 'd'), m(0, 'e'), m(2, 'f')]);
  assert.deepEqual(
    s.requests.map((r) => ({ topic: r.topic, acks: r.acks, partitions: [...new Set(r.messages.map((x) => x.partition))], values: values(r) })),
    [
      { topic: 'sink', acks: -1, partitions: [2], values: ['a', 'c', 'f'] },
      { topic: 'sink', acks: -1, partitions: [0], values: ['b', 'e'] },
      { topic: 'sink', acks: -1, partitions: [1], values: ['d'] },
    ],
  );
});

test('the messages are passed on whole (keys, headers, timestamps kept)', async () => {
  const s = recorder();
  const msg: Message = { partition: 3, key: 'k', value: 'v', headers: { h: '1' }, timestamp: '42' };
  await sendPerPartition(s, 't', [msg]);
  assert.deepEqual(s.requests, [{ topic: 't', messages: [msg], acks: -1 }]);
});

test('a message without a partition is refused before anything is sent', async () => {
  const s = recorder();
  await assert.rejects(sendPerPartition(s, 'sink', [m(0, 'a'), m(undefined, 'b')]), /sendPerPartition: a message for sink has no partition/);
  assert.equal(s.requests.length, 0);
});

test('nothing to send: no request', async () => {
  const s = recorder();
  await sendPerPartition(s, 'sink', []);
  assert.equal(s.requests.length, 0);
});

test('requests go one after another, and a failed one stops the rest (the caller sees the error)', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  const sender = {
    async send(r: Request): Promise<unknown> {
      inFlight++;
      most = Math.max(most, inFlight);
      seen.push(r.messages[0]!.partition!);
      await new Promise<void>((resolve) => setImmediate(resolve));
      inFlight--;
      if (r.messages[0]!.partition === 1) throw new Error('leader moved');
      return [{ topicName: r.topic, partition: r.messages[0]!.partition, errorCode: 0 }];
    },
  };
  await assert.rejects(sendPerPartition(sender, 'sink', [m(0, 'a'), m(1, 'b'), m(2, 'c')]), /leader moved/);
  assert.equal(most, 1, 'never two requests at once');
  assert.deepEqual(seen, [0, 1], 'partition 2 is not sent after partition 1 failed');
});

test('a send resolved without the broker acknowledging its partition fails (kafkajs skips a partition missing from its metadata)', async () => {
  const silent = { send: async () => [] as unknown };
  await assert.rejects(sendPerPartition(silent, 'sink', [m(4, 'a')]), { code: 'EOS_KAFKA_REQUEST_FAILED', message: /^the send to sink partition 4 was not acknowledged by the broker/ });
  const other = { send: async () => [{ topicName: 'sink', partition: 5, errorCode: 0 }] as unknown };
  await assert.rejects(sendPerPartition(other, 'sink', [m(4, 'a')]), /partition 4 was not acknowledged/);
  const wrongTopic = { send: async () => [{ topicName: 'other', partition: 4, errorCode: 0 }] as unknown };
  await assert.rejects(sendPerPartition(wrongTopic, 'sink', [m(4, 'a')]), /partition 4 was not acknowledged/);
  const errored = { send: async () => [{ topicName: 'sink', partition: 4, errorCode: 6 }] as unknown };
  await assert.rejects(sendPerPartition(errored, 'sink', [m(4, 'a')]), /partition 4 was not acknowledged/);
  const notArray = { send: async () => undefined as unknown };
  await assert.rejects(sendPerPartition(notArray, 'sink', [m(4, 'a')]), /partition 4 was not acknowledged/);
  const ok = { send: async () => [{ topicName: 'sink', partition: 4, errorCode: 0, baseOffset: '17' }] as unknown };
  await sendPerPartition(ok, 'sink', [m(4, 'a')]);
  const noCode = { send: async () => [{ topicName: 'sink', partition: 4 }] as unknown };
  await sendPerPartition(noCode, 'sink', [m(4, 'a')]);
});
