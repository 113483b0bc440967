import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, spawnTracked, waitForLine } from '../harness/index.js';
import { tempDirs } from '../harness/tmp.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';

const execFileP = promisify(execFile);

async function eoswatch(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP('node', [...CLI, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const temp = tempDirs('eoswatch-cli-');
const tempDir = () => temp.make();

describe('eoswatch CLI', () => {
  test('--help lists the commands and exits 0', async () => {
    const r = await eoswatch(['--help']);
    assert.equal(r.code, 0);
    for (const c of ['run', 'audit', 'verify', 'chaos', 'config validate', 'demo']) assert.match(r.stdout, new RegExp(`^  ${c}`, 'm'));
  });

  test('chaos rejects an unknown scenario or a bad count with exit 2 and names the option', async () => {
    const a = await eoswatch(['chaos', '--scenario', 'worker-kill,nope']);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /--scenario: unknown scenario "nope"; expected one of: worker-kill, .*zombie.*, all/);
    const b = await eoswatch(['chaos', '--records', '0']);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /--records: expected a positive integer, found "0"/);
  });

  test('chaos --engine flink: its own scenarios, its Flink lines, and options of one engine refused with the other', async () => {
    const bad = [
      [['chaos', '--engine', 'spark'], /--engine: expected eoswatch or flink, found "spark"/],
      [['chaos', '--engine', 'flink', '--scenario', 'worker-kill'], /--scenario: unknown scenario "worker-kill"; expected one of: tm-kill, jm-kill, broker-kill, coordinator-kill, checkpoint-failure, all/],
      [['chaos', '--engine', 'flink', '--flink-version', '1.20,1.17'], /--flink-version: Flink version "1\.17" is not supported: expected one of 1\.20 \(1\.20\.\d+\), 2\.2 \(2\.2\.\d+\)/],
      [['chaos', '--engine', 'flink', '--parallelism', '0'], /--parallelism: expected a positive integer, found "0"/],
      [['chaos', '--engine', 'flink', '--full-speed'], /--full-speed: only with --engine eoswatch/],
      [['chaos', '--flink-version', '2.2'], /--flink-version: only with --engine flink/],
    ] as const;
    for (const [args, message] of bad) {
      const r = await eoswatch([...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
    const help = await eoswatch(['chaos', '--help']);
    assert.match(help.stdout, /Scenarios \(--engine flink\):\n  tm-kill .*\n  jm-kill /);
    assert.match(help.stdout, /--flink-version LIST\s+Flink lines for --engine flink, comma-separated \(1\.20 = 1\.20\.\d+, 2\.2 = 2\.2\.\d+; default 1\.20\)/);
  });

  test('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = await eoswatch(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), pkg.version);
  });

  test('each command has --help', async () => {
    for (const args of [['run', '--help'], ['audit', '--help'], ['verify', '--help'], ['config', 'validate', '--help'], ['demo', '--help'], ['chaos', '--help']]) {
      const r = await eoswatch(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, /^Usage: eoswatch /m);
    }
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
    let up: number | undefined;
    for (let i = 0; i < 50 && up === undefined; i++) {
      up = sampleValue(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()), 'eos_kafka_up');
      if (up === undefined) await new Promise((r) => setTimeout(r, 100));
    }
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
