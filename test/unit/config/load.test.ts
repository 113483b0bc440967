import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfigText, redactConfig, validateConfig } from '../../../src/config/load.js';
import { schema } from '../../../src/config/schema.js';
import { parseDuration, formatDuration } from '../../../src/config/duration.js';
import { expandEnv } from '../../../src/config/env.js';
import { EosError, ErrorCodes, exitCodeFor } from '../../../src/errors.js';

function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfigText(text, 'bad.yaml', env);
  } catch (err) {
    assert.ok(err instanceof EosError, `expected EosError, got ${err}`);
    assert.equal(err.code, ErrorCodes.CONFIG_INVALID);
    assert.equal(exitCodeFor(err), 2);
    return err.details.length ? err.details : [err.message];
  }
  assert.fail('expected the config to be rejected');
}

describe('config', () => {
  test('the example file validates and holds every schema option', async () => {
    const cfg = await loadConfig('config/eoswatch.example.yaml', {});
    assert.equal(cfg.http.port, 7395);
    assert.deepEqual(cfg.kafka.brokers, ['127.0.0.1:9092']);
    // Every documented top-level section and key of the schema appears in the example.
    const text = (await import('node:fs')).readFileSync('config/eoswatch.example.yaml', 'utf8');
    const walk = (s: { properties?: Record<string, unknown> }, path: string): void => {
      for (const [k, sub] of Object.entries(s.properties ?? {})) {
        assert.match(text, new RegExp(`^\\s*#?\\s*${k}:`, 'm'), `example lacks ${path}${k}`);
        walk(sub as { properties?: Record<string, unknown> }, `${path}${k}.`);
      }
    };
    walk(schema as never, '');
  });

  test('every schema property has a description', () => {
    const missing: string[] = [];
    const walk = (s: Record<string, unknown>, path: string): void => {
      for (const [k, sub] of Object.entries((s.properties as Record<string, Record<string, unknown>>) ?? {})) {
        if (typeof sub.description !== 'string' || sub.description.length < 5) missing.push(path + k);
        walk(sub, `${path}${k}.`);
      }
    };
    walk(schema as never, '');
    assert.deepEqual(missing, []);
  });

  test('defaults are filled and durations become milliseconds', () => {
    const cfg = validateConfig({}, 'empty.yaml', {});
    assert.deepEqual(cfg.http, { host: '0.0.0.0', port: 7395, requestTimeout: 10_000, maxConnections: 64, webConfigReloadInterval: 30_000 });
    assert.equal(cfg.log.level, 'info');
    assert.equal(cfg.shutdown.gracePeriod, 20_000);
    assert.equal(cfg.kafka.requestTimeout, 30_000);
    assert.equal(cfg.kafka.healthCheckInterval, 15_000);
    assert.equal(cfg.kafka.ssl.enabled, false);
    assert.equal(cfg.kafka.sasl, undefined);
    const c2 = parseConfigText('shutdown:\n  gracePeriod: 1m30s\nkafka:\n  requestTimeout: 2500\n', 'x.yaml', {});
    assert.equal(c2.shutdown.gracePeriod, 90_000);
    assert.equal(c2.kafka.requestTimeout, 2500);
  });

  test('a comma-separated broker string becomes a list', () => {
    const cfg = parseConfigText('kafka:\n  brokers: "a:9092, b:9093"\n', 'x.yaml', {});
    assert.deepEqual(cfg.kafka.brokers, ['a:9092', 'b:9093']);
  });

  test('${ENV} references are expanded, with defaults, and a number from the environment is coerced', () => {
    const text = 'http:\n  port: ${PORT}\nkafka:\n  brokers: ["${HOST:-localhost}:9092"]\n  sasl:\n    mechanism: plain\n    username: u\n    password: ${PW}\n';
    const cfg = parseConfigText(text, 'x.yaml', { PORT: '8123', PW: 's3cret' });
    assert.equal(cfg.http.port, 8123);
    assert.deepEqual(cfg.kafka.brokers, ['localhost:9092']);
    assert.equal((cfg.kafka.sasl as { password?: string } | undefined)?.password, 's3cret');
  });

  test('nested defaults: ${A:-${B:-x}} is A, else B, else x; an unused default is not expanded', () => {
    const text = 'kafka:\n  clientId: "${A:-${B:-x}}"\n';
    assert.equal(parseConfigText(text, 'x.yaml', { A: 'a', B: 'b' }).kafka.clientId, 'a');
    assert.equal(parseConfigText(text, 'x.yaml', { B: 'b' }).kafka.clientId, 'b');
    assert.equal(parseConfigText(text, 'x.yaml', {}).kafka.clientId, 'x');
    // UNSET in an unused default is no problem; in a used one it is.
    assert.equal(parseConfigText('kafka:\n  clientId: "${A:-${UNSET}}"\n', 'x.yaml', { A: 'a' }).kafka.clientId, 'a');
    assert.ok(problemsOf('kafka:\n  clientId: "${A:-${UNSET}}"\n').some((p) => /environment variable UNSET is not set/.test(p)));
    assert.ok(problemsOf(`kafka:\n  clientId: "${'${A:-'.repeat(9)}x${'}'.repeat(9)}"\n`).some((p) => /nested more than 8 deep/.test(p)));
  });

  test('an unset variable under a secret key: the problem stays readable once redacted, as every output is', async () => {
    const { redactText } = await import('../../../src/redact.js');
    const problems = problemsOf('kafka:\n  brokers: [a:9092]\n  sasl:\n    mechanism: plain\n    username: u\n    password: ${SASL_PW}\n');
    const shown = problems.map(redactText).join('\n');
    assert.match(shown, /environment variable SASL_PW is not set, for \/kafka\/sasl\/password \(set it, or give it a default/);
    assert.doesNotMatch(shown, /REDACTED/);
  });

  test('a value from the environment is quoted as the reference, never as its value', () => {
    const problems = problemsOf('kafka:\n  sasl: ${SASL_PW}\n', { SASL_PW: 'hunter2-pw' });
    assert.deepEqual(problems, ['bad.yaml:2:9: /kafka/sasl: found "${SASL_PW}" (before environment expansion), expected object']);
  });

  test('every duration setting has a minimum and a maximum, none above the longest Node.js timer', () => {
    const missing: string[] = [];
    const walk = (s: Record<string, unknown>, path: string): void => {
      for (const [k, sub] of Object.entries((s.properties as Record<string, Record<string, unknown>>) ?? {})) {
        if (sub.$ref === '#/definitions/duration') {
          if (typeof sub.minDuration !== 'string' || typeof sub.maxDuration !== 'string') missing.push(path + k);
          else {
            assert.ok(parseDuration(sub.maxDuration) <= 2 ** 31 - 1, `${path}${k}: maxDuration ${sub.maxDuration}`);
            assert.ok(parseDuration(sub.minDuration) <= parseDuration(String(sub.default ?? sub.minDuration)), `${path}${k}: default below the minimum`);
            assert.ok(parseDuration(String(sub.default ?? sub.maxDuration)) <= parseDuration(sub.maxDuration), `${path}${k}: default above the maximum`);
          }
        }
        walk(sub, `${path}${k}.`);
      }
    };
    walk(schema as never, '');
    assert.deepEqual(missing, []);
    assert.equal((schema as { definitions: { duration: { maxDuration: string } } }).definitions.duration.maxDuration, '2147483647ms');
  });

  test('$${VAR} stays literal and expansion never changes the YAML structure', () => {
    const { value } = expandEnv({ a: 'x$${Y}', b: '${Y}' }, { Y: 'a: b\nc: d' });
    assert.deepEqual(value, { a: 'x${Y}', b: 'a: b\nc: d' });
  });

  const bad: [string, string, RegExp][] = [
    ['unknown top-level key', 'htp:\n  port: 1\n', /bad\.yaml:1:1: \/htp: unknown key "htp"; expected one of: http, log, shutdown, kafka/],
    ['unknown nested key', 'http:\n  prot: 1\n', /bad\.yaml:2:3: \/http\/prot: unknown key "prot"; expected one of: host, port/],
    ['port not a number', 'http:\n  port: eighty\n', /bad\.yaml:2:9: \/http\/port: found "eighty", expected integer/],
    ['port out of range', 'http:\n  port: 70000\n', /\/http\/port: found 70000, expected a number <= 65535/],
    ['bad duration', 'shutdown:\n  gracePeriod: 10 seconds\n', /bad\.yaml:2:16: \/shutdown\/gracePeriod: found "10 seconds", expected a duration/],
    ['bad log level', 'log:\n  level: loud\n', /\/log\/level: found "loud", expected one of: trace, debug, info, warn, error, fatal, silent/],
    ['broker without port', 'kafka:\n  brokers: [localhost]\n', /\/kafka\/brokers\/0: found "localhost", expected a string matching/],
    ['empty broker list', 'kafka:\n  brokers: []\n', /\/kafka\/brokers: found \[\], expected at least 1 item/],
    ['sasl without password', 'kafka:\n  sasl:\n    mechanism: plain\n    username: u\n', /\/kafka\/sasl\/password: missing required key "password"/],
    ['unknown sasl mechanism', 'kafka:\n  sasl: {mechanism: gssapi, username: u, password: p}\n', /\/kafka\/sasl\/mechanism: found "gssapi", expected one of: plain, scram-sha-256, scram-sha-512/],
    ['unset env var', 'kafka:\n  clientId: ${NOT_SET_ANYWHERE}\n', /bad\.yaml:2:13: environment variable NOT_SET_ANYWHERE is not set, for \/kafka\/clientId/],
    ['YAML syntax error', 'http:\n  port: [1,\n', /bad\.yaml:\d+:\d+: YAML syntax error/],
    ['duplicate key', 'http:\n  port: 1\n  port: 2\n', /bad\.yaml:3:3: YAML syntax error: Map keys must be unique/],
    ['top level is a list', '- a\n- b\n', /expected a mapping of settings at the top level/],
    // Bounds: a timer above 2^31-1 ms fires at once (Node clamps it to 1 ms) and spins.
    ['health check interval above the timer limit', 'kafka:\n  healthCheckInterval: 25d\n', /bad\.yaml:2:24: \/kafka\/healthCheckInterval: found "25d" \(2160000000 ms\), expected at most 24h$/],
    ['LSO monitor interval above the timer limit', 'lsoMonitor:\n  interval: 25d\n', /bad\.yaml:2:13: \/lsoMonitor\/interval: found "25d" \(2160000000 ms\), expected at most 24h$/],
    ['zero health check interval', 'kafka:\n  healthCheckInterval: 0\n', /bad\.yaml:2:24: \/kafka\/healthCheckInterval: found "?0"? \(0 ms\), expected at least 100ms$/],
    ['a huge number as a duration', 'kafka:\n  healthCheckInterval: 1e30\n', /bad\.yaml:2:24: \/kafka\/healthCheckInterval: found "1e\+30", expected a duration/],
    ['a huge number of milliseconds', 'canary:\n  lostAfter: 99999999999\n', /bad\.yaml:2:14: \/canary\/lostAfter: found "?99999999999"?.*expected/],
    ['a huge integer', 'pipeline:\n  checkpoint:\n    tolerableFailedCheckpoints: 1e30\n', /bad\.yaml:3:33: \/pipeline\/checkpoint\/tolerableFailedCheckpoints: found 1e\+30, expected a number <= 1000000/],
    ['a YAML alias bomb', `a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [${Array(10).fill('*a').join(',')}]\nc: &c [${Array(10).fill('*b').join(',')}]\nd: [${Array(10).fill('*c').join(',')}]\n`, /^bad\.yaml:\d+:\d+: YAML aliases expand too much .*expected at most 100 alias expansions$/],
    ['deeply nested flow collections', `x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`, /^bad\.yaml: YAML nested more than 512 brackets deep$/],
    ['deeply nested collections', `x: ${'['.repeat(100)}${']'.repeat(100)}\n`, /^bad\.yaml:1:\d+: YAML nested more than 64 levels deep$/],
    ['a file over 1 MiB', `# ${'x'.repeat(1024 * 1024)}\n`, /^bad\.yaml: \d+ bytes, expected at most 1048576/],
    ['an unclosed ${', 'kafka:\n  clientId: "${A:-${B:-x}"\n', /bad\.yaml:2:13: \/kafka\/clientId: malformed environment reference: unclosed \$\{/],
    ['${VAR-default} (not supported)', 'kafka:\n  clientId: "${A-x}"\n', /bad\.yaml:2:13: \/kafka\/clientId: malformed environment reference: at character 4: expected \} or :-default after \$\{A/],
    ['${ without a name', 'kafka:\n  clientId: "a${1X}"\n', /\/kafka\/clientId: malformed environment reference: at character 4: expected a variable name/],
  ];
  for (const [name, text, expected] of bad) {
    test(`rejects: ${name}`, () => {
      const problems = problemsOf(text);
      assert.ok(problems.some((p) => expected.test(p)), `no problem matches ${expected}:\n${problems.join('\n')}`);
    });
  }

  test('pipeline: defaults, and sourceTopic/sinkTopic required only when enabled', () => {
    const off = validateConfig({}, 'x', {});
    assert.equal(off.pipeline.enabled, false);
    assert.equal(off.pipeline.mode, 'EXACTLY_ONCE');
    assert.equal(off.pipeline.startFrom, 'none');
    assert.equal(off.pipeline.checkpoint.tolerableFailedCheckpoints, 0);
    assert.ok(off.pipeline.checkpoint.timeout < off.pipeline.transactionTimeout, 'the defaults are consistent');
    // Flink's exponential-delay defaults: a one-minute outage costs about a minute, not 2^n s.
    assert.equal(off.pipeline.maxBytesPerPartition, 1_048_576, "the consumer's default max.partition.fetch.bytes");
    assert.deepEqual(problemsOf('pipeline:\n  maxBytesPerPartition: 512\n'), ['bad.yaml:2:25: /pipeline/maxBytesPerPartition: found 512, expected a number >= 1024']);
    assert.deepEqual(off.pipeline.restartStrategy, { type: 'exponential-delay', delay: 10_000, attempts: 0, initialBackoff: 1000, maxBackoff: 60_000, multiplier: 2, jitter: 0.2, resetAfter: 3_600_000 });
    const problems = problemsOf('pipeline:\n  enabled: true\n');
    assert.deepEqual(problems, ['bad.yaml:2:3: /pipeline/sourceTopic: missing required key "sourceTopic"', 'bad.yaml:2:3: /pipeline/sinkTopic: missing required key "sinkTopic"']);
  });

  test('pipeline: rules between keys', () => {
    const problems = problemsOf(
      'pipeline:\n  enabled: true\n  sourceTopic: a\n  sinkTopic: a\n  transactionTimeout: 10s\n  checkpoint:\n    timeout: 15s\n  sessionTimeout: 6s\n  heartbeatInterval: 3s\n',
    );
    assert.ok(problems.some((p) => /bad\.yaml:7:14: \/pipeline\/checkpoint\/timeout: found 15000 ms, expected less than pipeline\.transactionTimeout \(10000 ms\)/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /\/pipeline\/heartbeatInterval: found 3000 ms, expected at most a third of pipeline\.sessionTimeout/.test(p)));
    assert.ok(problems.some((p) => /\/pipeline\/sinkTopic: found "a", expected a topic other than sourceTopic/.test(p)));
  });

  test('flink.sinks: job and topics required, and the LSO monitor must be on to read them', () => {
    const ok = validateConfig({ flink: { enabled: true, restUrls: ['http://jm:8081'], sinks: [{ job: 'orders-.*', topics: ['orders.enriched'] }] } }, 'x', {});
    assert.deepEqual(ok.flink.sinks, [{ job: 'orders-.*', topics: ['orders.enriched'] }]);
    assert.deepEqual(validateConfig({}, 'x', {}).flink.sinks, []);
    assert.ok(problemsOf('flink:\n  sinks:\n    - job: a\n').some((p) => /\/flink\/sinks\/0\/topics: missing required key "topics"/.test(p)));
    const off = problemsOf('flink:\n  enabled: true\n  restUrls: [http://jm:8081]\n  sinks:\n    - job: a\n      topics: [b]\nlsoMonitor:\n  enabled: false\n');
    assert.ok(off.some((p) => /bad\.yaml:5:\d+: \/flink\/sinks: set, expected lsoMonitor\.enabled true/.test(p)), off.join('\n'));
  });

  test('every problem of a file is reported at once', () => {
    const problems = problemsOf('http:\n  port: x\n  hots: y\nlog:\n  level: loud\n');
    assert.equal(problems.length, 3, problems.join('\n'));
  });

  test('a missing file is a config error naming the file', async () => {
    await assert.rejects(loadConfig('/nonexistent/eoswatch.yaml'), (err: EosError) => {
      assert.equal(err.code, ErrorCodes.CONFIG_NOT_FOUND);
      assert.match(err.message, /\/nonexistent\/eoswatch\.yaml: cannot read configuration file: no such file/);
      assert.equal(exitCodeFor(err), 2);
      return true;
    });
  });

  test('loadConfig reads a file and reports its path in problems', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eoswatch-cfg-'));
    try {
      const file = join(dir, 'c.yaml');
      await writeFile(file, 'http:\n  port: -1\n');
      await assert.rejects(loadConfig(file, {}), (err: EosError) => err.details.some((d) => d.startsWith(`${file}:2:9: /http/port`)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('redactConfig hides the SASL password and TLS passphrase', () => {
    const cfg = parseConfigText('kafka:\n  ssl: {enabled: true, passphrase: pp}\n  sasl: {mechanism: plain, username: u, password: hunter2}\n', 'x.yaml', {});
    const shown = JSON.stringify(redactConfig(cfg));
    assert.doesNotMatch(shown, /hunter2|"pp"/);
    assert.equal((cfg.kafka.sasl as { password?: string } | undefined)?.password, 'hunter2', 'the original is untouched');
  });
});

describe('durations', () => {
  const ok: [string | number, number][] = [
    ['250ms', 250], ['10s', 10_000], ['5m', 300_000], ['1h', 3_600_000], ['1h30m', 5_400_000], ['1.5s', 1500], ['2d', 172_800_000], [1234, 1234], ['42', 42],
  ];
  for (const [input, ms] of ok) test(`${JSON.stringify(input)} = ${ms} ms`, () => assert.equal(parseDuration(input), ms));
  for (const input of ['', 's', '10 s', '5x', '1h-2m', '-5s']) {
    test(`rejects ${JSON.stringify(input)}`, () => assert.throws(() => parseDuration(input), /invalid duration/));
  }
  test('formatDuration picks the largest whole unit', () => {
    assert.equal(formatDuration(3_600_000), '1h');
    assert.equal(formatDuration(90_000), '90s');
    assert.equal(formatDuration(120_000), '2m');
    assert.equal(formatDuration(250), '250ms');
  });
});
