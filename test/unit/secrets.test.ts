// Property-based: random secrets, written in every shape a secret takes in the files and values
// eoswatch reads (JAAS lines, *.password keys, stray `\` continuations gluing them onto a checked
// key, malformed escapes, URLs with userinfo, bearer tokens, PEM keys, ${ENV} values), go through
// every output: audit table/JSON/Markdown, /audit over HTTP, pino logs, configuration errors and
// `config validate --print`. None may show any 6-character piece of a secret. Seeded: a failure
// names its seed and reproduces.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import express from 'express';
import { runAudit } from '../../src/audit/runner.js';
import { propertiesSource } from '../../src/audit/sources/files.js';
import { ALL_CHECKS } from '../../src/audit/checks/index.js';
import { formatJson, formatMarkdown, formatTable } from '../../src/audit/report.js';
import { AuditService } from '../../src/audit/audit-service.js';
import { parseConfigText, redactConfig, validateConfig } from '../../src/config/load.js';
import { createKafka } from '../../src/kafka/client.js';
import { createLogger } from '../../src/log.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { isSecretKey, redactText } from '../../src/redact.js';
import { handler as configValidate } from '../../src/commands/config-validate.js';
import { captureStream } from '../harness/capture.js';
import { memoryLogger } from '../harness/log.js';
import { tempDirs } from '../harness/tmp.js';
import { kafkajsSourceTexts, RECORDED_KAFKAJS_TEXTS } from '../harness/kafkajs-texts.js';

const SEED = Number(process.env.EOSWATCH_SECRETS_SEED ?? 0x5ec2e7);

/** mulberry32: small, seeded, good enough to spread cases. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** Anything a password may hold, except | and newlines (Markdown escapes those) and the quote of its own JAAS value. */
const ANY = `${ALNUM} !#$%&'()*+,-./:;<=>?@[]^_\`{}~éß€`;
const TOKEN68 = `${ALNUM}-._~+/`;

class Gen {
  readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = rng(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)]!;
  }
  /** Starts with 4 alphanumerics so that the secret is unique in any output. */
  secret(alphabet = ANY, extra = ''): string {
    let s = '';
    for (let i = 0; i < 4; i++) s += this.pick([...ALNUM]);
    const n = this.int(6, 24);
    for (let i = 0; i < n; i++) s += this.pick([...alphabet, ...extra]);
    return s;
  }
}

/** Every 6-character window with at least 3 alphanumerics (so that punctuation runs do not match syntax). */
function windows(secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 6 <= secret.length; i++) {
    const w = secret.slice(i, i + 6);
    if ([...w].filter((c) => ALNUM.includes(c)).length >= 3) out.push(w);
  }
  return out;
}

/** Every string inside a JSON text, decoded, besides the text itself: a leak may hide behind JSON escapes. */
function decodedJson(text: string): string {
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) {
      strings.push(k);
      walk(x);
    }
  };
  for (const line of text.split('\n')) {
    try {
      walk(JSON.parse(line));
    } catch {
      // not a JSON line
    }
  }
  try {
    walk(JSON.parse(text));
  } catch {
    // not one JSON document
  }
  return strings.join('\n');
}

function assertNoLeak(output: string, secrets: string[], where: string, seed: number): void {
  const all = `${output}\n${decodedJson(output)}`;
  for (const s of secrets) {
    for (const w of windows(s)) {
      assert.ok(!all.includes(w), `${where} (seed ${seed}): a piece "${w}" of the secret ${JSON.stringify(s)} shows in:\n${all.slice(0, 3000)}`);
    }
  }
}

/** A .properties value as Properties.load reads it back: \ escaped, non-Latin-1 as \uXXXX, leading space kept. */
function propEscape(v: string): string {
  let out = '';
  for (const [i, c] of [...v].entries()) {
    if (c === '\\') out += '\\\\';
    else if (i === 0 && c === ' ') out += '\\ ';
    else if (c.charCodeAt(0) > 0xff) out += `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return out;
}

const JAAS_MODULES = ['org.apache.kafka.common.security.plain.PlainLoginModule', 'org.apache.kafka.common.security.scram.ScramLoginModule'];

/** One producer or consumer .properties text hiding secrets, and the key a check will quote. */
function propertiesCase(g: Gen): { role: 'producer' | 'consumer'; text: string; secrets: string[]; victim: string } {
  const role = g.pick(['producer', 'consumer'] as const);
  // Keys whose value a check quotes in its finding when it is wrong.
  const victim = role === 'producer' ? g.pick(['acks=all', 'enable.idempotence=true', 'acks=1']) : g.pick(['isolation.level=read_committed', 'isolation.level=read_uncommitted']);
  const jaasSecret = g.secret(ANY.replace(/["\\]/g, ''));
  const plain = g.secret();
  const url = g.secret(ALNUM + '-._~!$&()*+,;=');
  const token = g.secret(TOKEN68);
  const shapes = [
    // A stray continuation glues the next line onto the checked key's value.
    () => ({ text: `${victim} \\\nsasl.jaas.config=${g.pick(JAAS_MODULES)} required username="app" password="${jaasSecret}";`, secrets: [jaasSecret] }),
    () => ({ text: `${victim} \\\n  ssl.key.password=${propEscape(plain)}`, secrets: [plain] }),
    () => ({ text: `${victim} \\\nssl.truststore.password ${propEscape(plain.replace(/^[=: ]+/, ''))}`, secrets: [plain.replace(/^[=: ]+/, '')] }),
    () => ({ text: `${victim} \\\nbasic.auth.user.info=user:${propEscape(plain)}`, secrets: [plain] }),
    () => ({ text: `${victim} \\\nsasl.oauthbearer.client.secret=${propEscape(plain)}`, secrets: [plain] }),
    () => ({ text: `${victim} \\\nbootstrap.servers=https://user:${url}@kafka.example:9093`, secrets: [url] }),
    () => ({ text: `${victim} \\\nAuthorization: Bearer ${token}`, secrets: [token] }),
    () => ({ text: `${victim} \\\n  password=${propEscape(plain)} \\\n  more=1`, secrets: [plain] }),
    // Malformed \u escapes next to a secret: the problem names the line, not the text.
    () => ({ text: `${victim}\nsasl.jaas.config=${g.pick(JAAS_MODULES)} required password="${jaasSecret}\\u12";`, secrets: [jaasSecret] }),
    () => ({ text: `${victim}\nssl.key.password\\\n${propEscape(plain)}\\u1`, secrets: [plain] }),
  ];
  const chosen = [g.pick(shapes)(), g.pick(shapes)()];
  return { role, text: `${chosen.map((c) => c.text).join('\n')}\n`, secrets: chosen.flatMap((c) => c.secrets), victim: victim.split('=')[0]! };
}

const temp = tempDirs('eoswatch-secrets-');
const tempDir = () => temp.make();

describe('no secret reaches any output (property-based)', () => {
  test('audit table, JSON and Markdown', async () => {
    const dir = await tempDir();
    let quotedVictim = 0;
    for (let i = 0; i < 150; i++) {
      const seed = SEED + i;
      const g = new Gen(seed);
      const c = propertiesCase(g);
      const file = join(dir, `case-${i}.properties`);
      await writeFile(file, c.text, 'latin1');
      const report = await runAudit([propertiesSource(c.role, file)], ALL_CHECKS);
      for (const [name, text] of [['table', formatTable(report, { all: true })], ['JSON', formatJson(report)], ['Markdown', formatMarkdown(report)]] as const) {
        assertNoLeak(text, c.secrets, `audit ${name} of ${JSON.stringify(c.text)}`, seed);
      }
      if (report.findings.some((f) => f.observed.startsWith(`${c.victim}=`) && f.observed.includes('[REDACTED]'))) quotedVictim++;
    }
    // The glued secrets really went through a quoted value (the path the finding is about), not around it.
    assert.ok(quotedVictim > 30, `only ${quotedVictim} cases had a redacted quoted value`);
  });

  test('/audit over HTTP', async (t) => {
    const dir = await tempDir();
    const cases = Array.from({ length: 40 }, (_, i) => propertiesCase(new Gen(SEED + 1000 + i)));
    const producerConfigs: string[] = [];
    const consumerConfigs: string[] = [];
    for (const [i, c] of cases.entries()) {
      const file = join(dir, `http-${i}.properties`);
      await writeFile(file, c.text, 'latin1');
      (c.role === 'producer' ? producerConfigs : consumerConfigs).push(file);
    }
    const config = validateConfig({ kafka: { brokers: ['127.0.0.1:1'] }, audit: { cluster: false, producerConfigs, consumerConfigs } }, 'test', {});
    const logger = createLogger('silent');
    const audit = new AuditService(config, createKafka(config.kafka, logger), { logger, registry: createRegistry(), fatal: () => undefined });
    t.after(() => audit.stop());
    await audit.runOnce();
    const app = express();
    app.use('/audit', audit.router());
    const server = app.listen(0, '127.0.0.1');
    t.after(() => server.close());
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/audit`);
    assert.equal(res.status, 200);
    const body = await res.text();
    assert.ok(body.includes('[REDACTED]'));
    assertNoLeak(body, cases.flatMap((c) => c.secrets), '/audit', SEED + 1000);
  });

  test('pino logs: secret keys at any depth, secrets inside strings, errors and messages', () => {
    for (let i = 0; i < 200; i++) {
      const seed = SEED + 2000 + i;
      const g = new Gen(seed);
      const { log, lines } = memoryLogger();
      const s = g.secret();
      const quoted = g.secret(ANY.replace(/["\\]/g, ''));
      const tok = g.secret(TOKEN68);
      const userinfo = g.secret(ALNUM + '-._~!$&()*+,;=');
      const key = g.pick(['password', 'sasl.jaas.config', 'ssl.key.password', 'passphrase', 'token', 'apiToken', 'clientSecret', 'Authorization', 'secret', 'credentials', 'key']);
      let nested: Record<string, unknown> = { [key]: s };
      for (let d = g.int(0, 6); d > 0; d--) nested = { [g.pick(['kafka', 'sasl', 'options', 'a', 'ssl', 'config'])]: nested };
      const strings = [
        `connect failed: ${g.pick(JAAS_MODULES)} required username="u" password="${quoted}";`,
        `GET https://admin:${userinfo}@prometheus.example/api`,
        `header Authorization: Bearer ${tok}`,
        `sasl.jaas.config=${g.pick(JAAS_MODULES)} required password="${quoted}";`,
        `-----BEGIN PRIVATE KEY-----\n${tok}\n-----END PRIVATE KEY-----`,
        `{"password":"${quoted}"}`,
      ];
      const str = g.pick(strings);
      log.info({ ...nested, detail: str, list: [str, { [key]: s }] }, g.pick(['config', `config ${str}`]));
      log.child({ service: 'x', [key]: s }).warn({ err: new Error(str, { cause: new Error(str) }) }, 'failed');
      log.error(new Error(str), str);
      assertNoLeak(lines.join(''), [s, quoted, tok, userinfo].filter((x) => str.includes(x) || x === s), `log of ${JSON.stringify(str)} under ${key}`, seed);
    }
  });

  test("kafkajs' error texts come through byte for byte; a secret planted inside one is still redacted", () => {
    const texts = [...RECORDED_KAFKAJS_TEXTS, ...kafkajsSourceTexts()];
    for (let i = 0; i < 300; i++) {
      const seed = SEED + 6000 + i;
      const g = new Gen(seed);
      const text = g.pick(texts);
      const plain = g.secret();
      const quoted = g.secret(ANY.replace(/["\\]/g, ''));
      const tok = g.secret(TOKEN68);
      const userinfo = g.secret(ALNUM + '-._~!$&()*+,;=');
      // Where a secret ends up next to a kafkajs text: a JAAS line or a password glued after it,
      // a URL with userinfo as the broker, a bearer token, a `key:` that is not an API key.
      const plants: [string, string][] = [
        [`${text} sasl.jaas.config=${g.pick(JAAS_MODULES)} required username="u" password="${quoted}";`, quoted],
        [`${text}: ${g.pick(JAAS_MODULES)} required username="u" password="${quoted}";`, quoted],
        [`${text} password=${plain}`, plain],
        [`${text} (broker https://admin:${userinfo}@kafka.example:9093)`, userinfo],
        [`${text} Authorization: Bearer ${tok}`, tok],
        [`${text} key: ${plain}`, plain],
        [`${text} {"ssl.key.password":"${quoted}"}`, quoted],
      ];
      const [planted, secret] = g.pick(plants);
      const { log, lines } = memoryLogger();
      log.warn({ namespace: 'Connection', broker: '127.0.0.1:39093', error: planted }, text);
      log.error({ err: new Error(planted) }, planted);
      const out = lines.join('');
      assertNoLeak(out, [secret], `kafkajs text ${JSON.stringify(planted)}`, seed);
      // The kafkajs text itself, as the line's message and as the start of the planted one, byte for byte.
      const first = JSON.parse(lines[0]!) as { msg: string; error: string };
      assert.equal(first.msg, text, `(seed ${seed}) the message changed`);
      assert.ok(first.error.startsWith(text), `(seed ${seed}) ${JSON.stringify(first.error)} does not start with ${JSON.stringify(text)}`);
      assert.equal(redactText(text), text);
    }
  });

  test('configuration errors never quote a secret', () => {
    for (let i = 0; i < 200; i++) {
      const seed = SEED + 3000 + i;
      const g = new Gen(seed);
      const s = g.secret();
      const yamlString = JSON.stringify(s);
      const userinfo = g.secret(ALNUM + '-._~!$&()*+,;=');
      const cases: [string, NodeJS.ProcessEnv][] = [
        ['kafka:\n  sasl: ${SASL_PW}\n', { SASL_PW: s }],
        ['http:\n  port: ${SASL_PW}\n', { SASL_PW: s }],
        ['log:\n  level: "${SASL_PW}"\n', { SASL_PW: s }],
        ['kafka:\n  brokers: ["${SASL_PW}"]\n', { SASL_PW: s }],
        ['kafka:\n  healthCheckInterval: "${SASL_PW}"\n', { SASL_PW: s }],
        ['kafka:\n  clientId: {x: "x${SASL_PW}"}\n', { SASL_PW: s }],
        ['${SASL_PW}\n', { SASL_PW: s }],
        [`kafka:\n  sasl: {mechanism: plain, username: u, password: {v: ${yamlString}}}\n`, {}],
        [`kafka:\n  ssl: {passphrase: {x: ${yamlString}}}\n`, {}],
        [`kafka:\n  sasl: {mechanism: ${yamlString}, username: u, password: p}\n`.replace(`mechanism: ${yamlString}`, `mechanism: plain, password2: ${yamlString}`), {}],
        [`kafka:\n  brokers: ["kafka://u:${userinfo}@h:9092"]\n`, {}],
        [`kafka:\n  sasl:\n    password: ${yamlString.slice(0, -1)}\n`, {}],
        [`kafka:\n  sasl: {password: ${yamlString}\n`, {}],
      ];
      const [text, env] = g.pick(cases);
      let message = '';
      try {
        parseConfigText(text, 'c.yaml', env);
      } catch (err) {
        const e = err as { message: string; details?: string[] };
        message = [e.message, ...(e.details ?? [])].join('\n');
      }
      assert.ok(message, `(seed ${seed}) expected ${JSON.stringify(text)} to be rejected`);
      assertNoLeak(message, [s, userinfo], `config error for ${JSON.stringify(text)}`, seed);
    }
  });

  test('config validate --print (redactConfig) and the command', async () => {
    for (let i = 0; i < 100; i++) {
      const seed = SEED + 4000 + i;
      const g = new Gen(seed);
      const pw = g.secret();
      const pp = g.secret();
      const text = 'kafka:\n  ssl: {enabled: true, passphrase: "${PP}"}\n  sasl: {mechanism: plain, username: u, password: "${PW}"}\n';
      const cfg = parseConfigText(text, 'c.yaml', { PW: pw, PP: pp });
      assert.equal((cfg.kafka.sasl as { password?: string } | undefined)?.password, pw);
      assertNoLeak(JSON.stringify(redactConfig(cfg), null, 2), [pw, pp], 'redactConfig', seed);
    }
    const g = new Gen(SEED + 5000);
    const pw = g.secret();
    const dir = await tempDir();
    const file = join(dir, 'c.yaml');
    await writeFile(file, 'kafka:\n  sasl: {mechanism: plain, username: u, password: "${PW}"}\n');
    // The command in this process (test/integration/cli.test.ts runs the CLI as a process), with
    // PW in the environment as the CLI would have it.
    const out = captureStream();
    process.env.PW = pw;
    try {
      assert.equal(await configValidate(['validate', file, '--print'], out.stream), 0);
    } finally {
      delete process.env.PW;
    }
    assert.match(out.text(), /\[REDACTED\]/);
    assertNoLeak(out.text(), [pw], 'config validate --print', SEED + 5000);
  });
});

describe('redaction rules', () => {
  test('secret keys', () => {
    for (const k of ['password', 'sasl.jaas.config', 'ssl.key.password', 'ssl.keystore.password', 'ssl.truststore.password', 'ssl.keystore.key', 'basic.auth.user.info', 'sasl.oauthbearer.client.secret', 'passphrase', 'apiToken', 'Authorization', 'SASL_PW', 'key', 'clientSecret', 'credentials']) {
      assert.ok(isSecretKey(k), k);
    }
    for (const k of ['acks', 'enable.idempotence', 'keyFile', 'caFile', 'key.serializer', 'ssl.keystore.location', 'transactional.id', 'username', 'brokers', 'isolation.level']) {
      assert.ok(!isSecretKey(k), k);
    }
  });

  test('free text: the value after a secret key, JAAS options, bearer tokens, URL userinfo, PEM keys; the rest kept', () => {
    assert.equal(redactText('acks=all sasl.jaas.config=x.PlainLoginModule required password="p";'), 'acks=all sasl.jaas.config=[REDACTED]');
    assert.equal(redactText('x.PlainLoginModule required username="u" password="p\\"q";'), 'x.PlainLoginModule required username="u" password="[REDACTED]";');
    assert.equal(redactText('acks=all ssl.key.password p q'), 'acks=all ssl.key.password [REDACTED]');
    assert.equal(redactText('the password is wrong'), 'the password is wrong');
    assert.equal(redactText('Authorization: Bearer abc.def.ghi'), 'Authorization: [REDACTED]');
    assert.equal(redactText('sent Bearer abcdefghij'), 'sent Bearer [REDACTED]');
    assert.equal(redactText('kafka://user:p@ss@host:9092/x'), 'kafka://user:[REDACTED]@host:9092/x');
    assert.equal(redactText('{"password":"x","b":1}'), '{"password":"[REDACTED]","b":1}');
    assert.equal(redactText('a -----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY----- b'), 'a [REDACTED] b');
    const once = redactText('p: password="x" https://u:v@h');
    assert.equal(redactText(once), once, 'idempotent');
  });

  test('linear time on long tokens (a base64 blob or a dotted run in a log line)', () => {
    for (const text of ['A'.repeat(200_000), 'a.'.repeat(100_000), 'a://'.repeat(50_000), `${'x'.repeat(100_000)}=`, '"'.repeat(100_000)]) {
      const t0 = performance.now();
      redactText(text);
      const ms = performance.now() - t0;
      // Linear is well under a second here; the quadratic patterns this guards against took 12.6 s for 20,000 characters.
      assert.ok(ms < 5000, `${ms.toFixed(0)} ms for ${JSON.stringify(text.slice(0, 8))}...`);
    }
  });
});
