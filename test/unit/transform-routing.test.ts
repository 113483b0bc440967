import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { transformBatch, validOutputs, type BatchRecord } from '../../src/pipeline/transforms/route.js';
import { WorkerTransformer } from '../../src/pipeline/transforms/worker.js';
import { createLogger } from '../../src/log.js';
import { CLI } from '../harness/index.js';

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

describe('a transform module that cannot be loaded', () => {
  const execFileP = promisify(execFile);
  for (const [name, code] of [
    ['syntax.mjs', 'export function transform( {\n'],
    ['throws.mjs', 'throw new Error("init failed");\n'],
    ['nofn.mjs', 'export const transform = 5;\n'],
  ] as const) {
    test(`${name}: config validate exits 2 naming the config file and the key`, async () => {
      const mod = await moduleFile(name, code);
      const cfg = await moduleFile(`${name}.yaml`, `pipeline:\n  enabled: true\n  sourceTopic: a\n  sinkTopic: b\n  transformModule: ${mod}\n`);
      const r = await execFileP('node', [...CLI, 'config', 'validate', cfg]).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(r.code, 2);
      assert.match(r.stderr, new RegExp(`${name}\\.yaml: pipeline\\.transformModule: `));
      if (name !== 'syntax.mjs') return;
      // `run` refuses the same file before starting anything, also with exit 2.
      const run = await execFileP('node', [...CLI, 'run', '--config', cfg], { timeout: 30_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(run.code, 2);
    });
  }
});
