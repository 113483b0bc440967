// The one error path of every command line (src/errors.ts: errorReport) and the option errors of
// the local-cluster CLIs (npm run kafka|flink|streams), which parse through src/commands/options.ts
// as eoswatch's own commands do. Nothing here starts a process: every bad option below is refused
// before a cluster is fetched, started or even read (a directory that does not exist is named, so
// a check that moved after the state file is read fails as a runtime error instead).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EosError, ErrorCodes, errorReport, exitCodeFor, type ErrorCode } from '../../src/errors.js';
import { kafkaCli, upOptions } from '../../harness/localcluster/cli.js';
import { flinkCli } from '../../harness/localcluster/flink-cli.js';
import { main } from '../../src/cli.js';
import { ProtocolDecodeError } from '../../src/kafka/wire.js';
import { FlinkHttpError } from '../../src/flink/rest-client.js';
import { HarnessError } from '../../harness/chaos/verdict.js';

const nowhere = join(tmpdir(), `eoswatch-no-cluster-${process.pid}`);

/** What `npm run NAME -- args` prints and exits with when cli rejects (runCliMain's path, without the process). */
async function reported(cli: (argv: string[]) => Promise<number>, name: string, args: string[]): Promise<{ exitCode: number; text: string; err: unknown }> {
  try {
    await cli(args);
  } catch (err) {
    return { ...errorReport(err, name, `npm run ${name} -- --help`), err };
  }
  assert.fail(`npm run ${name} -- ${args.join(' ')} did not fail`);
}

async function stderrOf<T>(fn: () => Promise<T>): Promise<{ result: T; stderr: string }> {
  const write = process.stderr.write;
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { result: await fn(), stderr };
  } finally {
    process.stderr.write = write;
  }
}

describe('errorReport: what every command line prints for an error, and its exit code', () => {
  test('a usage error: exit 2, the message under the program name, then where the help is', () => {
    assert.deepEqual(errorReport(new EosError(ErrorCodes.USAGE, '--nodes: expected 1 or 3, found "2"'), 'kafka', 'npm run kafka -- --help'), {
      exitCode: 2,
      text: `kafka: --nodes: expected 1 or 3, found "2"\nRun 'npm run kafka -- --help' for usage.\n`,
    });
  });

  test('a configuration error: exit 2, one indented line per detail, no help line', () => {
    const err = new EosError(ErrorCodes.CONFIG_INVALID, 'x.yaml: 2 configuration problems', { details: ['x.yaml:1:1: /a: unknown key', 'x.yaml:2:1: /b: unknown key'] });
    assert.deepEqual(errorReport(err, 'eoswatch', 'eoswatch --help'), { exitCode: 2, text: 'eoswatch: x.yaml: 2 configuration problems\n  x.yaml:1:1: /a: unknown key\n  x.yaml:2:1: /b: unknown key\n' });
  });

  test('a runtime failure: exit 1, whether an EosError, a plain Error or not an Error at all', () => {
    assert.deepEqual(errorReport(new EosError(ErrorCodes.HARNESS_FAILED, 'Kafka node 1 exited during start-up.'), 'kafka', 'h'), { exitCode: 1, text: 'kafka: Kafka node 1 exited during start-up.\n' });
    assert.deepEqual(errorReport(new Error('connect ECONNREFUSED'), 'flink', 'h'), { exitCode: 1, text: 'flink: connect ECONNREFUSED\n' });
    assert.deepEqual(errorReport('thrown text', 'streams', 'h'), { exitCode: 1, text: 'streams: thrown text\n' });
  });

  test('message and details are redacted', () => {
    const err = new EosError(ErrorCodes.CONFIG_INVALID, 'bad sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required password="hunter2";', { details: ['password: hunter2'] });
    const { text } = errorReport(err, 'kafka', 'h');
    assert.doesNotMatch(text, /hunter2/);
    assert.match(text, /\[REDACTED\]/);
    assert.doesNotMatch(errorReport(new Error('GET https://admin:s3cret@jm:8081/jobs failed'), 'flink', 'h').text, /s3cret/);
  });

  test('eoswatch itself reports through it', async () => {
    const { result, stderr } = await stderrOf(() => main(['frob']));
    assert.equal(result, 2);
    assert.match(stderr, /^eoswatch: unknown command "frob"; expected one of: run, /);
    assert.match(stderr, /\nRun 'eoswatch --help' for usage\.\n$/);
  });
});

describe('the error codes', () => {
  test('usage and configuration codes exit 2, every other code 1', () => {
    const usage: ErrorCode[] = [ErrorCodes.USAGE, ErrorCodes.CONFIG_NOT_FOUND, ErrorCodes.CONFIG_INVALID];
    for (const code of Object.values(ErrorCodes)) assert.equal(exitCodeFor(new EosError(code, 'x')), usage.includes(code) ? 2 : 1, code);
  });

  test('the error classes of a kind carry its code', () => {
    assert.equal(new ProtocolDecodeError('x').code, ErrorCodes.DECODE_FAILED);
    assert.equal(new ProtocolDecodeError('x').name, 'ProtocolDecodeError');
    assert.equal(new FlinkHttpError(503, '/jobs').code, ErrorCodes.FLINK_API_FAILED);
    assert.equal(new HarnessError('x').code, ErrorCodes.HARNESS_FAILED);
  });

  test('every code is raised somewhere in src/ or harness/ (the list holds no code nothing uses)', () => {
    const files = ['src', 'harness'].flatMap((dir) => (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && join(dir, f) !== join('src', 'errors.ts')).map((f) => join(dir, f)));
    const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');
    const unused = Object.keys(ErrorCodes).filter((k) => !text.includes(`ErrorCodes.${k}`));
    assert.deepEqual(unused, []);
  });
});

describe('npm run kafka: a bad option or value is exit 2 naming it, before anything is started', () => {
  const usage = async (args: string[], message: string | RegExp) => {
    const r = await reported(kafkaCli, 'kafka', args);
    assert.ok(r.err instanceof EosError && r.err.code === ErrorCodes.USAGE, `${args.join(' ')}: ${r.text}`);
    assert.equal(r.exitCode, 2);
    if (typeof message === 'string') assert.equal(r.text, `kafka: ${message}\nRun 'npm run kafka -- --help' for usage.\n`);
    else assert.match(r.text, message);
  };

  test('the up options', () => {
    assert.deepEqual(upOptions({}), { nodes: 3, basePort: undefined, overrides: {}, security: { mode: 'plaintext', mtls: undefined, users: undefined } });
    assert.deepEqual(upOptions({ nodes: '1', port: '19092', set: ['a=1', 'b=x=y'], security: 'sasl-ssl', mtls: true, user: ['app'] }), {
      nodes: 1,
      basePort: 19092,
      overrides: { a: '1', b: 'x=y' },
      security: { mode: 'sasl-ssl', mtls: true, users: ['app'] },
    });
    const bad: [Parameters<typeof upOptions>[0], string][] = [
      [{ nodes: '2' }, '--nodes: expected 1 or 3, found "2"'],
      [{ port: '70000' }, '--port: expected a port number (1-65535), found "70000"'],
      [{ port: 'x' }, '--port: expected a port number (1-65535), found "x"'],
      [{ set: ['a=1', 'novalue'] }, '--set: expected name=value, found "novalue"'],
      [{ security: 'tls' }, '--security: expected plaintext, sasl-ssl or ssl, found "tls"'],
      [{ user: ['app'] }, '--mtls and --user need --security sasl-ssl or ssl'],
      [{ security: 'ssl', user: ['app', 'admin'] }, 'security.users: "admin" is the cluster\'s super user and always exists'],
    ];
    for (const [values, message] of bad) {
      assert.throws(() => upOptions(values), (err: unknown) => err instanceof EosError && exitCodeFor(err) === 2 && err.message === message, message);
    }
    // A secret typed into a bad value is not printed back.
    assert.throws(
      () => upOptions({ set: ['=ssl.key.password=hunter2'] }),
      (err: unknown) => errorReport(err, 'kafka', 'h').text === 'kafka: --set: expected name=value, found "=ssl.key.password=[REDACTED]\nRun \'h\' for usage.\n',
    );
  });

  test('commands, their arguments and options', async () => {
    await usage(['--frob'], /^kafka: Unknown option '--frob'/);
    await usage(['--nodes'], /^kafka: Option '--nodes <value>' argument missing/);
    await usage(['frob'], 'unknown command "frob"; expected: up, acl, down, status, kill, stop, start, restart, pause, resume, logs, sweep, topics');
    await usage(['kill', 'x', '--dir', nowhere], 'kill needs a node id (1, 2, 3), found "x"');
    await usage(['logs', '--dir', nowhere], 'logs needs a node id (1, 2, 3), found ""');
    await usage(['pause', '0', '--dir', nowhere], 'pause needs a node id (1, 2, 3), found "0"');
    await usage(['topics', 'frob', '--dir', nowhere], 'topics: expected create or list, found "frob"');
    await usage(['topics', 'create', 'orders', '--partitions', '0', '--dir', nowhere], '--partitions: expected a positive integer, found "0"');
    await usage(['acl', '--dir', nowhere], 'acl: expected grant, revoke or list, found ""');
    await usage(['acl', 'grant', '--dir', nowhere], 'acl grant: needs --principal User:NAME, --resource R and --operation OP');
    await usage(['acl', 'grant', '--principal', 'eoswatch', '--dir', nowhere], '--principal: expected User:NAME, found "eoswatch"');
    await usage(['acl', 'revoke', '--principal', 'User:a', '--resource', 'orders', '--operation', 'Read', '--dir', nowhere], /^kafka: --resource: expected topic:NAME, /);
    await usage(['acl', 'grant', '--principal', 'User:a', '--resource', 'topic:orders', '--operation', 'Own', '--dir', nowhere], /^kafka: --operation: expected one of All, /);
  });

  test('a runtime failure is exit 1, without the help line', async () => {
    const r = await reported(kafkaCli, 'kafka', ['status', '--dir', nowhere]);
    assert.equal(r.exitCode, 1);
    assert.equal(r.text, `kafka: no cluster state at ${join(nowhere, 'cluster.json')}: start one with 'up'\n`);
  });
});

describe('npm run flink: the same options and errors', () => {
  const usage = async (args: string[], message: string | RegExp) => {
    const r = await reported(flinkCli, 'flink', args);
    assert.equal(r.exitCode, 2, r.text);
    if (typeof message === 'string') assert.equal(r.text, `flink: ${message}\nRun 'npm run flink -- --help' for usage.\n`);
    else assert.match(r.text, message);
  };

  test('bad options, commands and arguments', async () => {
    await usage(['--frob'], /^flink: Unknown option '--frob'/);
    await usage(['frob'], 'unknown command "frob"; expected: up, down, status, kill-tm, start-tm, kill-jm, start-jm, submit, cancel');
    await usage(['kill-tm', 'x', '--dir', nowhere], 'kill-tm needs a TaskManager number (1, 2, …), found "x"');
    await usage(['submit', '--source', 's', '--dir', nowhere], 'submit needs --bootstrap, --source and --sink');
    await usage(['submit', '--bootstrap', 'b:9092', '--source', 's', '--sink', 't', '--partitions', '0', '--dir', nowhere], '--partitions: expected a positive integer, found "0"');
    await usage(['submit', '--bootstrap', 'b:9092', '--source', 's', '--sink', 't', '--arg', 'novalue', '--dir', nowhere], '--arg: expected name=value, found "novalue"');
    await usage(['cancel', '--dir', nowhere], 'cancel needs a job id');
  });

  test('a runtime failure is exit 1', async () => {
    const r = await reported(flinkCli, 'flink', ['status', '--dir', nowhere]);
    assert.equal(r.exitCode, 1);
    assert.match(r.text, /^flink: no Flink cluster state at .*: start one with 'up'\n$/);
  });
});
