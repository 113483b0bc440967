// src/kafka/kafkajs-patches.ts on kafkajs' real RequestQueue: an idle queue arms no timer (kafkajs
// 2.2.4 re-armed a 1 ms one forever), and waiting requests are still sent: when an in-flight slot
// frees up, and when a client-side throttle ends.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { patchKafkajs } from '../../../src/kafka/kafkajs-patches.js';
import '../../../src/kafka/client.js';
import { holds, until } from '../../harness/wait.js';

const require = createRequire(import.meta.url);

interface Queue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  push(r: { entry: { correlationId: number; resolve(x: unknown): void; reject(e: unknown): void }; expectResponse: boolean; sendRequest(): void }): void;
  fulfillRequest(r: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
  destroy(): void;
}

const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (opts: object) => Queue;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function queue(maxInFlightRequests: number | null): Queue {
  return new RequestQueue({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'localhost:9092', logger: silent });
}

/** Pushes a request; `sent` lists the correlation ids handed to the socket, in order. */
function push(q: Queue, id: number, sent: number[]): Promise<unknown> {
  return new Promise((resolve, reject) => q.push({ entry: { correlationId: id, resolve, reject }, expectResponse: true, sendRequest: () => sent.push(id) }));
}

describe('kafkajs RequestQueue, patched', () => {
  test('the patch is applied when kafkajs clients are built (src/kafka/client.ts)', () => {
    assert.equal(patchKafkajs(), true);
  });

  test('a response with nothing pending leaves no timer armed', async () => {
    const q = queue(null);
    const sent: number[] = [];
    const done = push(q, 1, sent);
    assert.deepEqual(sent, [1]);
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    await done;
    assert.equal(q.throttleCheckTimeoutId, null, 'kafkajs 2.2.4 armed a 1 ms timer here, and again each time it fired');
    q.destroy();
  });

  test('a request waiting for an in-flight slot is sent when the slot frees up', async () => {
    const q = queue(1);
    const sent: number[] = [];
    const first = push(q, 1, sent);
    const second = push(q, 2, sent);
    assert.deepEqual(sent, [1]);
    assert.equal(q.pending.length, 1);
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    await first;
    assert.deepEqual(sent, [1, 2]);
    q.fulfillRequest({ correlationId: 2, payload: Buffer.alloc(0), size: 0 });
    await second;
    assert.equal(q.pending.length, 0);
    // The check armed while request 2 waited fires once, finds nothing and arms no other.
    await until('the last check ran', () => q.throttleCheckTimeoutId === null, 5000, { intervalMs: 5 });
    await holds('no other check armed', () => q.throttleCheckTimeoutId === null, 30, { intervalMs: 5 });
    q.destroy();
  });

  test('a request queued during a client-side throttle is sent when the throttle ends', async () => {
    const q = queue(null);
    const sent: number[] = [];
    q.maybeThrottle(100);
    const t0 = Date.now();
    const r = push(q, 7, sent);
    assert.deepEqual(sent, [], 'held back while throttled');
    assert.notEqual(q.throttleCheckTimeoutId, null, 'a check is armed for the end of the throttle');
    await until('the throttled request was sent', () => sent.length === 1, 5000, { intervalMs: 5 });
    assert.ok(Date.now() - t0 >= 90, 'not before the throttle ended');
    q.fulfillRequest({ correlationId: 7, payload: Buffer.alloc(0), size: 0 });
    await r;
    assert.equal(q.throttleCheckTimeoutId, null);
    q.destroy();
  });
});
