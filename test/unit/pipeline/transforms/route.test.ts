import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { flatHeaders, planBatch, routeMessages, transformBatch, validOutputs, type BatchRecord, type RouteTarget } from '../../../../src/pipeline/transforms/route.js';
import { WorkerTransformer } from '../../../../src/pipeline/transforms/worker.js';
import { createLogger } from '../../../../src/log.js';

const silent = createLogger('silent');
const source = { topic: 'in', partition: 2 };

function batch(...values: string[]): BatchRecord[] {
  return values.map((v, i) => ({ offset: String(100 + i), timestamp: '0', key: Buffer.from(`k${i}`), value: Buffer.from(v), headers: {} }));
}

let dir: string;
async function moduleFile(name: string, code: string): Promise<string> {
  dir ??= await mkdtemp(join(tmpdir(), 'eoswatch-transform-'));
  const f = join(dir, name);
  await writeFile(f, code);
  return f;
}
after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

/** What a transform module returns for a record whose value says which case to play. */
const CASES = `
export async function slow(v) { return v; }
export function transform(r) {
  const v = String(r.value);
  switch (v) {
    case 'number-value': return { value: 12345 };
    case 'no-value': return { foo: 1 };
    case 'string': return 'just a string';
    case 'array-of-numbers': return [1, 2];
    case 'object-value': return { value: { nested: true } };
    case 'async-ok': return slow({ key: 'a', value: Buffer.from('async') });
    case 'async-bad': return slow({ value: 7 });
    case 'async-reject': return Promise.reject(new Error('nope'));
    case 'never': return new Promise(() => {});
    case 'throw-null': throw null;
    case 'throw-string': throw 'just text';
    case 'throw-object': throw { code: 42 };
    case 'loop': for (;;) {}
    case 'bad-header': return { value: 'x', headers: { h: 5 } };
    case 'function-value': return { value: () => 1 };
    case 'many': return [{ value: 'm1' }, { key: Buffer.from('kk'), value: 'm2', headers: { h: 'v' } }];
    case 'none': return null;
    default: return { key: r.key, value: v.toUpperCase() };
  }
}
`;

const BAD: [string, RegExp][] = [
  ['number-value', /^result: value is a number; expected a Buffer, a string or null$/],
  ['no-value', /^result has unknown field foo/],
  ['string', /^result is a string; expected an object/],
  ['array-of-numbers', /^result\[0\] is a number; expected an object/],
  ['object-value', /^result: value is an object; expected a Buffer, a string or null$/],
  ['async-bad', /^result: value is a number/],
  ['async-reject', /^transform threw: nope$/],
  ['never', /^transform timed out: no result within 300 ms/],
  ['throw-null', /^transform threw a non-Error value: null$/],
  ['throw-string', /^transform threw a non-Error value: just text$/],
  ['throw-object', /^transform threw a non-Error value: \{"code":42\}$/],
  ['bad-header', /^result: header "h" is a number; expected a Buffer or a string$/],
];

describe('transform routing (in-process)', () => {
  test('every bad result or throw goes to the dead-letter list with its reason; good records around it are kept in order', async () => {
    const { transform } = (await import(await moduleFile('cases.mjs', CASES))) as { transform: (r: unknown) => unknown };
    const names = BAD.map(([n]) => n);
    const { out, dlq } = await transformBatch(batch('a', ...names, 'async-ok', 'many', 'none', 'b'), source, transform as never, 300);
    assert.deepEqual(out.map((o) => String(o.value)), ['A', 'async', 'm1', 'm2', 'B']);
    assert.deepEqual(dlq.map((d) => String(d.record.value)), names);
    for (const [i, [name, reason]] of BAD.entries()) assert.match(dlq[i]!.reason, reason, name);
  });

  test('validOutputs accepts the documented shapes only', () => {
    assert.deepEqual(validOutputs(undefined), []);
    assert.deepEqual(validOutputs({ value: null }), [{ key: null, value: null }]);
    assert.deepEqual(validOutputs([{ key: 'k', value: Buffer.from('v'), headers: { a: 'b' } }]), [{ key: 'k', value: Buffer.from('v'), headers: { a: 'b' } }]);
    assert.throws(() => validOutputs({ value: 'x', key: 5 }), /key is a number/);
    assert.throws(() => validOutputs(Buffer.from('x')), /result is a Buffer/);
  });
});

describe('batch planning: which records enter the transaction', () => {
  const at = (...offsets: number[]): BatchRecord[] => offsets.map((o) => ({ offset: String(o), timestamp: '0', key: null, value: Buffer.from(String(o)) }));
  const offsets = (p: ReturnType<typeof planBatch>) => (p.kind === 'process' ? p.records.map((r) => Number(r.offset)) : []);

  test('a batch fetched from the position is processed whole; the position moves past its last offset', () => {
    const p = planBatch(at(10, 11, 12), { fetched: 10n, last: 12n }, 10n);
    assert.deepEqual([p.kind, offsets(p), p.kind === 'process' && p.next], ['process', [10, 11, 12], 13n]);
  });

  test('records before the position (re-delivered after a seek or a rebalance) are left out', () => {
    const p = planBatch(at(8, 9, 10, 11), { fetched: 8n, last: 11n }, 10n);
    assert.deepEqual([offsets(p), p.kind === 'process' && p.next], [[10, 11], 12n]);
  });

  test('trailing control records are stepped over: the position moves to the end of the batch', () => {
    const p = planBatch(at(10, 11), { fetched: 10n, last: 14n }, 10n);
    assert.deepEqual([offsets(p), p.kind === 'process' && p.next], [[10, 11], 15n]);
  });

  test('a batch that starts past the position is a gap, even if a record in it is at the position', () => {
    assert.deepEqual(planBatch(at(11, 12), { fetched: 11n, last: 12n }, 10n), { kind: 'gap' });
    assert.deepEqual(planBatch(at(10, 11), { fetched: 11n, last: 11n }, 10n), { kind: 'gap' });
    assert.equal(planBatch(at(10), { fetched: 10n, last: 10n }, 10n).kind, 'process', 'fetched at the position is no gap');
  });

  test('nothing new: skipped, the position moves past control records but never back', () => {
    assert.deepEqual(planBatch([], { fetched: 10n, last: 12n }, 10n), { kind: 'skip', next: 13n });
    assert.deepEqual(planBatch(at(5, 6), { fetched: 5n, last: 6n }, 10n), { kind: 'skip', next: 10n });
    assert.deepEqual(planBatch([], { fetched: 9n, last: 9n }, 10n), { kind: 'skip', next: 10n });
  });
});

describe('routed records as messages', () => {
  const target = (partitioning: 'input' | 'key'): RouteTarget => ({
    pipeline: 'orders',
    source: { topic: 'in', partition: 7 },
    sink: { topic: 'out', partitions: 4, partitioning },
    dlq: { topic: 'out.dlq', partitions: 2 },
  });
  const rec: BatchRecord = { offset: '42', timestamp: '0', key: Buffer.from('k'), value: Buffer.from('bad'), headers: { trace: ['a', 'b'], one: Buffer.from('x'), gone: undefined } };

  test('input partitioning: every output to the source partition mod the sink partitions, key null when absent', () => {
    const msgs = routeMessages({ out: [{ value: 'a' }, { key: 'k2', value: 'b', headers: { h: '1' } }], dlq: [] }, target('input'), () => assert.fail('no key partitioner for input partitioning'));
    assert.deepEqual(msgs, [
      {
        topic: 'out',
        messages: [
          { key: null, value: 'a', headers: undefined, partition: 3 },
          { key: 'k2', value: 'b', headers: { h: '1' }, partition: 3 },
        ],
      },
    ]);
  });

  test('key partitioning: each output to the partition its key hashes to', () => {
    const seen: string[] = [];
    const msgs = routeMessages({ out: [{ key: 'x', value: '1' }, { key: 'yy', value: '2' }], dlq: [] }, target('key'), (topic, m) => {
      seen.push(`${topic}:${String(m.key)}`);
      return String(m.key).length;
    });
    assert.deepEqual(seen, ['out:x', 'out:yy']);
    assert.deepEqual(msgs[0]!.messages.map((m) => [m.key, m.partition]), [['x', 1], ['yy', 2]]);
  });

  test('dead letters keep key, value and headers (last of a repeated one) and say why and where from', () => {
    const msgs = routeMessages({ out: [], dlq: [{ record: rec, reason: 'value is not JSON' }] }, target('input'), () => 0);
    assert.deepEqual(msgs, [
      {
        topic: 'out.dlq',
        messages: [
          {
            key: rec.key,
            value: rec.value,
            partition: 1,
            headers: {
              trace: 'b',
              one: Buffer.from('x'),
              'eos.dlq.reason': 'value is not JSON',
              'eos.dlq.source.topic': 'in',
              'eos.dlq.source.partition': '7',
              'eos.dlq.source.offset': '42',
              'eos.dlq.pipeline': 'orders',
            },
          },
        ],
      },
    ]);
  });

  test('outputs first, then dead letters; nothing routed, no message', () => {
    const msgs = routeMessages({ out: [{ value: 'v' }], dlq: [{ record: rec, reason: 'r' }] }, target('input'), () => 0);
    assert.deepEqual(msgs.map((m) => m.topic), ['out', 'out.dlq']);
    assert.deepEqual(routeMessages({ out: [], dlq: [] }, target('key'), () => 0), []);
    assert.deepEqual(flatHeaders(undefined), {});
  });
});

describe('transform module in a worker thread', () => {
  test('bad results, throws and timeouts are dead-lettered there too, Buffers survive the trip', async () => {
    const t = new WorkerTransformer(await moduleFile('cases-w.mjs', CASES), 300, silent);
    after(() => t.close());
    const names = [...BAD.map(([n]) => n), 'function-value'];
    const { out, dlq } = await t.run(batch('a', ...names, 'async-ok', 'many', 'b'), source);
    assert.deepEqual(out.map((o) => String(o.value)), ['A', 'async', 'm1', 'm2', 'B']);
    assert.ok(Buffer.isBuffer(out[1]!.value) && Buffer.isBuffer(out[3]!.key));
    assert.equal(String(out[0]!.key), 'k0');
    assert.deepEqual(dlq.map((d) => String(d.record.value)), names);
    for (const [i, [name, reason]] of BAD.entries()) assert.match(dlq[i]!.reason, reason, name);
    assert.match(dlq.at(-1)!.reason, /^result cannot be passed on/);
  });

  test('a transform stuck in a synchronous loop blocks neither the event loop nor the records after it', async () => {
    const t = new WorkerTransformer(await moduleFile('loop.mjs', CASES), 2000, silent);
    after(() => t.close());
    // An HTTP server on this thread keeps answering while the transform spins.
    const server = createServer((_, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => new Promise((r) => server.close(r)));
    const port = (server.address() as { port: number }).port;
    let finished = false;
    const running = t.run(batch('loop', 'c'), source).finally(() => (finished = true));
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'ok');
    assert.equal(finished, false, 'the server answered while the transform was still looping');
    const { out, dlq } = await running;
    assert.deepEqual(dlq.map((d) => [String(d.record.value), d.reason]), [['loop', 'transform timed out: no result within 2000 ms (its worker thread was restarted)']]);
    assert.deepEqual(out.map((o) => String(o.value)), ['C']);
  });
});
