// The Streams instance harness's pure parts (harness/localcluster/streams-app.ts): the java command
// line, the properties file, the state lines of an instance's log, the cache key of the app; and
// the CLI's option errors (harness/localcluster/streams-cli.ts), which exit 2 before touching Kafka.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appSourceHash, instanceArgs, parseStateLines, propertiesText, sameApp, type StreamsAppOptions } from '../../../../harness/localcluster/streams-app.js';
import { parseProperties, streamsCli } from '../../../../harness/localcluster/streams-cli.js';
import { EosError, ErrorCodes, exitCodeFor } from '../../../../src/errors.js';

const app: StreamsAppOptions = { bootstrap: '127.0.0.1:9092', applicationId: 'orders', input: 'in', output: 'out' };

describe('streams instance harness', () => {
  test('the java command line: defaults, the options, the state directory last', () => {
    const state = { jar: '/c/app.jar', lib: '/c/lib', app, propertiesFile: '/r/streams.properties' };
    const args = instanceArgs(state, { stateDir: '/r/instance-1/state' });
    assert.deepEqual(args.slice(args.indexOf('-cp')), [
      '-cp', '/c/lib/*:/c/app.jar', 'eoswatch.streams.IncrementApp',
      '--bootstrap', '127.0.0.1:9092', '--application-id', 'orders', '--input', 'in', '--output', 'out',
      '--threads', '1', '--commit-interval-ms', '200', '--properties', '/r/streams.properties',
      '--state-dir', '/r/instance-1/state',
    ]);
    assert.ok(args.includes('-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'));
    const stateful = instanceArgs({ ...state, app: { ...app, stateful: true, threads: 2, commitIntervalMs: 100, logLevel: 'info' } }, { stateDir: '/s' });
    assert.deepEqual(stateful.slice(-9), ['--threads', '2', '--commit-interval-ms', '100', '--properties', '/r/streams.properties', '--stateful', '--state-dir', '/s']);
    assert.ok(stateful.includes('-Dorg.slf4j.simpleLogger.defaultLogLevel=info'));
  });

  test('the properties file escapes what java.util.Properties would misread', () => {
    assert.equal(propertiesText({}), '\n');
    assert.equal(propertiesText({ 'session.timeout.ms': '10000', 'a=b': ' lead', 'x': 'c:\\d\nnext' }), 'session.timeout.ms=10000\na\\=b=\\ lead\nx=c:\\\\d\\nnext\n');
  });

  test("the Streams states of an instance's log, in order, ignoring everything else", () => {
    const log = [
      'eoswatch-streams starting application.id=orders stateful=false threads=1',
      'eoswatch-streams state CREATED -> REBALANCING',
      '12:00:00.000 [x] WARN something state A -> B',
      'eoswatch-streams state REBALANCING -> RUNNING',
      'eoswatch-streams state RUNNING -> REBALANCING',
      '',
    ].join('\n');
    assert.deepEqual(parseStateLines(log), ['REBALANCING', 'RUNNING', 'REBALANCING']);
    assert.deepEqual(parseStateLines(''), []);
  });

  test('a later start may not change the application', () => {
    assert.equal(sameApp(app, { ...app, threads: 4 }), null, 'threads may differ between instances');
    assert.equal(sameApp(app, { ...app, applicationId: 'x' }), 'applicationId is "orders" in the run, not "x"');
    assert.equal(sameApp(app, { ...app, stateful: true }), "the run's app is not stateful");
    assert.equal(sameApp({ ...app, stateful: true }, app), "the run's app is stateful");
  });

  test('the cache key changes with any source and not otherwise', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eoswatch-streams-hash-'));
    try {
      const src = join(dir, 'src', 'main', 'java', 'eoswatch', 'streams');
      await mkdir(src, { recursive: true });
      await writeFile(join(dir, 'pom.xml'), '<project/>');
      await writeFile(join(src, 'A.java'), 'class A {}');
      const h1 = await appSourceHash(dir);
      assert.match(h1, /^[0-9a-f]{12}$/);
      assert.equal(await appSourceHash(dir), h1);
      await writeFile(join(src, 'B.java'), '');
      const h2 = await appSourceHash(dir);
      assert.notEqual(h2, h1, 'a new source file');
      await writeFile(join(src, 'A.java'), 'class A { }');
      assert.notEqual(await appSourceHash(dir), h2, 'a changed source file');
      await writeFile(join(src, 'notes.txt'), 'not a source');
      assert.equal(await appSourceHash(dir), await appSourceHash(dir));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run streams options', () => {
  const usage = async (args: string[], message: RegExp) => {
    await assert.rejects(streamsCli(args), (err: Error) => {
      assert.ok(err instanceof EosError && err.code === ErrorCodes.USAGE, `${err.message} is a usage error`);
      assert.equal(exitCodeFor(err), 2);
      assert.match(err.message, message);
      return true;
    });
  };

  test('bad options are usage errors naming the option and what was expected', async () => {
    await usage(['kill'], /^kill needs --instance N$/);
    await usage(['pause', '--instance', '0'], /^--instance: expected a positive integer, found "0"$/);
    await usage(['start', '--bootstrap', 'b:9092', '--input', 'i'], /^start: missing --application-id, --output/);
    await usage(['start', '--instance', '1', '--instances', '2'], /exclude each other/);
    await usage(['start', '--log-level', 'loud'], /--log-level: expected error, warn, info or debug, found "loud"/);
    await usage(['start', '--bootstrap', 'b', '--application-id', 'a', '--input', 'i', '--output', 'o', '--set', 'novalue'], /--set: expected name=value, found "novalue"/);
    await usage(['stop', '--grace-ms', '-1'], /--grace-ms/);
    await usage(['frob'], /unknown command "frob"/);
    await usage(['status', 'extra'], /unexpected argument "extra"/);
    await usage(['start', '--frob'], /frob/);
  });

  test('a properties file: key=value and key: value, comments skipped, a bad line named by file and line', () => {
    assert.deepEqual(parseProperties('# c\n! c\n\na=1\nb: two words\n', 'p.properties'), { a: '1', b: 'two words' });
    assert.throws(() => parseProperties('a=1\n=x\n', 'p.properties'), { code: ErrorCodes.CONFIG_INVALID, message: 'p.properties:2: expected name=value, found "=x"' });
  });
});
