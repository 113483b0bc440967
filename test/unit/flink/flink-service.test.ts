// The Flink service when the REST API cannot be had: a refused connection and a JobManager that
// never answers are eos_flink_rest_up 0 and not ready, with the URL in the reason and never the
// credentials; a bad job-name pattern is a configuration error naming the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { FlinkConfig } from '../../../src/config/types.js';
import { FlinkService } from '../../../src/flink/flink-service.js';
import { createLogger } from '../../../src/log.js';
import { createRegistry } from '../../../src/metrics/registry.js';

const silent = createLogger('silent');
const config = (restUrls: string[], extra: Partial<FlinkConfig> = {}): FlinkConfig => ({
  enabled: true,
  restUrls,
  jobs: { names: [], ids: [] },
  pollInterval: 60_000,
  requestTimeout: 300,
  tls: { rejectUnauthorized: true },
  sinks: [],
  ...extra,
});

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

test('an unreachable REST API is eos_flink_rest_up 0 and not ready; the reason names the URL, never the password', async () => {
  const port = await closedPort();
  const registry = createRegistry();
  const s = new FlinkService(config([`http://127.0.0.1:${port}`], { auth: { username: 'ops', password: 's3cret-pw' } }), { logger: silent, registry, fatal: () => undefined });
  await s.start();
  try {
    const h = s.ready();
    assert.equal(h.ready, false);
    assert.match(h.detail ?? '', new RegExp(`127\\.0\\.0\\.1:${port}/jobs/overview`));
    assert.doesNotMatch(h.detail ?? '', /s3cret-pw|b3BzOnMzY3JldC1wdw/);
    assert.match(await registry.metrics(), /^eos_flink_rest_up 0$/m);
  } finally {
    await s.stop();
  }
});

test('a JobManager that accepts but never answers is cut by the request timeout', async () => {
  const sockets = new Set<import('node:net').Socket>();
  const srv = createServer((sock) => sockets.add(sock));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const registry = createRegistry();
  const s = new FlinkService(config([`http://127.0.0.1:${port}`]), { logger: silent, registry, fatal: () => undefined });
  const t0 = Date.now();
  await s.start();
  try {
    assert.ok(Date.now() - t0 < 5000, 'the poll did not wait beyond the timeout');
    assert.match(s.ready().detail ?? '', /no answer within 300 ms/);
    assert.match(await registry.metrics(), /^eos_flink_rest_up 0$/m);
  } finally {
    await s.stop();
    for (const sock of sockets) sock.destroy();
    await new Promise((r) => srv.close(r));
  }
});

test('an invalid job-name pattern is a configuration error naming the key', () => {
  assert.throws(
    () => new FlinkService(config(['http://127.0.0.1:1'], { jobs: { names: ['ok-.*', 'bad('], ids: [] } }), { logger: silent, registry: createRegistry(), fatal: () => undefined }),
    (err: Error & { code?: string }) => err.code === 'EOS_CONFIG_INVALID' && /flink\.jobs\.names\[1\]: "bad\(" is not a valid regular expression/.test(err.message),
  );
});

test('flink.transactionalIdPrefixes: a bad job pattern names the key; the first entry matching the whole job name gives the prefix', async () => {
  const { transactionalIdPrefixOf } = await import('../../../src/flink/flink-service.js');
  assert.throws(
    () => new FlinkService(config(['http://127.0.0.1:1'], { transactionalIdPrefixes: [{ job: 'a', prefix: 'p' }, { job: 'b[', prefix: 'q' }] }), { logger: silent, registry: createRegistry(), fatal: () => undefined }),
    (err: Error & { code?: string }) => err.code === 'EOS_CONFIG_INVALID' && /flink\.transactionalIdPrefixes\[1\]\.job: "b\[" is not a valid regular expression/.test(err.message),
  );
  const entries = [
    { job: 'orders', prefix: 'exact' },
    { job: 'orders-.*', prefix: 'any-orders' },
    { job: '.*', prefix: 'fallback' },
  ];
  assert.equal(transactionalIdPrefixOf(entries, 'orders'), 'exact');
  assert.equal(transactionalIdPrefixOf(entries, 'orders-enrich'), 'any-orders');
  assert.equal(transactionalIdPrefixOf(entries.slice(0, 2), 'my-orders'), undefined, 'the whole name must match');
  assert.equal(transactionalIdPrefixOf(undefined, 'orders'), undefined);
  const registry = createRegistry();
  assert.equal(new FlinkService(config(['http://127.0.0.1:1']), { logger: silent, registry, fatal: () => undefined }).tracksCommits, false);
  assert.equal(new FlinkService(config(['http://127.0.0.1:1'], { transactionalIdPrefixes: entries }), { logger: silent, registry, fatal: () => undefined }).tracksCommits, true);
  const { parseConfigText } = await import('../../../src/config/load.js');
  const flink = 'kafka: {brokers: ["127.0.0.1:9092"]}\nflink:\n  enabled: true\n  restUrls: ["http://jm:8081"]\n';
  assert.deepEqual(parseConfigText(flink, 'x.yaml', {}).flink.transactionalIdPrefixes, [], 'default: none');
  assert.throws(
    () => parseConfigText(`${flink}  transactionalIdPrefixes: [{job: orders}]\n`, 'x.yaml', {}),
    (err: Error & { details?: string[] }) => /^x\.yaml/.test(err.message) && (err.details ?? []).some((d) => /^x\.yaml:5:\d+: \/flink\/transactionalIdPrefixes\/0\/prefix: missing required key "prefix"$/.test(d)),
  );
});

test('the Flink REST credentials are redacted from the printed and logged configuration', async () => {
  const { parseConfigText, redactConfig } = await import('../../../src/config/load.js');
  const cfg = parseConfigText(
    'kafka: {brokers: ["127.0.0.1:9092"]}\npipeline: {enabled: false}\nflink:\n  enabled: true\n  restUrls: ["https://jm:8081"]\n  auth: {username: ops, password: pw-9f2c, bearerToken: tok-77ab}\n',
    'x.yaml',
    {},
  );
  const shown = JSON.stringify(redactConfig(cfg));
  assert.doesNotMatch(shown, /pw-9f2c|tok-77ab/);
  assert.equal(cfg.flink.auth?.bearerToken, 'tok-77ab', 'the original is untouched');
});

test('REST URLs are shown without user info (logs, readiness, the audit source name)', async () => {
  const { shownUrl } = await import('../../../src/flink/rest-client.js');
  const { flinkJobsSource } = await import('../../../src/audit/sources/flink.js');
  assert.equal(shownUrl('https://ops:pw-3e1d@jm.example:8081/flink/'), 'https://jm.example:8081/flink');
  assert.equal(flinkJobsSource(config(['http://ops:pw-3e1d@127.0.0.1:8081', 'http://127.0.0.1:8082'])).name, 'flink-jobs:http://127.0.0.1:8081,http://127.0.0.1:8082');
});
