// The root logger's redaction and line format, read back from a capturing stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, stdoutDestination } from '../../src/log.js';

function capture(level?: Parameters<typeof createLogger>[0]) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: createLogger(level, sink), lines };
}

/** A captured line's `err` as the assertions read it: the serialized error and its cause chain. */
interface LoggedError {
  message: string;
  stack?: string;
  cause?: LoggedError;
}
type ErrLine = Record<string, unknown> & { err: LoggedError };

const SECRET_KEYS = ['password', 'passphrase', 'key', 'cert', 'ca', 'token', 'secret', 'authorization'];

/** { a: { b: { [key]: value } } } with `depth` levels above the key. */
const nest = (depth: number, key: string, value: unknown): Record<string, unknown> =>
  depth === 0 ? { [key]: value } : { [`l${depth}`]: nest(depth - 1, key, value) };

test('every secret key is redacted at the top and deep down, and its siblings are kept', () => {
  for (const key of SECRET_KEYS) {
    for (const depth of [0, 1, 2, 3, 7]) {
      const { log, lines } = capture();
      const secret = `s3cr3t-${key}-${depth}`;
      log.info({ ...nest(depth, key, secret), keep: 'visible' }, 'm');
      const text = JSON.stringify(lines);
      assert.ok(!text.includes(secret), `${key} at depth ${depth} leaked: ${text}`);
      assert.ok(text.includes('"[REDACTED]"'), `${key} at depth ${depth}: no [REDACTED] marker: ${text}`);
      assert.equal(lines[0]!.keep, 'visible');
    }
  }
});

test('non-secret keys with similar names are not redacted', () => {
  const { log, lines } = capture();
  log.info({ kafka: { sasl: { username: 'alice', mechanism: 'plain' }, keyFile: '/etc/k', cacheSize: 3 } }, 'm');
  assert.deepEqual(lines[0]!.kafka, { sasl: { username: 'alice', mechanism: 'plain' }, keyFile: '/etc/k', cacheSize: 3 });
});

test('a child logger redacts too; lines carry the level label, the name, an ISO time and the message', () => {
  const { log, lines } = capture();
  log.child({ service: 'canary' }).warn({ sasl: { password: 'child-secret' } }, 'hello');
  log.debug('below the level');
  assert.equal(lines.length, 1);
  const l = lines[0]!;
  assert.equal(l.level, 'warn');
  assert.equal(l.name, 'eoswatch');
  assert.equal(l.service, 'canary');
  assert.equal(l.msg, 'hello');
  assert.deepEqual(l.sasl, { password: '[REDACTED]' });
  assert.match(String(l.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('the level is honoured', () => {
  const { log, lines } = capture('warn');
  log.info('no');
  log.error('yes');
  assert.deepEqual(lines.map((l) => l.msg), ['yes']);
  const d = capture();
  d.log.debug('default level is info');
  assert.equal(d.lines.length, 0);
});

test('the default destination is stdout, written synchronously', () => {
  const d = stdoutDestination();
  assert.equal(d.fd, 1);
  assert.equal(d.sync, true);
});

test('secrets inside the message text and its printf arguments are redacted; other text is kept', () => {
  const { log, lines } = capture();
  log.info('connecting with password=hunter2-x9 to %s', 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p4ss-q7";');
  const msg = String(lines[0]!.msg);
  assert.ok(!msg.includes('hunter2-x9') && !msg.includes('p4ss-q7'), msg);
  assert.match(msg, /^connecting with password=/);
});

test('an error under err keeps its type and message (redacted), not dropped by the serializer', () => {
  const { log, lines } = capture();
  log.error({ err: new TypeError('broker said: token=abc-secret-123 refused') }, 'failed');
  const err = lines[0]!.err as { type?: string; message?: string };
  assert.equal(err.type, 'TypeError');
  assert.match(String(err.message), /^broker said: token=/);
  assert.ok(!String(err.message).includes('abc-secret-123'));
});

test('no stack trace below error: Errors at warn and below by type and message, a stack field dropped; error lines keep theirs', () => {
  const { log, lines } = capture('debug');
  const cause = new Error('inner password=p1');
  const err = Object.assign(new Error('outer failure', { cause }), { code: 'E_X' });
  log.warn({ err, stack: err.stack, keep: 1 }, 'warned');
  log.info(err);
  log.debug({ err }, 'debugged');
  log.error({ err }, 'failed');
  const [w, i, d, e] = lines as ErrLine[];
  assert.deepEqual(w!.err, { type: 'Error', message: 'outer failure', code: 'E_X', cause: { type: 'Error', message: 'inner password=[REDACTED]' } });
  assert.equal(w!.stack, undefined);
  assert.equal(w!.keep, 1);
  assert.equal(i!.msg, 'outer failure', 'an Error alone keeps its message as the line message');
  assert.equal(i!.err.stack, undefined);
  assert.equal(d!.err.stack, undefined);
  assert.match(e!.err.stack!, /^Error: outer failure\n\s+at /);
  for (const l of [w, i, d]) assert.doesNotMatch(JSON.stringify(l), /\\n\s+at /);
});

test('below error: a cause chain is shown 8 deep without stacks and cut there; non-objects pass as at error; an Error alone keeps its message', () => {
  const { log, lines } = capture('debug');
  let e: Error = new Error('c10');
  for (let i = 9; i >= 0; i--) e = new Error(`c${i}`, { cause: e });
  log.warn({ err: e }, 'deep');
  let c: LoggedError | undefined = (lines[0] as ErrLine).err;
  const messages: string[] = [];
  while (c) {
    assert.equal(c.stack, undefined);
    messages.push(c.message);
    c = c.cause;
  }
  assert.deepEqual(messages, ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'], 'the error and 8 causes');
  // null and an array as the first argument: the same line at warn as at error (nothing to strip).
  for (const first of [null, ['a', 'b']] as unknown[]) {
    lines.length = 0;
    (log.warn as (o: unknown, m: string) => void)(first, 'odd');
    (log.error as (o: unknown, m: string) => void)(first, 'odd');
    const [w, er] = lines.map(({ level: _l, time: _t, ...rest }) => rest);
    assert.deepEqual(w, er, JSON.stringify(first));
  }
  // An Error alone at warn: its message is the line's; with a message of its own, that one.
  lines.length = 0;
  log.warn(new Error('alone token=t0k3n'));
  log.warn(new Error('with'), 'own message');
  log.warn(new Error('fmt'), 'n=%d', 3);
  assert.deepEqual(lines.map((l) => l.msg), ['alone token=[REDACTED]', 'own message', 'n=3']);
  for (const l of lines) assert.equal((l as ErrLine).err.stack, undefined);
});
