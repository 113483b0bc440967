import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILTIN_TRANSFORMS, RejectedRecord, resolveTransform, type InputRecord } from '../../../../src/pipeline/transforms/index.js';
import { isFencedError } from '../../../../src/pipeline/partition-task.js';
import { transformBatch } from '../../../../src/pipeline/transforms/route.js';
import { plainLogFields } from '../../../../src/kafka/client.js';
import { tempDirs } from '../../../harness/tmp.js';

const temp = tempDirs('eoswatch-transform-');

function rec(value: string | null, offset = '0'): InputRecord {
  return { topic: 't', partition: 0, offset, timestamp: '0', key: Buffer.from('k'), value: value === null ? null : Buffer.from(value), headers: {} };
}

describe('transforms', () => {
  test('increment adds 1 to value and keeps every other field', () => {
    const out = BUILTIN_TRANSFORMS.increment!(rec(JSON.stringify({ id: 'a', ts: 5, value: 41, run: 'r1', seq: 7 })));
    assert.ok(out && !Array.isArray(out));
    assert.deepEqual(JSON.parse(String(out.value)), { id: 'a', ts: 5, value: 42, run: 'r1', seq: 7 });
    assert.equal(String(out.key), 'k');
  });

  const rejects: [string, string | null, RegExp][] = [
    ['not JSON', '{oops', /value is not JSON/],
    ['an array', '[1,2]', /not a JSON object/],
    ['no id', JSON.stringify({ ts: 1, value: 1 }), /"id" missing/],
    ['empty id', JSON.stringify({ id: '', ts: 1, value: 1 }), /"id" missing/],
    ['ts not a number', JSON.stringify({ id: 'a', ts: 'now', value: 1 }), /"ts" missing/],
    ['value a string', JSON.stringify({ id: 'a', ts: 1, value: '1' }), /"value" missing or not an integer/],
    ['value fractional', JSON.stringify({ id: 'a', ts: 1, value: 1.5 }), /"value" missing or not an integer/],
    ['value at the safe limit', JSON.stringify({ id: 'a', ts: 1, value: Number.MAX_SAFE_INTEGER }), /cannot be incremented safely/],
    ['a tombstone', null, /null value/],
  ];
  for (const [name, value, reason] of rejects) {
    test(`increment rejects ${name}`, () => {
      assert.throws(() => BUILTIN_TRANSFORMS.increment!(rec(value)), (err: Error) => err instanceof RejectedRecord && reason.test(err.message));
    });
  }

  test('identity copies key, value and headers', () => {
    const r = { ...rec('x'), headers: { h: Buffer.from('v'), multi: ['a', 'b'] } };
    const out = BUILTIN_TRANSFORMS.identity!(r);
    assert.ok(out && !Array.isArray(out));
    assert.equal(String(out.value), 'x');
    assert.deepEqual(out.headers, { h: Buffer.from('v'), multi: 'b' });
  });

  test('transformBatch splits output and dead letters and keeps the order', async () => {
    const { out, dlq } = await transformBatch(
      [
        { offset: '10', timestamp: '0', key: null, value: Buffer.from(JSON.stringify({ id: 'a', ts: 1, value: 1 })) },
        { offset: '11', timestamp: '0', key: null, value: Buffer.from('garbage') },
        { offset: '12', timestamp: '0', key: null, value: Buffer.from(JSON.stringify({ id: 'b', ts: 1, value: 2 })) },
      ],
      { topic: 't', partition: 3 },
      BUILTIN_TRANSFORMS.increment!,
    );
    assert.deepEqual(out.map((o) => JSON.parse(String(o.value)).id), ['a', 'b']);
    assert.equal(dlq.length, 1);
    assert.equal(dlq[0]!.record.offset, '11');
    assert.match(dlq[0]!.reason, /value is not JSON/);
  });

  test('a transform that throws something else is a dead letter too, and may emit many or no records', async () => {
    const fn = (r: InputRecord) => {
      const v = String(r.value);
      if (v === 'boom') throw new TypeError('kaput');
      if (v === 'none') return null;
      return [{ value: `${v}1` }, { value: `${v}2` }];
    };
    const { out, dlq } = await transformBatch(
      ['a', 'boom', 'none'].map((v, i) => ({ offset: String(i), timestamp: '0', key: null, value: Buffer.from(v) })),
      { topic: 't', partition: 0 },
      fn,
    );
    assert.deepEqual(out.map((o) => o.value), ['a1', 'a2']);
    assert.deepEqual(dlq.map((d) => d.reason), ['transform threw: kaput']);
  });

  test('a user module is loaded from a path; missing or wrong modules are config errors naming the key', async () => {
    const dir = await temp.make();
    const good = join(dir, 'upper.mjs');
    await writeFile(good, 'export function transform(r) { return { key: r.key, value: String(r.value).toUpperCase() }; }\n');
    const fn = await resolveTransform('increment', good);
    assert.equal((fn(rec('abc')) as { value: string }).value, 'ABC');
    const dflt = join(dir, 'default.mjs');
    await writeFile(dflt, 'export default (r) => ({ value: "d" });\n');
    assert.equal(((await resolveTransform('identity', dflt))(rec('x')) as { value: string }).value, 'd');
    const none = join(dir, 'none.mjs');
    await writeFile(none, 'export const x = 1;\n');
    await assert.rejects(resolveTransform('identity', none), /pipeline\.transformModule: .*none\.mjs exports no function/);
    await assert.rejects(resolveTransform('identity', join(dir, 'missing.mjs')), /pipeline\.transformModule: cannot load/);
    await assert.rejects(resolveTransform('nope'), /unknown transform "nope"; expected one of: increment, identity/);
  });
});

describe('helpers', () => {
  test('isFencedError follows kafkajs error types and causes', () => {
    assert.equal(isFencedError(Object.assign(new Error('x'), { type: 'PRODUCER_FENCED' })), true);
    assert.equal(isFencedError(new Error('outer', { cause: Object.assign(new Error('inner'), { type: 'INVALID_PRODUCER_EPOCH' }) })), true);
    assert.equal(isFencedError(Object.assign(new Error('x'), { type: 'NOT_COORDINATOR' })), false);
    assert.equal(isFencedError(new Error('Connection error: ECONNREFUSED')), false);
  });

  test('kafkajs log fields are flattened: no Buffers reach pino', () => {
    const f = plainLogFields({ a: 1, b: 'x', buf: Buffer.from('abc'), arr: new Uint8Array(4), obj: { data: Buffer.from('zz'), n: 2 }, err: new Error('e') });
    assert.deepEqual(f, { a: 1, b: 'x', buf: '<3 bytes>', arr: '<4 bytes>', obj: '{"data":"<bytes>","n":2}', err: 'e' });
  });
});
