import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { producerChecks } from '../../../../src/audit/checks/producer.js';
import { consumerChecks } from '../../../../src/audit/checks/consumer.js';
import { checkpointChecks } from '../../../../src/audit/checks/checkpoint.js';
import { readPropertiesFile } from '../../../../src/audit/parsers/properties.js';
import { flinkCheckpointFacts, readFlinkConfigFile } from '../../../../src/audit/parsers/flink-config.js';
import type { AuditFacts, BrokerFacts, Check, CheckpointFacts, CheckResult, ClientFacts } from '../../../../src/audit/types.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../../../fixtures/audit/${name}`, import.meta.url));
const all: Check[] = [...producerChecks, ...consumerChecks, ...checkpointChecks];

function check(id: string): Check {
  const c = all.find((x) => x.id === id);
  assert.ok(c, `no check ${id}`);
  return c;
}

function facts(partial: Partial<AuditFacts>): AuditFacts {
  return { clients: [], checkpoints: [], ...partial };
}

function client(role: ClientFacts['role'], file: string, entries: Record<string, string>): ClientFacts {
  return { role, file, props: new Map(Object.entries(entries)) };
}

/** The one result of `id` for `target`. */
function result(id: string, f: AuditFacts, target: string): CheckResult {
  const rs = check(id).evaluate(f).filter((r) => r.target === target);
  assert.equal(rs.length, 1, `${id} on ${target}: ${JSON.stringify(check(id).evaluate(f))}`);
  return rs[0]!;
}

function broker(id: number, maxTimeout: string | null): BrokerFacts {
  return { id, configs: new Map([['transaction.max.timeout.ms', { value: maxTimeout, source: maxTimeout === null ? 'default' : 'static' }]]) };
}

const pipelineCheckpoint: CheckpointFacts = {
  origin: 'pipeline',
  target: 'pipeline:default',
  mode: 'EXACTLY_ONCE',
  intervalMs: 10_000,
  timeoutMs: 30_000,
  minPauseMs: 1000,
  tolerableFailed: 0,
};

async function fromFile(role: ClientFacts['role'], name: string): Promise<ClientFacts> {
  const path = fixture(name);
  return { role, file: path, props: (await readPropertiesFile(path)).props };
}

async function flinkFacts(name: string): Promise<CheckpointFacts> {
  const path = fixture(name);
  return flinkCheckpointFacts((await readFlinkConfigFile(path)).props, `flink:${path}`);
}

describe('check definitions', () => {
  test('ids are unique, grouped, and every check says why and how', () => {
    const ids = all.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual(ids, [
      'producer.enable-idempotence',
      'producer.acks',
      'producer.retries',
      'producer.retry-backoff',
      'producer.request-timeout',
      'producer.max-in-flight',
      'producer.transactional-id',
      'producer.transaction-timeout',
      'consumer.isolation-level',
      'consumer.auto-offset-reset',
      'consumer.enable-auto-commit',
      'checkpoint.mode',
      'checkpoint.tolerable-failures',
      'checkpoint.timeout',
      'checkpoint.min-pause',
      'checkpoint.retain-on-cancellation',
      'checkpoint.max-concurrent',
      'checkpoint.unaligned-exactly-once',
      'checkpoint.state-backend',
      'flink.kafka-sink-exactly-once',
    ]);
    for (const c of all) {
      assert.match(c.id, /^[a-z]+\.[a-z-]+$/);
      assert.ok(c.title && c.rationale.length > 40 && c.remediation.length > 10, c.id);
      assert.ok(['critical', 'warning', 'info'].includes(c.severity));
    }
  });

  test('checks without facts report nothing', () => {
    for (const c of all) assert.deepEqual(c.evaluate(facts({})), [], c.id);
  });
});

describe('producer checks on the fixtures', () => {
  test('producer-safe.properties passes every producer check', async () => {
    const safe = await fromFile('producer', 'producer-safe.properties');
    const f = facts({ clients: [safe], checkpoints: [pipelineCheckpoint] });
    for (const c of producerChecks) {
      const r = result(c.id, f, `producer:${safe.file}`);
      assert.equal(r.passed, true, `${c.id}: ${r.observed}`);
    }
    assert.equal(result('producer.acks', f, `producer:${safe.file}`).observed, 'acks=all');
  });

  test('producer-unsafe.properties fails them, saying the values', async () => {
    const unsafe = await fromFile('producer', 'producer-unsafe.properties');
    const t = `producer:${unsafe.file}`;
    const f = facts({ clients: [unsafe], checkpoints: [pipelineCheckpoint] });
    const expect: Record<string, [string, string]> = {
      'producer.enable-idempotence': ['enable.idempotence=false', 'enable.idempotence=true'],
      'producer.acks': ['acks=1', 'acks=all'],
      'producer.retries': ['retries=3', '2147483647'],
      'producer.retry-backoff': ['retry.backoff.ms=100', '>= 1000'],
      'producer.request-timeout': ['request.timeout.ms=5000', '>= 30000'],
      'producer.max-in-flight': ['max.in.flight.requests.per.connection=10', '<= 5'],
      'producer.transactional-id': ['transactional.id unset', 'transactional.id set'],
      'producer.transaction-timeout': ['transaction.timeout.ms=3600000 (1h)', 'at most 900000 ms (15m)'],
    };
    for (const [id, [observed, expected]] of Object.entries(expect)) {
      const r = result(id, f, t);
      assert.equal(r.passed, false, id);
      assert.ok(r.observed.includes(observed), `${id} observed: ${r.observed}`);
      assert.ok(r.expected.includes(expected), `${id} expected: ${r.expected}`);
    }
  });

  test('a Flink KafkaSink\'s producer properties (file flink:<path>): no transactional.id demanded, timeout judged once on the job', async () => {
    const cp = await flinkFacts('flink-conf.yaml');
    const sink = client('producer', cp.target, { 'transaction.timeout.ms': '3600000' });
    const f = facts({ clients: [sink], checkpoints: [cp] });
    assert.deepEqual(check('producer.transactional-id').evaluate(f), []);
    const timeouts = check('producer.transaction-timeout').evaluate(f);
    assert.deepEqual(timeouts.map((r) => r.target), [cp.target]);
    // The other producer settings of the sink are still judged.
    assert.equal(result('producer.retry-backoff', f, `producer:${cp.target}`).passed, false);
  });

  test('the target of eoswatch\'s own pipeline is the pipeline', () => {
    const f = facts({ clients: [client('producer', 'pipeline:default', { acks: 'all' })] });
    assert.equal(result('producer.acks', f, 'pipeline:default').passed, true);
  });
});

describe('producer checks: defaults and edges', () => {
  const one = (id: string, entries: Record<string, string>, extra: Partial<AuditFacts> = {}): CheckResult =>
    result(id, facts({ clients: [client('producer', 'p.properties', entries)], ...extra }), 'producer:p.properties');

  test('enable.idempotence: unset passes (default true) unless a conflict turns the default off', () => {
    let r = one('producer.enable-idempotence', {});
    assert.equal(r.passed, true);
    assert.equal(r.observed, 'enable.idempotence unset (default true since Kafka 3.0)');
    r = one('producer.enable-idempotence', { acks: '1' });
    assert.equal(r.passed, false);
    assert.match(r.observed, /unset, but acks=1 turns the default off/);
    assert.equal(one('producer.enable-idempotence', { retries: '0' }).passed, false);
    assert.equal(one('producer.enable-idempotence', { 'max.in.flight.requests.per.connection': '6' }).passed, false);
    assert.equal(one('producer.enable-idempotence', { 'enable.idempotence': ' TRUE ' }).passed, true);
  });

  test('acks: unset and -1 pass, 0 fails', () => {
    assert.equal(one('producer.acks', {}).observed, 'acks unset (default all since Kafka 3.0)');
    assert.equal(one('producer.acks', {}).passed, true);
    assert.equal(one('producer.acks', { acks: '-1' }).passed, true);
    assert.equal(one('producer.acks', { acks: '0' }).passed, false);
  });

  test('enable.idempotence unset with acks=-1 (= all) is no conflict: it passes', () => {
    for (const acks of ['-1', 'all', 'ALL']) {
      const r = one('producer.enable-idempotence', { acks });
      assert.equal(r.passed, true, `acks=${acks}: ${r.observed}`);
      assert.equal(r.observed, 'enable.idempotence unset (default true since Kafka 3.0)');
    }
    assert.match(one('producer.enable-idempotence', { acks: '0' }).observed, /unset, but acks=0 turns the default off/);
  });

  test('retries: unset or Integer.MAX_VALUE', () => {
    assert.equal(one('producer.retries', {}).passed, true);
    assert.match(one('producer.retries', {}).observed, /unset \(default 2147483647\)/);
    assert.equal(one('producer.retries', { retries: '2147483647' }).passed, true);
    assert.equal(one('producer.retries', { retries: '1000000' }).passed, false);
  });

  test('retry.backoff.ms: unset is the default 100 and fails', () => {
    const r = one('producer.retry-backoff', {});
    assert.equal(r.passed, false);
    assert.equal(r.observed, 'retry.backoff.ms unset (default 100)');
    assert.equal(one('producer.retry-backoff', { 'retry.backoff.ms': '1000' }).passed, true);
    assert.equal(one('producer.retry-backoff', { 'retry.backoff.ms': '999' }).passed, false);
  });

  test('request.timeout.ms: unset is the default 30000 and passes', () => {
    assert.equal(one('producer.request-timeout', {}).passed, true);
    assert.equal(one('producer.request-timeout', { 'request.timeout.ms': '29999' }).passed, false);
    assert.equal(one('producer.request-timeout', { 'request.timeout.ms': '60000' }).passed, true);
  });

  test('max.in.flight: 1..5 pass', () => {
    assert.equal(one('producer.max-in-flight', {}).passed, true);
    assert.equal(one('producer.max-in-flight', { 'max.in.flight.requests.per.connection': '1' }).passed, true);
    assert.equal(one('producer.max-in-flight', { 'max.in.flight.requests.per.connection': '6' }).passed, false);
  });

  test('transactional.id: set passes and is shown; empty is unset', () => {
    const r = one('producer.transactional-id', { 'transactional.id': 'app-0' });
    assert.equal(r.passed, true);
    assert.equal(r.observed, 'transactional.id=app-0');
    assert.equal(one('producer.transactional-id', { 'transactional.id': '  ' }).passed, false);
  });

  test('transaction.timeout.ms: default 60000 below a long checkpoint fails, with both numbers', () => {
    const cp: CheckpointFacts = { ...pipelineCheckpoint, intervalMs: 60_000, timeoutMs: 120_000 };
    const r = one('producer.transaction-timeout', {}, { checkpoints: [cp] });
    assert.equal(r.passed, false);
    assert.match(r.observed, /transaction\.timeout\.ms unset \(default 60000 ms \(1m\)\)/);
    assert.match(r.observed, /checkpoint interval 1m \+ timeout 2m = 3m \(pipeline:default\)/);
    assert.match(r.expected, /above 180000 ms \(3m\) and at most 900000 ms \(15m\)/);
  });

  test('transaction.timeout.ms: compared with the largest checkpoint span, a Flink default timeout counts', () => {
    const flink: CheckpointFacts = { origin: 'flink', target: 'flink:conf.yaml', mode: 'EXACTLY_ONCE', intervalMs: 60_000 };
    // 60 s + Flink's default 10 min timeout = 11 min.
    let r = one('producer.transaction-timeout', { 'transaction.timeout.ms': '600000' }, { checkpoints: [pipelineCheckpoint, flink] });
    assert.equal(r.passed, false);
    assert.match(r.observed, /timeout 10m \(default\) = 11m \(flink:conf\.yaml\)/);
    r = one('producer.transaction-timeout', { 'transaction.timeout.ms': '720000' }, { checkpoints: [pipelineCheckpoint, flink] });
    assert.equal(r.passed, true, r.observed);
  });

  test('transaction.timeout.ms: equal to the checkpoint span fails, one ms above passes; equal to the broker maximum passes', () => {
    // pipelineCheckpoint: interval 10 s + timeout 30 s = 40 s.
    const at = (v: number) => one('producer.transaction-timeout', { 'transaction.timeout.ms': String(v) }, { checkpoints: [pipelineCheckpoint] }).passed;
    assert.equal(at(40_000), false, 'a transaction may live exactly as long as a checkpoint may take: too short');
    assert.equal(at(40_001), true);
    assert.equal(at(900_000), true, 'at most the broker maximum');
    assert.equal(at(900_001), false);
  });

  test('transaction.timeout.ms: no checkpoints, only the broker maximum applies', () => {
    const r = one('producer.transaction-timeout', { 'transaction.timeout.ms': '900000' });
    assert.equal(r.passed, true);
    assert.match(r.observed, /no checkpointing facts/);
    assert.match(r.observed, /transaction\.max\.timeout\.ms 900000 ms \(15m\) \(broker default, no cluster facts\)/);
    assert.equal(r.expected, 'transaction.timeout.ms at most 900000 ms (15m) (broker transaction.max.timeout.ms)');
  });

  test('transaction.timeout.ms: the strictest broker maximum of the cluster', () => {
    const cluster = { brokers: [broker(1, '3600000'), broker(2, '300000'), broker(3, null)], topics: [] };
    let r = one('producer.transaction-timeout', { 'transaction.timeout.ms': '600000' }, { cluster });
    assert.equal(r.passed, false);
    assert.match(r.observed, /transaction\.max\.timeout\.ms 300000 ms \(5m\) \(broker 2\)/);
    r = one('producer.transaction-timeout', { 'transaction.timeout.ms': '3600000' }, { cluster: { brokers: [broker(1, '3600000')], topics: [] } });
    assert.equal(r.passed, true);
    r = one('producer.transaction-timeout', { 'transaction.timeout.ms': 'soon' });
    assert.equal(r.passed, false);
    assert.match(r.observed, /not a number/);
  });

  test('numeric settings: a value that is not an integer fails, bounds are inclusive, the expectation is stated', () => {
    const r = (id: string, key: string, v: string) => one(id, { [key]: v });
    assert.equal(r('producer.retries', 'retries', 'forever').passed, false);
    assert.equal(r('producer.retries', 'retries', '2147483648').passed, true);
    assert.equal(r('producer.retries', 'retries', '3').observed, 'retries=3');
    assert.equal(one('producer.retries', {}).expected, 'retries unset or 2147483647 (Integer.MAX_VALUE)');
    assert.equal(r('producer.retry-backoff', 'retry.backoff.ms', '1s').passed, false);
    assert.deepEqual([r('producer.retry-backoff', 'retry.backoff.ms', '1000').observed, one('producer.retry-backoff', {}).expected], ['retry.backoff.ms=1000', 'retry.backoff.ms >= 1000']);
    assert.equal(r('producer.request-timeout', 'request.timeout.ms', '30000').passed, true);
    assert.equal(r('producer.request-timeout', 'request.timeout.ms', '30s').passed, false);
    assert.deepEqual([one('producer.request-timeout', {}).observed, r('producer.request-timeout', 'request.timeout.ms', '5000').observed, one('producer.request-timeout', {}).expected], ['request.timeout.ms unset (default 30000)', 'request.timeout.ms=5000', 'request.timeout.ms >= 30000']);
    const mif = 'max.in.flight.requests.per.connection';
    assert.equal(r('producer.max-in-flight', mif, '5').passed, true);
    assert.equal(r('producer.max-in-flight', mif, '0').passed, false);
    assert.equal(r('producer.max-in-flight', mif, 'five').passed, false);
    assert.deepEqual([one('producer.max-in-flight', {}).observed, r('producer.max-in-flight', mif, '6').observed, one('producer.max-in-flight', {}).expected], [`${mif} unset (default 5)`, `${mif}=6`, `${mif} <= 5`]);
  });

  test('acks and idempotence: case-insensitive, the values shown, only real conflicts turn the default off', () => {
    assert.equal(one('producer.acks', { acks: 'ALL' }).passed, true);
    assert.deepEqual([one('producer.acks', { acks: '1' }).observed, one('producer.acks', {}).expected], ['acks=1', 'acks=all (or -1)']);
    const idem = (e: Record<string, string>) => one('producer.enable-idempotence', e);
    assert.deepEqual([idem({ 'enable.idempotence': 'false' }).passed, idem({ 'enable.idempotence': 'false' }).observed, idem({}).expected], [false, 'enable.idempotence=false', 'enable.idempotence=true']);
    for (const e of [{ retries: '1' }, { 'max.in.flight.requests.per.connection': '5' }, { 'max.in.flight.requests.per.connection': 'many' }] as Record<string, string>[]) {
      assert.equal(idem(e).passed, true, JSON.stringify(e));
    }
    assert.equal(idem({ retries: '0' }).observed, 'enable.idempotence unset, but retries=0 turns the default off');
    assert.equal(idem({ 'max.in.flight.requests.per.connection': '6' }).observed, 'enable.idempotence unset, but max.in.flight.requests.per.connection=6 turns the default off');
    assert.equal(idem({ acks: 'ALL', retries: '0' }).observed, 'enable.idempotence unset, but retries=0 turns the default off');
  });

  test('retry.backoff.ms is not judged on eoswatch\'s own (kafkajs) pipeline producer; transactional.id states its expectation', () => {
    assert.deepEqual(check('producer.retry-backoff').evaluate(facts({ clients: [client('producer', 'pipeline:default', {})] })), []);
    const t = one('producer.transactional-id', {});
    assert.deepEqual([t.observed, t.expected], ['transactional.id unset (no transactions)', 'transactional.id set']);
    assert.equal(one('producer.transactional-id', { 'transactional.id': 'a' }).expected, 'transactional.id set');
  });

  test('transaction.timeout.ms: broker maxima trimmed, unreadable ones ignored; a cluster without any is the broker default', () => {
    const b = (id: number, v: string | null): BrokerFacts => ({ id, configs: new Map([['transaction.max.timeout.ms', { value: v, source: 'static' as const }]]) });
    const on = (brokers: BrokerFacts[]) => one('producer.transaction-timeout', { 'transaction.timeout.ms': '600000' }, { cluster: { brokers, topics: [] } });
    assert.match(on([b(1, ' 300000 '), b(2, 'x')]).observed, /transaction\.max\.timeout\.ms 300000 ms \(5m\) \(broker 1\)$/);
    assert.equal(on([b(1, ' 300000 ')]).passed, false);
    const none = on([b(1, null), { id: 2, configs: new Map() }]);
    assert.equal(none.passed, true);
    assert.match(none.observed, /\(broker default\)$/);
    const nan = one('producer.transaction-timeout', { 'transaction.timeout.ms': '10m' });
    assert.deepEqual([nan.observed, nan.expected], ['transaction.timeout.ms=10m (not a number)', 'a number of milliseconds']);
    assert.match(one('producer.transaction-timeout', { 'transaction.timeout.ms': '120000' }).observed, /^transaction\.timeout\.ms=120000 \(2m\); /);
  });

  test('transaction.timeout.ms: which checkpoints have a span; the longest one counts', () => {
    const tt = (cps: CheckpointFacts[], v = '100000') => one('producer.transaction-timeout', { 'transaction.timeout.ms': v }, { checkpoints: cps });
    // No interval, or a pipeline without a timeout: no span to compare with.
    assert.match(tt([{ origin: 'flink', target: 'flink:a', mode: 'EXACTLY_ONCE' }]).observed, /no checkpointing facts/);
    assert.match(tt([{ origin: 'pipeline', target: 'pipeline:p', mode: 'EXACTLY_ONCE', intervalMs: 10_000 }]).observed, /no checkpointing facts/);
    const short: CheckpointFacts = { origin: 'pipeline', target: 'pipeline:s', mode: 'EXACTLY_ONCE', intervalMs: 10_000, timeoutMs: 20_000 };
    const long: CheckpointFacts = { origin: 'pipeline', target: 'pipeline:l', mode: 'EXACTLY_ONCE', intervalMs: 60_000, timeoutMs: 60_000 };
    for (const cps of [[short, long], [long, short]]) {
      const r = tt(cps);
      assert.equal(r.passed, false);
      assert.match(r.observed, /checkpoint interval 1m \+ timeout 1m = 2m \(pipeline:l\);/);
    }
  });

  test('Flink KafkaSink: judged when it uses transactions (EXACTLY_ONCE, or a prefix or timeout without a guarantee)', () => {
    const base: CheckpointFacts = { origin: 'flink', target: 'flink:k', mode: 'EXACTLY_ONCE', intervalMs: 10_000, timeoutMs: 60_000 };
    const judged = (cp: CheckpointFacts) => check('producer.transaction-timeout').evaluate(facts({ checkpoints: [cp] })).map((r) => r.target);
    assert.deepEqual(judged(base), []);
    assert.deepEqual(judged({ ...base, sinkTransactionalIdPrefix: 'p' }), ['flink:k']);
    assert.deepEqual(judged({ ...base, sinkTransactionTimeoutMs: 600_000 }), ['flink:k']);
    assert.deepEqual(judged({ ...base, sinkDeliveryGuarantee: 'EXACTLY_ONCE' }), ['flink:k']);
    assert.deepEqual(judged({ ...base, sinkDeliveryGuarantee: 'NONE', sinkTransactionalIdPrefix: 'p' }), []);
    assert.deepEqual(judged({ ...pipelineCheckpoint, sinkDeliveryGuarantee: 'EXACTLY_ONCE' }), []);
    const r = check('producer.transaction-timeout').evaluate(facts({ checkpoints: [{ ...base, sinkTransactionTimeoutMs: 600_000 }] }))[0]!;
    assert.equal(r.passed, true);
    assert.equal(r.observed, 'KafkaSink transaction.timeout.ms=600000 (10m); checkpoint interval 10s + timeout 1m = 70s (flink:k); transaction.max.timeout.ms 900000 ms (15m) (broker default, no cluster facts)');
    assert.equal(r.expected, 'transaction.timeout.ms above 70000 ms (70s) and at most 900000 ms (15m)');
  });

  test('transaction.timeout.ms: the first broker with the strictest maximum, the first of equally long spans, checkpoints without a span left out', () => {
    const b = (id: number, v: string): BrokerFacts => ({ id, configs: new Map([['transaction.max.timeout.ms', { value: v, source: 'static' as const }]]) });
    const on = (brokers: BrokerFacts[]) => one('producer.transaction-timeout', { 'transaction.timeout.ms': '100000' }, { cluster: { brokers, topics: [] } }).observed;
    assert.match(on([b(1, '300000'), b(2, '3600000')]), /300000 ms \(5m\) \(broker 1\)$/);
    assert.match(on([b(1, '300000'), b(2, '300000')]), /\(broker 1\)$/);
    const a: CheckpointFacts = { origin: 'pipeline', target: 'pipeline:a', mode: 'EXACTLY_ONCE', intervalMs: 10_000, timeoutMs: 30_000 };
    const tt = (cps: CheckpointFacts[]) => one('producer.transaction-timeout', { 'transaction.timeout.ms': '100000' }, { checkpoints: cps }).observed;
    assert.match(tt([a, { ...a, target: 'pipeline:b' }]), /\(pipeline:a\);/);
    assert.match(tt([{ origin: 'flink', target: 'flink:none', mode: 'EXACTLY_ONCE' }, a]), /= 40s \(pipeline:a\);/);
    // Not an integer, even with digits at its end: not a number of milliseconds.
    assert.match(one('producer.transaction-timeout', { 'transaction.timeout.ms': 'about 120000' }).observed, /\(not a number\)$/);
    // max.in.flight that is not an integer is no idempotence conflict (Kafka rejects it on its own).
    assert.equal(one('producer.enable-idempotence', { 'max.in.flight.requests.per.connection': '1e1' }).passed, true);
  });

  test('remediations name the producer keys they set', () => {
    const rem = (id: string) => check(id).remediation;
    assert.match(rem('producer.enable-idempotence'), /enable\.idempotence=true .*acks=all.*max\.in\.flight\.requests\.per\.connection <= 5/);
    assert.match(rem('producer.acks'), /acks=all/);
    assert.match(rem('producer.retries'), /retries unset .*delivery\.timeout\.ms/);
    assert.match(rem('producer.retry-backoff'), /retry\.backoff\.ms=1000/);
    assert.match(rem('producer.request-timeout'), /request\.timeout\.ms=30000/);
    assert.match(rem('producer.max-in-flight'), /max\.in\.flight\.requests\.per\.connection to 5/);
    assert.match(rem('producer.transactional-id'), /transactional\.id .*setTransactionalIdPrefix/);
    assert.match(rem('producer.transaction-timeout'), /transaction\.timeout\.ms .*transaction\.max\.timeout\.ms/);
  });

  test('Flink KafkaSink: the 1 hour default against the 15 minute broker maximum', async () => {
    const legacy = await flinkFacts('flink-conf.yaml');
    const r = result('producer.transaction-timeout', facts({ checkpoints: [legacy] }), legacy.target);
    assert.equal(r.passed, false);
    assert.match(r.observed, /KafkaSink transaction\.timeout\.ms=3600000 \(1h\)/);
    assert.match(r.observed, /900000 ms \(15m\)/);
    // Unset: KafkaSink's own default of one hour.
    const unset: CheckpointFacts = { origin: 'flink', target: 'flink:x', mode: 'EXACTLY_ONCE', intervalMs: 10_000, sinkDeliveryGuarantee: 'EXACTLY_ONCE', sinkTransactionalIdPrefix: 'x' };
    const u = result('producer.transaction-timeout', facts({ checkpoints: [unset] }), 'flink:x');
    assert.equal(u.passed, false);
    assert.match(u.observed, /unset \(KafkaSink default 3600000 ms \(1h\)\)/);
    // Safe config.yaml: 10 min, above 10 s + 1 min, within 15 min.
    const standard = await flinkFacts('config.yaml');
    assert.equal(result('producer.transaction-timeout', facts({ checkpoints: [standard] }), standard.target).passed, true);
    // An AT_LEAST_ONCE sink has no transactions: not judged.
    const alo: CheckpointFacts = { ...unset, sinkDeliveryGuarantee: 'AT_LEAST_ONCE' };
    assert.deepEqual(check('producer.transaction-timeout').evaluate(facts({ checkpoints: [alo] })), []);
  });
});

describe('streams clients (checked in streams.test.ts)', () => {
  test('producer checks do not judge streams clients, nor consumers', () => {
    const f = facts({ clients: [client('streams', 's', {}), client('consumer', 'c', {})] });
    for (const c of producerChecks) assert.deepEqual(c.evaluate(f), [], c.id);
  });
});

describe('consumer checks', () => {
  const one = (id: string, entries: Record<string, string>): CheckResult =>
    result(id, facts({ clients: [client('consumer', 'c.properties', entries)] }), 'consumer:c.properties');

  test('consumer-unsafe.properties fails all three, saying the values', async () => {
    const unsafe = await fromFile('consumer', 'consumer-unsafe.properties');
    const f = facts({ clients: [unsafe] });
    const t = `consumer:${unsafe.file}`;
    assert.equal(result('consumer.isolation-level', f, t).passed, false);
    assert.equal(result('consumer.isolation-level', f, t).observed, 'isolation.level=read_uncommitted');
    assert.equal(result('consumer.auto-offset-reset', f, t).observed, 'auto.offset.reset=latest (skips unread records)');
    assert.equal(result('consumer.auto-offset-reset', f, t).expected, 'auto.offset.reset=none');
    assert.equal(result('consumer.enable-auto-commit', f, t).observed, 'enable.auto.commit=true');
    assert.equal(result('consumer.enable-auto-commit', f, t).passed, false);
  });

  test('isolation.level: read_committed passes, unset is read_uncommitted', () => {
    assert.equal(one('consumer.isolation-level', { 'isolation.level': 'read_committed' }).passed, true);
    const r = one('consumer.isolation-level', {});
    assert.equal(r.passed, false);
    assert.equal(r.observed, 'isolation.level unset (default read_uncommitted)');
  });

  test('auto.offset.reset: none passes; unset (latest) and earliest fail', () => {
    assert.equal(one('consumer.auto-offset-reset', { 'auto.offset.reset': 'none' }).passed, true);
    assert.match(one('consumer.auto-offset-reset', {}).observed, /unset \(default latest/);
    assert.equal(one('consumer.auto-offset-reset', {}).passed, false);
    const e = one('consumer.auto-offset-reset', { 'auto.offset.reset': 'earliest' });
    assert.equal(e.passed, false);
    assert.equal(e.observed, 'auto.offset.reset=earliest (re-reads the retained log: duplicates)');
  });

  test('values are judged case-insensitively and shown as written', () => {
    const iso = one('consumer.isolation-level', { 'isolation.level': 'READ_COMMITTED' });
    assert.deepEqual([iso.passed, iso.observed, iso.expected], [true, 'isolation.level=READ_COMMITTED', 'isolation.level=read_committed']);
    const un = one('consumer.isolation-level', { 'isolation.level': 'read_uncommitted' });
    assert.deepEqual([un.passed, un.expected], [false, 'isolation.level=read_committed']);
    assert.equal(one('consumer.isolation-level', {}).expected, 'isolation.level=read_committed');
    const none = one('consumer.auto-offset-reset', { 'auto.offset.reset': 'None' });
    assert.deepEqual([none.passed, none.observed, none.expected], [true, 'auto.offset.reset=None', 'auto.offset.reset=none']);
    assert.equal(one('consumer.auto-offset-reset', {}).expected, 'auto.offset.reset=none');
    assert.equal(one('consumer.auto-offset-reset', { 'auto.offset.reset': 'LATEST' }).observed, 'auto.offset.reset=LATEST (skips unread records)');
    // A value Kafka would reject: no effect claimed, and it is not none.
    const odd = one('consumer.auto-offset-reset', { 'auto.offset.reset': 'by_duration:PT1H' });
    assert.deepEqual([odd.passed, odd.observed], [false, 'auto.offset.reset=by_duration:PT1H']);
    const ac = one('consumer.enable-auto-commit', { 'enable.auto.commit': 'FALSE' });
    assert.deepEqual([ac.passed, ac.observed, ac.expected], [true, 'enable.auto.commit=FALSE', 'enable.auto.commit=false']);
    assert.equal(one('consumer.enable-auto-commit', { 'enable.auto.commit': 'true' }).passed, false);
    assert.equal(one('consumer.enable-auto-commit', {}).expected, 'enable.auto.commit=false');
  });

  test('auto.offset.reset of eoswatch\'s pipeline is judged as pipeline.startFrom, with a remediation naming its key and command', () => {
    const on = (v: string) => result('consumer.auto-offset-reset', facts({ clients: [client('consumer', 'pipeline:default', { 'auto.offset.reset': v })] }), 'pipeline:default');
    const none = on('none');
    assert.deepEqual([none.passed, none.observed, none.expected], [true, 'pipeline.startFrom: none', 'pipeline.startFrom: none']);
    const latest = on('latest');
    assert.deepEqual([latest.passed, latest.observed], [false, 'pipeline.startFrom: latest (skips unread records)']);
    assert.equal(on('earliest').observed, 'pipeline.startFrom: earliest (re-reads the retained log: duplicates)');
    assert.match(latest.remediation ?? '', /^Set pipeline\.startFrom: none\. .*`eoswatch run --start-from earliest`.*`eoswatch topics create`/);
    // A Kafka client file keeps the check's own remediation (auto.offset.reset).
    assert.equal(one('consumer.auto-offset-reset', { 'auto.offset.reset': 'latest' }).remediation, undefined);
    assert.match(check('consumer.auto-offset-reset').remediation, /auto\.offset\.reset=none/);
  });

  test('remediations name the consumer keys they set', () => {
    assert.match(check('consumer.isolation-level').remediation, /isolation\.level=read_committed/);
    assert.match(check('consumer.enable-auto-commit').remediation, /enable\.auto\.commit=false/);
  });

  test('only consumers are judged', () => {
    const f = facts({ clients: [client('producer', 'p.properties', {}), client('streams', 's.properties', {}), client('consumer', 'c.properties', {})] });
    for (const c of consumerChecks) assert.deepEqual(c.evaluate(f).map((r) => r.target), ['consumer:c.properties'], c.id);
  });

  test('enable.auto.commit: false passes, unset is true', () => {
    assert.equal(one('consumer.enable-auto-commit', { 'enable.auto.commit': 'false' }).passed, true);
    assert.equal(one('consumer.enable-auto-commit', {}).observed, 'enable.auto.commit unset (default true)');
    assert.equal(one('consumer.enable-auto-commit', {}).passed, false);
  });
});

describe('checkpoint checks', () => {
  const one = (id: string, cp: CheckpointFacts): CheckResult => result(id, facts({ checkpoints: [cp] }), cp.target);
  const flinkOn: CheckpointFacts = { origin: 'flink', target: 'flink:f', mode: 'EXACTLY_ONCE', intervalMs: 10_000 };

  test('config.yaml (Flink 2.x, safe) passes every checkpoint check', async () => {
    const cp = await flinkFacts('config.yaml');
    for (const c of checkpointChecks) {
      const r = one(c.id, cp);
      assert.equal(r.passed, true, `${c.id}: ${r.observed}`);
    }
    assert.equal(one('checkpoint.mode', cp).observed, 'mode EXACTLY_ONCE, interval 10s');
    assert.equal(one('checkpoint.state-backend', cp).observed, 'state backend rocksdb, incremental checkpoints true');
    assert.equal(one('flink.kafka-sink-exactly-once', cp).observed, 'delivery guarantee EXACTLY_ONCE, transactional id prefix orders-enricher');
  });

  test('flink-conf.yaml (legacy, unsafe) fails them, saying the values', async () => {
    const cp = await flinkFacts('flink-conf.yaml');
    const expect: Record<string, string> = {
      'checkpoint.mode': 'mode AT_LEAST_ONCE, interval 1m',
      'checkpoint.tolerable-failures': 'tolerable failed checkpoints 3',
      'checkpoint.timeout': 'timeout 90s, interval 1m (1.5 × interval)',
      'checkpoint.min-pause': 'min pause 0ms (default)',
      'checkpoint.retain-on-cancellation': 'externalized-checkpoint-retention not RETAIN_ON_CANCELLATION (deleted on cancellation)',
      'checkpoint.state-backend': 'state backend hashmap, incremental checkpoints unset (default false)',
      'flink.kafka-sink-exactly-once': 'delivery guarantee EXACTLY_ONCE, transactional id prefix unset',
    };
    for (const [id, observed] of Object.entries(expect)) {
      const r = one(id, cp);
      assert.equal(r.passed, false, id);
      assert.equal(r.observed, observed, id);
    }
    assert.equal(one('checkpoint.timeout', cp).expected, 'timeout >= 3m (3 × interval 1m)');
  });

  test('a Flink config without an interval fails checkpoint.mode; the dependent checks stay silent', () => {
    const off = flinkCheckpointFacts(new Map([['state.backend.type', 'rocksdb']]), 'flink:off.yaml');
    const r = one('checkpoint.mode', off);
    assert.equal(r.passed, false);
    assert.match(r.observed, /^checkpointing not enabled/);
    for (const id of ['checkpoint.tolerable-failures', 'checkpoint.timeout', 'checkpoint.min-pause', 'checkpoint.retain-on-cancellation', 'checkpoint.state-backend']) {
      assert.deepEqual(check(id).evaluate(facts({ checkpoints: [off] })), [], id);
    }
  });

  test('eoswatch\'s pipeline: general checks apply, Flink-only checks skip it', () => {
    for (const id of ['checkpoint.mode', 'checkpoint.tolerable-failures', 'checkpoint.timeout', 'checkpoint.min-pause']) {
      assert.equal(one(id, pipelineCheckpoint).passed, true, id);
    }
    for (const id of ['checkpoint.retain-on-cancellation', 'checkpoint.state-backend', 'flink.kafka-sink-exactly-once']) {
      assert.deepEqual(check(id).evaluate(facts({ checkpoints: [pipelineCheckpoint] })), [], id);
    }
    const alo = one('checkpoint.mode', { ...pipelineCheckpoint, mode: 'AT_LEAST_ONCE' });
    assert.equal(alo.passed, false);
    assert.equal(alo.observed, 'mode AT_LEAST_ONCE, interval 10s');
  });

  test('tolerable failures: Flink default 0 passes and says so', () => {
    const r = one('checkpoint.tolerable-failures', flinkOn);
    assert.equal(r.passed, true);
    assert.equal(r.observed, 'tolerable failed checkpoints 0 (default)');
    assert.equal(one('checkpoint.tolerable-failures', { ...pipelineCheckpoint, tolerableFailed: 1 }).passed, false);
  });

  test('timeout: exactly 3 × interval passes; Flink default 10 min; the article\'s 5 s for 10 s fails', () => {
    assert.equal(one('checkpoint.timeout', { ...pipelineCheckpoint, intervalMs: 10_000, timeoutMs: 30_000 }).passed, true);
    const r = one('checkpoint.timeout', { ...pipelineCheckpoint, intervalMs: 10_000, timeoutMs: 5000 });
    assert.equal(r.passed, false);
    assert.equal(r.observed, 'timeout 5s, interval 10s (0.5 × interval)');
    const d = one('checkpoint.timeout', flinkOn);
    assert.equal(d.passed, true);
    assert.equal(d.observed, 'timeout 10m (default), interval 10s (60 × interval)');
  });

  test('min pause: > 0 passes; 0 fails', () => {
    assert.equal(one('checkpoint.min-pause', { ...flinkOn, minPauseMs: 500 }).observed, 'min pause 500ms');
    assert.equal(one('checkpoint.min-pause', { ...flinkOn, minPauseMs: 500 }).passed, true);
    assert.equal(one('checkpoint.min-pause', { ...pipelineCheckpoint, minPauseMs: 0 }).passed, false);
  });

  test('retain on cancellation: unset is NO_EXTERNALIZED_CHECKPOINTS', () => {
    const r = one('checkpoint.retain-on-cancellation', flinkOn);
    assert.equal(r.passed, false);
    assert.equal(r.observed, 'externalized-checkpoint-retention unset (default NO_EXTERNALIZED_CHECKPOINTS)');
    assert.equal(one('checkpoint.retain-on-cancellation', { ...flinkOn, retainOnCancellation: true }).passed, true);
  });

  test('state backend: rocksdb without incremental, unset, and ForSt', () => {
    const r = one('checkpoint.state-backend', { ...flinkOn, stateBackend: 'rocksdb', incremental: false });
    assert.equal(r.passed, false);
    assert.equal(r.observed, 'state backend rocksdb, incremental checkpoints false');
    assert.equal(one('checkpoint.state-backend', flinkOn).observed, 'state backend unset (default hashmap), incremental checkpoints unset (default false)');
    assert.equal(one('checkpoint.state-backend', { ...flinkOn, stateBackend: 'forst', incremental: true }).passed, true);
  });

  test('max concurrent checkpoints: 1 (default or set) passes, 2 fails', () => {
    const d = one('checkpoint.max-concurrent', flinkOn);
    assert.deepEqual([d.passed, d.observed, d.expected], [true, 'max concurrent checkpoints 1 (default)', 'max concurrent checkpoints 1']);
    assert.deepEqual([one('checkpoint.max-concurrent', { ...flinkOn, maxConcurrent: 1 }).passed, one('checkpoint.max-concurrent', { ...flinkOn, maxConcurrent: 1 }).observed], [true, 'max concurrent checkpoints 1']);
    const two = one('checkpoint.max-concurrent', { ...flinkOn, maxConcurrent: 2 });
    assert.deepEqual([two.passed, two.observed], [false, 'max concurrent checkpoints 2']);
    assert.deepEqual(check('checkpoint.max-concurrent').evaluate(facts({ checkpoints: [pipelineCheckpoint] })), []);
  });

  test('unaligned checkpoints: off, or on with EXACTLY_ONCE, pass; on with AT_LEAST_ONCE fails', () => {
    const d = one('checkpoint.unaligned-exactly-once', flinkOn);
    assert.deepEqual([d.passed, d.observed, d.expected], [true, 'unaligned checkpoints false (default), mode EXACTLY_ONCE', 'unaligned checkpoints off, or mode EXACTLY_ONCE']);
    assert.equal(one('checkpoint.unaligned-exactly-once', { ...flinkOn, unaligned: true }).passed, true);
    assert.equal(one('checkpoint.unaligned-exactly-once', { ...flinkOn, mode: 'AT_LEAST_ONCE', unaligned: false }).passed, true);
    const bad = one('checkpoint.unaligned-exactly-once', { ...flinkOn, mode: 'AT_LEAST_ONCE', unaligned: true });
    assert.deepEqual([bad.passed, bad.observed], [false, 'unaligned checkpoints true, mode AT_LEAST_ONCE']);
  });

  test('eoswatch\'s pipeline without a value has no Flink default: unset fails and says so', () => {
    const bare: CheckpointFacts = { origin: 'pipeline', target: 'pipeline:p', mode: 'EXACTLY_ONCE', intervalMs: 10_000 };
    const tf = one('checkpoint.tolerable-failures', bare);
    assert.deepEqual([tf.passed, tf.observed, tf.expected], [false, 'tolerable failed checkpoints unset', 'tolerable failed checkpoints = 0']);
    const to = one('checkpoint.timeout', bare);
    assert.deepEqual([to.passed, to.observed, to.expected], [false, 'checkpoint timeout unset', 'timeout >= 30s (3 × interval 10s)']);
    const mp = one('checkpoint.min-pause', bare);
    assert.deepEqual([mp.passed, mp.observed, mp.expected], [false, 'min pause unset', 'min pause > 0']);
    assert.equal(one('checkpoint.tolerable-failures', { ...bare, tolerableFailed: 0 }).observed, 'tolerable failed checkpoints 0');
    assert.equal(one('checkpoint.timeout', { ...bare, timeoutMs: 29_999 }).passed, false);
    assert.equal(one('checkpoint.min-pause', { ...bare, minPauseMs: 1 }).passed, true);
  });

  test('checkpoint.mode: an interval without a mode is not enabled checkpointing; the expectation is stated', () => {
    const r = one('checkpoint.mode', { origin: 'flink', target: 'flink:m', intervalMs: 10_000 });
    assert.deepEqual([r.passed, r.observed, r.expected], [false, 'checkpointing not enabled (no checkpoint interval)', 'checkpointing enabled, mode EXACTLY_ONCE']);
    assert.deepEqual(one('checkpoint.mode', flinkOn).expected, 'checkpointing enabled, mode EXACTLY_ONCE');
    assert.deepEqual(check('checkpoint.min-pause').evaluate(facts({ checkpoints: [{ origin: 'flink', target: 'flink:m', intervalMs: 10_000 }] })), []);
  });

  test('retain on cancellation and state backend: the expectations, and an explicit no', () => {
    const no = one('checkpoint.retain-on-cancellation', { ...flinkOn, retainOnCancellation: false });
    assert.deepEqual([no.passed, no.expected], [false, 'externalized-checkpoint-retention RETAIN_ON_CANCELLATION']);
    assert.equal(one('checkpoint.retain-on-cancellation', { ...flinkOn, retainOnCancellation: true }).observed, 'externalized-checkpoint-retention RETAIN_ON_CANCELLATION');
    const sb = one('checkpoint.state-backend', { ...flinkOn, stateBackend: 'RocksDB', incremental: true });
    assert.deepEqual([sb.passed, sb.expected], [true, 'state backend rocksdb, incremental checkpoints true']);
    assert.equal(one('checkpoint.state-backend', { ...flinkOn, stateBackend: 'hashmap', incremental: true }).passed, false);
    assert.equal(one('checkpoint.state-backend', { ...flinkOn, incremental: true }).passed, false);
  });

  test('KafkaSink: any one of its keys makes it audited; EXACTLY_ONCE with a prefix passes', () => {
    const ok = one('flink.kafka-sink-exactly-once', { ...flinkOn, sinkDeliveryGuarantee: 'EXACTLY_ONCE', sinkTransactionalIdPrefix: 'job' });
    assert.equal(ok.passed, true);
    const timeoutOnly = one('flink.kafka-sink-exactly-once', { ...flinkOn, sinkTransactionTimeoutMs: 600_000 });
    assert.deepEqual([timeoutOnly.passed, timeoutOnly.observed], [false, 'delivery guarantee unset (KafkaSink default NONE), transactional id prefix unset']);
    assert.equal(one('flink.kafka-sink-exactly-once', { ...flinkOn, sinkDeliveryGuarantee: 'EXACTLY_ONCE' }).passed, false);
  });

  test('a mode without an interval is not enabled checkpointing: mode fails, the Flink-only checks stay silent', () => {
    const modeOnly: CheckpointFacts = { origin: 'flink', target: 'flink:n', mode: 'EXACTLY_ONCE' };
    const r = one('checkpoint.mode', modeOnly);
    assert.deepEqual([r.passed, r.observed], [false, 'checkpointing not enabled (no checkpoint interval)']);
    for (const id of ['checkpoint.max-concurrent', 'checkpoint.unaligned-exactly-once']) {
      assert.deepEqual(check(id).evaluate(facts({ checkpoints: [modeOnly, { ...modeOnly, unaligned: true, mode: 'AT_LEAST_ONCE', maxConcurrent: 2 }] })), [], id);
    }
  });

  test('Flink-only checks do not judge eoswatch\'s pipeline, whatever its facts hold', () => {
    const odd: CheckpointFacts = { ...pipelineCheckpoint, unaligned: true, mode: 'AT_LEAST_ONCE', maxConcurrent: 2, sinkDeliveryGuarantee: 'NONE' };
    for (const id of ['checkpoint.max-concurrent', 'checkpoint.unaligned-exactly-once', 'flink.kafka-sink-exactly-once']) {
      assert.deepEqual(check(id).evaluate(facts({ checkpoints: [odd] })), [], id);
    }
  });

  test('remediations name the Flink and pipeline keys they set', () => {
    const rem = (id: string) => check(id).remediation;
    assert.match(rem('checkpoint.mode'), /execution\.checkpointing\.interval.*execution\.checkpointing\.mode: EXACTLY_ONCE.*pipeline\.checkpoint\.interval.*pipeline\.mode: EXACTLY_ONCE/);
    assert.match(rem('checkpoint.tolerable-failures'), /execution\.checkpointing\.tolerable-failed-checkpoints: 0.*pipeline\.checkpoint\.tolerableFailedCheckpoints: 0/);
    assert.match(rem('checkpoint.timeout'), /execution\.checkpointing\.timeout.*pipeline\.checkpoint\.timeout/);
    assert.match(rem('checkpoint.min-pause'), /execution\.checkpointing\.min-pause.*pipeline\.checkpoint\.minPause/);
    assert.match(rem('checkpoint.retain-on-cancellation'), /execution\.checkpointing\.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION/);
    assert.match(rem('checkpoint.max-concurrent'), /execution\.checkpointing\.max-concurrent-checkpoints: 1/);
    assert.match(rem('checkpoint.unaligned-exactly-once'), /execution\.checkpointing\.unaligned\.enabled/);
    assert.match(rem('checkpoint.state-backend'), /state\.backend\.type: rocksdb.*execution\.checkpointing\.incremental: true/);
    assert.match(rem('flink.kafka-sink-exactly-once'), /setDeliveryGuarantee\(DeliveryGuarantee\.EXACTLY_ONCE\)\.setTransactionalIdPrefix/);
  });

  test('KafkaSink: silent when not configured; NONE or a missing prefix fails', () => {
    assert.deepEqual(check('flink.kafka-sink-exactly-once').evaluate(facts({ checkpoints: [flinkOn] })), []);
    const none = one('flink.kafka-sink-exactly-once', { ...flinkOn, sinkDeliveryGuarantee: 'NONE', sinkTransactionalIdPrefix: 'a' });
    assert.equal(none.passed, false);
    assert.equal(none.observed, 'delivery guarantee NONE, transactional id prefix a');
    assert.equal(none.expected, 'delivery guarantee EXACTLY_ONCE, transactional id prefix set');
    const noGuarantee = one('flink.kafka-sink-exactly-once', { ...flinkOn, sinkTransactionalIdPrefix: 'a' });
    assert.equal(noGuarantee.passed, false);
    assert.equal(noGuarantee.observed, 'delivery guarantee unset (KafkaSink default NONE), transactional id prefix a');
  });
});
