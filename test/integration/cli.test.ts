import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, REPO_CLI, spawnTracked, waitForLine } from '../harness/index.js';
import { tempDirs } from '../harness/tmp.js';
import { until } from '../harness/wait.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { makeTestPki, webConfigFile } from '../harness/tls.js';
import { send } from '../harness/http.js';
import bcrypt from 'bcryptjs';
import { webSettings } from '../../src/commands/options.js';
import { loadConfig } from '../../src/config/load.js';
import { EosError, exitCodeFor } from '../../src/errors.js';

const execFileP = promisify(execFile);

async function eoswatch(args: string[], env: NodeJS.ProcessEnv = {}, cli = args[0] === 'chaos' || args[0] === 'demo' ? REPO_CLI : CLI): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP('node', [...cli, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const temp = tempDirs('eoswatch-cli-');
const tempDir = () => temp.make();

describe('eoswatch CLI', () => {
  test('--help lists the commands and exits 0: the product\'s, and in the repository\'s CLI also chaos and demo', async () => {
    const r = await eoswatch(['--help']);
    assert.equal(r.code, 0);
    for (const c of ['run', 'audit', 'verify', 'topics create', 'transactions', 'status', 'config validate']) assert.match(r.stdout, new RegExp(`^  ${c}`, 'm'));
    for (const c of ['chaos', 'demo']) assert.doesNotMatch(r.stdout, new RegExp(`^  ${c}`, 'm'));
    const repo = await eoswatch(['--help'], {}, REPO_CLI);
    assert.equal(repo.code, 0);
    for (const c of ['run', 'audit', 'verify', 'topics create', 'transactions', 'status', 'config validate', 'chaos', 'demo']) assert.match(repo.stdout, new RegExp(`^  ${c}`, 'm'));
  });

  test('the product\'s CLI has no harness commands: chaos there is a usage error that says where it runs', async () => {
    const r = await eoswatch(['chaos', '--scenario', 'worker-kill'], {}, CLI);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "chaos"; expected one of: run, audit, verify, topics create, transactions, status, config validate \(chaos and demo run from a checkout of the repository: npm run chaos -- …, npm run demo\)/);
    const repo = await eoswatch(['nope'], {}, REPO_CLI);
    assert.equal(repo.code, 2);
    assert.match(repo.stderr, /unknown command "nope"; expected one of: run, .*config validate, chaos, demo\n/);
  });

  test('chaos rejects an unknown scenario or a bad count with exit 2 and names the option', async () => {
    const a = await eoswatch(['chaos', '--scenario', 'worker-kill,nope']);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /--scenario: unknown scenario "nope"; expected one of: worker-kill, .*zombie.*, all/);
    const b = await eoswatch(['chaos', '--records', '0']);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /--records: expected a positive integer, found "0"/);
  });

  test('chaos --engine flink|streams: their own scenarios, the Flink lines, and options of one engine refused with the other', async () => {
    const bad = [
      [['chaos', '--engine', 'spark'], /--engine: expected eoswatch, flink or streams, found "spark"/],
      [['chaos', '--engine', 'flink', '--scenario', 'worker-kill'], /--scenario: unknown scenario "worker-kill"; expected one of: tm-kill, jm-kill, broker-kill, broker-rolling-restart, coordinator-kill, checkpoint-failure, jm-isolated, tm-isolated, seed-protocol, all, process, network/],
      [['chaos', '--engine', 'streams', '--scenario', 'tm-kill'], /--scenario: unknown scenario "tm-kill"; expected one of: instance-kill, instance-term, scale-out-in, zombie, broker-kill, broker-rolling-restart, coordinator-kill, all/],
      [['chaos', '--engine', 'streams', '--instances', '0'], /--instances: expected a positive integer, found "0"/],
      [['chaos', '--instances', '3'], /--instances: only with --engine streams/],
      [['chaos', '--engine', 'streams', '--parallelism', '2'], /--parallelism: only with --engine flink/],
      [['chaos', '--engine', 'streams', '--full-speed'], /--full-speed: only with --engine eoswatch or flink \(a Streams round writes its input as a steady stream\)/],
      [['chaos', '--engine', 'flink', '--flink-version', '1.20,1.17'], /--flink-version: Flink version "1\.17" is not supported: expected one of 1\.20 \(1\.20\.\d+\), 2\.2 \(2\.2\.\d+\)/],
      [['chaos', '--engine', 'flink', '--parallelism', '0'], /--parallelism: expected a positive integer, found "0"/],
      [['chaos', '--flink-version', '2.2'], /--flink-version: only with --engine flink/],
      [['chaos', '--transaction-naming', 'pooling'], /--transaction-naming: only with --engine flink/],
      [['chaos', '--engine', 'flink', '--transaction-naming', 'random'], /--transaction-naming: expected incrementing or pooling, found "random"/],
      [['chaos', '--engine', 'flink', '--flink-version', '1.20,2.2', '--transaction-naming', 'pooling'], /--transaction-naming pooling: the Kafka connector of Flink 1\.20 has no pooled naming \(FLIP-511/],
      [['chaos', '--engine', 'streams', '--network'], /--network: only with --engine eoswatch or flink/],
      [['chaos', '--engine', 'streams', '--scenario', 'network'], /--scenario: unknown scenario "network"; expected one of: instance-kill, .*coordinator-kill, all/],
    ] as const;
    for (const [args, message] of bad) {
      const r = await eoswatch([...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
    const help = await eoswatch(['chaos', '--help']);
    assert.match(help.stdout, /Scenarios \(--engine flink\):\n {2}tm-kill\n {6}.*\n( {6}.*\n)* {2}jm-kill\n/);
    assert.match(help.stdout, /Scenarios \(--engine eoswatch\):\n {2}worker-kill\n[^]* {2}net-worker-flap\n[^]*Scenarios \(--engine flink\)/);
    assert.match(help.stdout, / {2}checkpoint-failure\n[^]* {2}jm-isolated\n[^]* {2}tm-isolated\n[^]* {2}seed-protocol\n[^]*Scenarios \(--engine streams\)/);
    assert.match(help.stdout, /Scenarios \(--engine streams\):\n {2}instance-kill\n[^]* {2}zombie\n/);
    assert.match(help.stdout, /--flink-version LIST\s+Flink lines for --engine flink, comma-separated \(1\.20 = 1\.20\.\d+, 2\.2 = 2\.2\.\d+; default 1\.20\)/);
  });

  test('demo: bad options exit 2 naming them (nothing started)', async () => {
    for (const [args, message] of [
      [['demo', '--flink', '--streams'], /--flink and --streams: one engine at a time/],
      [['demo', '--flink-version', '2.2'], /--flink-version: only with --flink/],
      [['demo', '--nodes', '2'], /--nodes: expected 1 or 3, found "2"/],
    ] as const) {
      const r = await eoswatch([...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
  });

  test('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = await eoswatch(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), pkg.version);
  });

  test('each command has --help', async () => {
    for (const args of [['run', '--help'], ['audit', '--help'], ['verify', '--help'], ['config', 'validate', '--help'], ['demo', '--help'], ['chaos', '--help'], ['transactions', '--help'], ['transactions', 'find-hanging', '--help']]) {
      const r = await eoswatch(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, args[0] === 'chaos' || args[0] === 'demo' ? new RegExp(`^Usage: npm run ${args[0]} -- `, 'm') : /^Usage: eoswatch /m);
    }
  });

  test('transactions: no subcommand prints the help (exit 2), bad options exit 2 naming the option, a cluster that does not answer exit 1', async () => {
    const none = await eoswatch(['transactions']);
    assert.equal(none.code, 2);
    assert.match(none.stdout, /^Usage: eoswatch transactions list/m);
    const bad = [
      [['transactions', 'frob'], /unknown transactions command "frob"/],
      [['transactions', 'find-hanging', '--idle', 'soon'], /--idle: /],
      [['transactions', 'abort'], /--transactional-id ID, or --topic T --partition N --start-offset O, is required/],
      [['transactions', 'list', '--state', 'Running'], /--state: expected Empty, .*, found "Running"/],
    ] as const;
    for (const [args, message] of bad) {
      const r = await eoswatch([...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
    // Port 1 refuses connections at once: a runtime failure, not a crash.
    const dir = await tempDir();
    const file = join(dir, 'eoswatch.yaml');
    await writeFile(file, 'kafka:\n  brokers: ["127.0.0.1:1"]\n  connectionTimeout: 300\n  requestTimeout: 1000\n');
    const down = await eoswatch(['transactions', 'list', '-c', file]);
    assert.equal(down.code, 1, down.stderr);
    assert.match(down.stderr, /^eoswatch: .*(ECONNREFUSED|Connection|connect)/im);
  });

  test('usage errors exit 2', async () => {
    assert.equal((await eoswatch([])).code, 2);
    const r = await eoswatch(['frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "frobnicate"/);
    const r2 = await eoswatch(['run', '--nope']);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /Unknown option '--nope'/);
  });

  test('config validate: the example is valid', async () => {
    const r = await eoswatch(['config', 'validate', 'config/eoswatch.example.yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /config\/eoswatch\.example\.yaml: valid/);
  });

  test('config validate: every problem of a bad file on stderr, exit 2', async () => {
    const dir = await tempDir();
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'http:\n  port: abc\nkafka:\n  brokerz: []\n');
    const r = await eoswatch(['config', 'validate', file]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, new RegExp(`${file}:2:9: /http/port: found "abc", expected integer`));
    assert.match(r.stderr, new RegExp(`${file}:4:3: /kafka/brokerz: unknown key "brokerz"`));
  });

  test('config validate: timers out of bounds, huge numbers and YAML alias bombs are exit 2 naming file, line and key', async () => {
    const dir = await tempDir();
    const cases: [string, RegExp][] = [
      ['kafka:\n  healthCheckInterval: 25d\n', /:2:24: \/kafka\/healthCheckInterval: found "25d" \(2160000000 ms\), expected at most 24h/],
      ['lsoMonitor:\n  interval: 1e30\n', /:2:13: \/lsoMonitor\/interval: found "1e\+30", expected a duration/],
      [`a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [${Array(10).fill('*a').join(',')}]\nc: [${Array(10).fill('*b').join(',')}]\n`, /:\d+:\d+: YAML aliases expand too much/],
    ];
    for (const [i, [text, expected]] of cases.entries()) {
      const file = join(dir, `bounds-${i}.yaml`);
      await writeFile(file, text);
      const r = await eoswatch(['config', 'validate', file]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${file}${expected.source}`));
    }
  });

  test('config validate: the web configuration file as run would load it (http.webConfigFile, --web.config.file wins); a bad one is exit 2 naming file and key', async () => {
    const dir = await tempDir();
    const web = (name: string, text: string) => {
      const f = join(dir, name);
      return writeFile(f, text).then(() => f);
    };
    const plain = 'AverySecretPlaintextPassw0rd';
    const good = await web('good.yml', 'basic_auth_users:\n  prometheus: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n');
    const noCert = await web('no-cert.yml', 'tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n');
    const badHash = await web('bad-hash.yml', `basic_auth_users:\n  alice: ${plain}\n`);
    const unknownKey = await web('unknown-key.yml', 'basic_auth_user:\n  alice: x\n');
    const cfg = async (name: string, webFile?: string) => {
      const f = join(dir, name);
      await writeFile(f, `http:\n  port: 7395\n${webFile ? `  webConfigFile: ${webFile}\n` : ''}`);
      return f;
    };

    const ok = await eoswatch(['config', 'validate', await cfg('ok.yaml', good)]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`ok\\.yaml: valid\n${good}: valid\n`));

    // The CLI's exit code and output for one bad file; the other cases through the same function in-process.
    const bad = await eoswatch(['config', 'validate', await cfg('bad.yaml', noCert)]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, new RegExp(`${noCert}:2:14: /tls_server_config/cert_file: cannot read "nope\\.crt": no such file`));

    const cases: [string, { 'web.config.file'?: string; 'web.listen-address'?: string }, RegExp][] = [
      [await cfg('c2.yaml', badHash), {}, new RegExp(`${badHash}:2:10: /basic_auth_users/alice: expected a bcrypt hash`)],
      [await cfg('c3.yaml', unknownKey), {}, new RegExp(`${unknownKey}:1:1: /basic_auth_user: unknown key "basic_auth_user"`)],
      // The file named by the key or the flag does not exist: which of the two named it.
      [await cfg('c4.yaml', join(dir, 'absent.yml')), {}, new RegExp(`c4\\.yaml: http\\.webConfigFile: ${dir}/absent\\.yml: cannot read web configuration file: no such file`)],
      [await cfg('c5.yaml'), { 'web.config.file': join(dir, 'absent.yml') }, new RegExp(`^--web\\.config\\.file: ${dir}/absent\\.yml: cannot read web configuration file: no such file`)],
      // The flag wins over the key, as in run.
      [await cfg('c6.yaml', good), { 'web.config.file': noCert }, new RegExp(`${noCert}:2:14: /tls_server_config/cert_file`)],
      [await cfg('c7.yaml'), { 'web.listen-address': '7395' }, /--web\.listen-address: expected \[HOST\]:PORT/],
    ];
    for (const [file, flags, expected] of cases) {
      await assert.rejects(
        (async () => webSettings(await loadConfig(file), flags, file))(),
        (err: EosError) => {
          assert.equal(exitCodeFor(err), 2, `${file}: ${err.message}`);
          const all = [err.message, ...err.details].join('\n');
          assert.match(all, expected);
          assert.doesNotMatch(all, new RegExp(plain), 'a password pasted as a hash is never quoted back');
          return true;
        },
        file,
      );
    }
    const overridden = await webSettings(await loadConfig(await cfg('c8.yaml', noCert)), { 'web.config.file': good }, 'c8.yaml');
    assert.equal(overridden?.file, good);
    assert.equal(overridden?.users.size, 1);
  });

  test('config validate --print redacts secrets', async () => {
    const dir = await tempDir();
    const file = join(dir, 'c.yaml');
    await writeFile(file, 'kafka:\n  sasl:\n    mechanism: scram-sha-512\n    username: app\n    password: ${SASL_PW}\n');
    const r = await eoswatch(['config', 'validate', file, '--print'], { SASL_PW: 'pa55word-xyz' });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /pa55word-xyz/);
    assert.equal((JSON.parse(r.stdout) as { kafka: { sasl: { password: string } } }).kafka.sasl.password, '[REDACTED]');
  });

  test('run: serves metrics with eos_kafka_up 0 for an unreachable cluster, keeps secrets out of logs, stops on SIGTERM within the grace period', async () => {
    const dir = await tempDir();
    const file = join(dir, 'run.yaml');
    await writeFile(
      file,
      [
        'http: {host: 127.0.0.1, port: 0}',
        'shutdown: {gracePeriod: 3s}',
        'kafka:',
        '  brokers: ["127.0.0.1:1"]',
        '  healthCheckInterval: 200ms',
        '  connectionTimeout: 200ms',
        '  sasl: {mechanism: plain, username: u, password: "${PW}"}',
        '',
      ].join('\n'),
    );
    const child = spawnTracked('node', [...CLI, 'run', '--config', file], { env: { ...process.env, PW: 'very-secret-pw' } });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const m = await waitForLine(child, /"url":"(http:\/\/[^"]+)".*HTTP server listening/);
    const url = m[1]!;
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    const up = await until('eos_kafka_up read', async () => sampleValue(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()), 'eos_kafka_up'), 5000, { intervalMs: 100, context: () => out });
    assert.equal(up, 0);
    const ready = await (await fetch(`${url}/readyz`)).json() as { services: Record<string, { ready: boolean; detail: string }> };
    assert.match(ready.services['kafka-health']!.detail, /cluster unreachable/);
    const t0 = Date.now();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    const code = await exited;
    const tookMs = Date.now() - t0;
    assert.equal(code, 0);
    assert.ok(tookMs < 3000, `shutdown took ${tookMs} ms, grace period is 3000 ms`);
    assert.match(out, /"msg":"shutting down"/);
    assert.doesNotMatch(out, /very-secret-pw/);
  });
});

describe('eoswatch run with a web configuration file', () => {
  const password = 'correct horse battery staple';
  const tlsBlock = () => ['tls_server_config:', '  cert_file: server.crt', '  key_file: server.key'].join('\n');

  test('eoswatch run --web.listen-address --web.config.file: HTTPS and basic auth; a bad file is exit 2', async () => {
    const pki = await makeTestPki();
    temp.track(pki.dir);
    const webConfig = (text: string): Promise<string> => webConfigFile(pki, text);
    const dir = await tempDir();
    const cfg = join(dir, 'c.yaml');
    await writeFile(cfg, 'kafka: {brokers: ["127.0.0.1:1"], connectionTimeout: 200ms}\naudit: {enabled: false}\nshutdown: {gracePeriod: 3s}\n');
    const web = await webConfig(`${tlsBlock()}\nbasic_auth_users:\n  p: ${bcrypt.hashSync(password, 4)}\n`);
    const child = spawnTracked('node', [...CLI, 'run', '--config', cfg, '--web.listen-address', '127.0.0.2:0', '--web.config.file', web]);
    const url = (await waitForLine(child, /"url":"(https:\/\/[^"]+)","tls":true.*HTTP server listening/))[1]!;
    assert.match(url, /^https:\/\/127\.0\.0\.2:\d+$/);
    assert.equal((await send(`${url}/metrics`, { ca: pki.ca })).status, 401);
    assert.equal((await send(`${url}/metrics`, { ca: pki.ca, auth: `p:${password}` })).status, 200);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;

    const bad = await webConfig('tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n');
    try {
      await execFileP('node', [...CLI, 'run', '--config', cfg, '--web.listen-address', '127.0.0.1:0', '--web.config.file', bad]);
      assert.fail('expected exit 2');
    } catch (err) {
      const e = err as { code: number; stderr: string };
      assert.equal(e.code, 2, e.stderr);
      assert.match(e.stderr, new RegExp(`${bad}:2:14: /tls_server_config/cert_file: cannot read "nope\\.crt": no such file`));
    }
  });
});

describe('a transform module that cannot be loaded', () => {
  for (const [name, code] of [
    ['syntax.mjs', 'export function transform( {\n'],
    ['throws.mjs', 'throw new Error("init failed");\n'],
    ['nofn.mjs', 'export const transform = 5;\n'],
  ] as const) {
    test(`${name}: config validate exits 2 naming the config file and the key`, async () => {
      const dir = await tempDir();
      const mod = join(dir, name);
      await writeFile(mod, code);
      const cfg = join(dir, `${name}.yaml`);
      await writeFile(cfg, `pipeline:\n  enabled: true\n  sourceTopic: a\n  sinkTopic: b\n  transformModule: ${mod}\n`);
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
