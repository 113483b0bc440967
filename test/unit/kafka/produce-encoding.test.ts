// The produce request encoding (src/kafka/produce-encoding.ts) against kafkajs 2.2.4's own v3
// request, loaded from its file beside the replacement in the module cache: the same bytes for
// generated requests, kafkajs' own path (and errors) for what the fast path leaves to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import {
  crc32c,
  encodeProduceRequest,
  installProduceEncoding,
  kafkajsProduceRequestV3,
  produceEncoding,
  type ProduceArgs,
  type ProduceMessage,
} from '../../../src/kafka/produce-encoding.js';
import { loadOriginal } from '../../../src/kafka/module-cache.js';

const require = createRequire(import.meta.url);
const V3 = require.resolve('kafkajs/src/protocol/requests/produce/v3/request.js');
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: unknown): unknown; fromInt(v: number): unknown };
const kafkajsCrc32C = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;
const NOW = 1_764_000_000_123;

/**
 * kafkajs' bytes for a request, Date.now fixed (kafkajs reads it for batches without timestamps).
 * Only for uncompressed requests: their encode() waits for nothing but promises already resolved,
 * so no other code runs while the clock stands still (gzip's would).
 */
async function kafkajsBytes(args: ProduceArgs): Promise<Buffer> {
  const realNow = Date.now;
  if (args.compression === undefined || args.compression === 0) Date.now = () => NOW;
  try {
    const encoder = (await kafkajsProduceRequestV3(args).encode()) as unknown as { buffer: Buffer };
    return Buffer.from(encoder.buffer);
  } finally {
    Date.now = realNow;
  }
}

// A small deterministic generator, so a failure names a reproducible case.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const TEXTS = ['', 'a', 'key-1', 'ünïcødé ☃', '𝄞 clef', 'x'.repeat(130), 'y'.repeat(20_000), '\ud800 lone'];

function generate(seed: number): ProduceArgs {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const bytes = (): Buffer | string | null | undefined => {
    const c = r();
    if (c < 0.1) return null;
    if (c < 0.15) return undefined;
    if (c < 0.5) return pick(TEXTS);
    return Buffer.from(Array.from({ length: Math.floor(r() * (r() < 0.1 ? 3000 : 200)) }, () => Math.floor(r() * 256)));
  };
  const base = 1_700_000_000_000 + Math.floor(r() * 1e9);
  const timestamp = (): unknown =>
    pick<unknown>([
      undefined,
      null,
      () => String(base + Math.floor(r() * 10_000)),
      () => base + Math.floor(r() * 10_000),
      () => String(Math.floor(r() * 1000)), // shorter strings: sorted as strings, negative deltas
      () => 0,
      () => '9007199254740993000', // a delta beyond the fast arithmetic
      () => -base,
    ]);
  const message = (): ProduceMessage => {
    const m: ProduceMessage = { key: bytes(), value: bytes() };
    const t = timestamp();
    const ts = typeof t === 'function' ? (t as () => unknown)() : t;
    if (ts !== undefined || r() < 0.5) m.timestamp = ts;
    const h = r();
    if (h < 0.2) m.headers = {};
    else if (h < 0.5) {
      const headers: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 4); i >= 0; i--) {
        const key = pick(['trace', 'ünï', 'k' + i, '']);
        headers[key] = r() < 0.3 ? Array.from({ length: Math.floor(r() * 3) }, () => pick([pick(TEXTS), Buffer.from([1, 2, 3])])) : pick([pick(TEXTS), Buffer.from('v')]);
      }
      m.headers = headers;
    }
    return m;
  };
  const sameTimestamps = r() < 0.3; // the pipeline's common case: every message has one, numeric strings of one length
  const partitions = () =>
    Array.from({ length: 1 + Math.floor(r() * 3) }, (_, p) => ({
      partition: p * 2 + Math.floor(r() * 2),
      ...(r() < 0.8 ? { firstSequence: Math.floor(r() * 2 ** 31) } : {}),
      messages: Array.from({ length: r() < 0.05 ? 0 : Math.floor(r() * (r() < 0.1 ? 600 : 40)) }, () => {
        const m = message();
        if (sameTimestamps) m.timestamp = String(base + Math.floor(r() * 5000));
        return m;
      }),
    }));
  const transactional = r() < 0.6;
  return {
    acks: pick([-1, 1, 0]),
    timeout: pick([30_000, 5_000]),
    ...(transactional ? { transactionalId: pick(['eos-pipeline-0', 'ünï-txn', '']) } : r() < 0.5 ? { transactionalId: null } : {}),
    ...(r() < 0.8 ? { producerId: pick([Long.fromValue('123456789012'), 42, '987654321', Long.fromInt(-1), Long.fromValue('9223372036854775807')]) } : {}),
    ...(r() < 0.8 ? { producerEpoch: Math.floor(r() * 32_000) } : {}),
    ...(r() < 0.2 ? { compression: 0 } : {}),
    topicData: Array.from({ length: 1 + Math.floor(r() * 2) }, (_, t) => ({ topic: pick(['sink', `out-${t}`, 'ünï']), partitions: partitions() })),
  };
}

test('CRC32C by slicing-by-8 equals kafkajs\' byte-at-a-time CRC32C (every length 0-70, offsets, 1 MiB)', () => {
  const r = rng(7);
  const data = Buffer.from(Array.from({ length: 1 << 20 }, () => Math.floor(r() * 256)));
  for (let length = 0; length <= 70; length++) {
    for (const start of [0, 1, 3, 8, 13]) {
      assert.equal(crc32c(data, start, start + length), kafkajsCrc32C(data.subarray(start, start + length)), `length ${length} at ${start}`);
    }
  }
  assert.equal(crc32c(data), kafkajsCrc32C(data));
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283, 'the CRC-32C check value');
});

test('encodes the same bytes as kafkajs 2.2.4\'s produce v3 request (300 generated requests)', async () => {
  let fast = 0;
  let records = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const args = generate(seed);
    const mine = encodeProduceRequest(args, () => NOW);
    const theirs = await kafkajsBytes(args).catch((e: Error) => e);
    if (mine === null) {
      // Left to kafkajs only for input it refuses in these generated requests.
      assert.ok(theirs instanceof Error, `seed ${seed}: left to kafkajs, which encoded it`);
      continue;
    }
    assert.ok(Buffer.isBuffer(theirs), `seed ${seed}: kafkajs refused what the fast path encoded: ${String(theirs)}`);
    assert.ok(mine.equals(theirs), `seed ${seed}: bytes differ (${mine.length} against ${theirs.length})`);
    fast++;
    records += args.topicData.reduce((n, t) => n + t.partitions.reduce((k, p) => k + p.messages.length, 0), 0);
  }
  assert.ok(fast >= 220, `most generated requests take the fast path (${fast} of 300)`);
  assert.ok(records > 5_000, `${records} records compared`);
});

test('the pipeline\'s sends: transactional, idempotent, Buffer keys and values, string timestamps', async () => {
  const messages = Array.from({ length: 5000 }, (_, i) => ({
    key: Buffer.from(`id-${i}`),
    value: Buffer.from(JSON.stringify({ id: i, value: i * 3, pad: 'p'.repeat(i % 90) })),
    timestamp: String(1_764_000_000_000 + i),
    headers: i % 7 === 0 ? { origin: Buffer.from('src') } : undefined,
  }));
  const args: ProduceArgs = {
    acks: -1,
    timeout: 30_000,
    transactionalId: 'eos-p-3',
    producerId: Long.fromValue('4001'),
    producerEpoch: 7,
    topicData: [{ topic: 'sink', partitions: [{ partition: 3, firstSequence: 120_000, messages }] }],
  };
  const mine = encodeProduceRequest(args, () => NOW)!;
  assert.ok(mine, 'the fast path takes it');
  assert.ok(mine.equals(await kafkajsBytes(args)));
  // The batch's fields where a reader of the record batch finds them.
  const batch = 2 + 'eos-p-3'.length + 2 + 4 + 4 + 2 + 'sink'.length + 4 + 4 + 4;
  assert.equal(mine.readBigInt64BE(batch + 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8), 4001n, 'producer id');
  assert.equal(mine.readInt16BE(batch + 21) & 16, 16, 'the transactional attribute');
  assert.equal(mine.readUInt32BE(batch + 17), crc32c(mine, batch + 21, mine.length), 'CRC over attributes to the end');
});

test('left to kafkajs: compression, other value types, refused input; the replacement then gives kafkajs\' bytes or error', async () => {
  const replacement = require(V3) as typeof kafkajsProduceRequestV3;
  assert.notEqual(replacement, kafkajsProduceRequestV3);
  const messages = [{ key: 'k', value: 'v', timestamp: '1764000000000' }];
  const one = (over: Partial<ProduceArgs>, m: ProduceMessage[] = messages): ProduceArgs => ({
    acks: -1,
    timeout: 1000,
    transactionalId: 't',
    topicData: [{ topic: 'sink', partitions: [{ partition: 0, firstSequence: 0, messages: m }] }],
    ...over,
  });
  const viaReplacement = async (args: ProduceArgs) => Buffer.from(((await replacement(args).encode()) as unknown as { buffer: Buffer }).buffer);
  const gzip = one({ compression: 1 });
  assert.equal(encodeProduceRequest(gzip), null);
  assert.ok((await viaReplacement(gzip)).equals(await kafkajsBytes(gzip)), 'gzip: kafkajs\' compressed batch');
  const uint8 = one({}, [{ key: new Uint8Array([1, 2]), value: 'v', timestamp: '1764000000000' }]);
  assert.equal(encodeProduceRequest(uint8), null, 'a Uint8Array that is not a Buffer');
  assert.ok((await viaReplacement(uint8)).equals(await kafkajsBytes(uint8)));
  for (const [name, args] of [
    ['a number header value', one({}, [{ value: 'v', headers: { n: 5 } }])],
    ['null headers', one({}, [{ value: 'v', headers: null }])],
    ['a timestamp that is no integer', one({}, [{ value: 'v', timestamp: '1.5e12' }])],
    ['a null message', one({}, [null as unknown as ProduceMessage])],
  ] as const) {
    assert.equal(encodeProduceRequest(args), null, name);
    const theirs = await kafkajsBytes(args).then(
      () => assert.fail(`${name}: kafkajs encoded it`),
      (e: Error) => e,
    );
    await assert.rejects(viaReplacement(args), { name: theirs.name, message: theirs.message }, name);
  }
});

test('the replacement keeps kafkajs\' request fields and encodes through the fast path', async () => {
  const replacement = require(V3) as typeof kafkajsProduceRequestV3;
  const args: ProduceArgs = { acks: 0, timeout: 5, topicData: [{ topic: 't', partitions: [{ partition: 1, messages: [{ value: Buffer.from('x') }] }] }] };
  const mine = replacement(args);
  const theirs = kafkajsProduceRequestV3(args);
  assert.deepEqual([mine.apiKey, mine.apiVersion, mine.apiName, mine.expectResponse()], [theirs.apiKey, theirs.apiVersion, theirs.apiName, theirs.expectResponse()]);
  const encoded = (await mine.encode()) as unknown as { buf: Buffer; offset: number; size(): number };
  assert.equal(encoded.size(), encoded.buf.length, 'one Buffer, exactly the request body');
});

test('kafkajs\' produce v4-v7 requests encode through the replacement (preloaded, as src/cli.ts does)', async () => {
  assert.equal(produceEncoding, true);
  const v7 = require('kafkajs/src/protocol/requests/produce/v7/request.js') as typeof kafkajsProduceRequestV3;
  const args: ProduceArgs = { acks: -1, timeout: 5, transactionalId: 'x', topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [{ value: 'a', timestamp: '5' }] }] }] };
  const request = v7(args);
  assert.equal(request.apiVersion, 7);
  const encoded = (await request.encode()) as unknown as { buf: Buffer; offset: number };
  assert.equal(encoded.offset, encoded.buf.length, 'the fast path\'s single Buffer (kafkajs\' Encoder over-allocates)');
  assert.ok(Buffer.from(encoded.buf).equals(await kafkajsBytes(args)));
});

test('installProduceEncoding goes where produce v4 requires v3, and refuses once that is loaded', () => {
  const fake = (loaded: Record<string, unknown>) => ({ resolve: ((id: string) => `/deps/${id}`) as NodeJS.RequireResolve, cache: loaded as NodeJS.Require['cache'] });
  const early = fake({});
  installProduceEncoding(early);
  assert.equal(typeof early.cache['/deps/kafkajs/src/protocol/requests/produce/v3/request.js']?.exports, 'function');
  const late = fake({ '/deps/kafkajs/src/protocol/requests/produce/v4/request.js': { exports: {} } });
  assert.throws(() => installProduceEncoding(late), /^Error: src\/kafka\/produce-encoding\.ts was imported after kafkajs was loaded/);
});

test('loadOriginal compiles a fresh instance from the file, whatever the cache holds', () => {
  const a = loadOriginal(require, 'kafkajs/src/protocol/requests/produce/v3/request.js');
  assert.equal(typeof a, 'function');
  assert.notEqual(a, kafkajsProduceRequestV3);
  assert.notEqual(a, require(V3));
});
