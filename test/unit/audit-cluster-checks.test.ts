import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { brokerChecks, effectiveMessageFormat, parseKafkaVersion } from '../../src/audit/checks/broker.js';
import { liveChecks } from '../../src/audit/checks/live.js';
import { describeEntry, intOf } from '../../src/audit/checks/util.js';
import { runAudit, type AuditSource } from '../../src/audit/runner.js';
import { formatMarkdown, formatTable } from '../../src/audit/report.js';
import { renderCatalogue } from '../../src/audit/catalogue.js';
import { ALL_CHECKS } from '../../src/audit/checks/index.js';
import type { AuditFacts, BrokerFacts, Check, ConfigEntry, TopicFacts } from '../../src/audit/types.js';
import { readFileSync } from 'node:fs';

function entries(o: Record<string, string>, source: ConfigEntry['source'] = 'static'): Map<string, ConfigEntry> {
  return new Map(Object.entries(o).map(([k, v]) => [k, { value: v, source }]));
}

const SAFE_BROKER = {
  'transaction.state.log.replication.factor': '3',
  'transaction.state.log.min.isr': '2',
  'offsets.topic.replication.factor': '3',
  'unclean.leader.election.enable': 'false',
  'min.insync.replicas': '2',
};

function broker(id: number, o: Record<string, string> = {}): BrokerFacts {
  return { id, configs: entries({ ...SAFE_BROKER, ...o }) };
}

function topic(name: string, rf: number, isr: number, o: Record<string, string> = { 'min.insync.replicas': '2' }, roles: TopicFacts['roles'] = ['sink']): TopicFacts {
  const replicas = Array.from({ length: rf }, (_, i) => i + 1);
  return { name, roles, partitions: [0, 1].map((partition) => ({ partition, leader: 1, replicas, isr: replicas.slice(0, isr) })), configs: entries(o, 'default') };
}

function facts(brokers: BrokerFacts[], topics: TopicFacts[] = []): AuditFacts {
  return { cluster: { brokers, topics }, clients: [], checkpoints: [] };
}

function result(checks: Check[], id: string, f: AuditFacts) {
  const c = checks.find((x) => x.id === id);
  assert.ok(c, `no check ${id}`);
  return c.evaluate(f);
}

describe('broker and topic checks', () => {
  test('a safe 3-broker cluster passes every broker check', () => {
    const f = facts([broker(1), broker(2), broker(3)], [topic('orders', 3, 3)]);
    for (const c of brokerChecks) for (const r of c.evaluate(f)) assert.equal(r.passed, true, `${c.id} ${r.target}: ${r.observed}`);
  });

  const failing: [string, Record<string, string>, RegExp][] = [
    ['broker.transaction-state-log-replication-factor', { 'transaction.state.log.replication.factor': '1' }, /replication\.factor=1 \(server\.properties\)/],
    ['broker.transaction-state-log-min-isr', { 'transaction.state.log.min.isr': '1' }, /min\.isr=1/],
    ['broker.transaction-state-log-min-isr', { 'transaction.state.log.min.isr': '3' }, /min\.isr=3 .*replication factor 3/],
    ['broker.offsets-topic-replication-factor', { 'offsets.topic.replication.factor': '1' }, /offsets\.topic\.replication\.factor=1/],
    ['broker.unclean-leader-election', { 'unclean.leader.election.enable': 'true' }, /=true/],
  ];
  for (const [id, override, observed] of failing) {
    test(`${id} fails on ${JSON.stringify(override)}`, () => {
      const rs = result(brokerChecks, id, facts([broker(1, override)]));
      assert.equal(rs.length, 1);
      assert.equal(rs[0]!.passed, false);
      assert.equal(rs[0]!.target, 'broker:1');
      assert.match(rs[0]!.observed, observed);
    });
  }

  test('where a value comes from is said', () => {
    const b: BrokerFacts = { id: 2, configs: new Map([['unclean.leader.election.enable', { value: 'true', source: 'dynamic-default' }]]) };
    const [r] = result(brokerChecks, 'broker.unclean-leader-election', facts([b]));
    assert.match(r!.observed, /unclean\.leader\.election\.enable=true \(dynamic \(cluster-wide\)\)/);
  });

  test('topic replication factor and min ISR', () => {
    const f = facts([broker(1)], [topic('ok', 3, 3), topic('thin', 1, 1, { 'min.insync.replicas': '1' })]);
    const rf = result(brokerChecks, 'topic.replication-factor', f);
    assert.deepEqual(rf.map((r) => [r.target, r.passed]), [['topic:ok', true], ['topic:thin', false]]);
    const isr = result(brokerChecks, 'topic.min-insync-replicas', f);
    assert.deepEqual(isr.map((r) => [r.target, r.passed]), [['topic:ok', true], ['topic:thin', false]]);
    assert.match(isr[1]!.observed, /min\.insync\.replicas=1 \(default\)/);
  });

  test('internal topics are not judged by the topic checks', () => {
    const f = facts([broker(1)], [topic('__consumer_offsets', 1, 1, {}, ['internal'])]);
    assert.deepEqual(result(brokerChecks, 'topic.replication-factor', f), []);
  });

  test('record format: 4.x, 3.x with a modern protocol, and a real downgrade', () => {
    assert.equal(effectiveMessageFormat({ id: 1, configs: new Map() }).ok, true);
    assert.match(effectiveMessageFormat({ id: 1, configs: new Map() }).observed, /Kafka 4\.x/);
    const ignored = effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '3.9-IV0' }) });
    assert.equal(ignored.ok, true);
    assert.match(ignored.observed, /is 3\.0 or newer, so log\.message\.format\.version=0\.10\.2 .* is ignored/);
    const old = effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '2.8-IV1' }) });
    assert.equal(old.ok, false);
    assert.match(old.observed, /cannot carry transactions/);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '2.8-IV1', 'inter.broker.protocol.version': '2.8-IV1' }) }).ok, true);
    assert.deepEqual(parseKafkaVersion('3.9-IV0'), [3, 9]);
    assert.equal(parseKafkaVersion('garbage'), undefined);
  });

  test('no cluster facts: the cluster checks have nothing to say', () => {
    for (const c of [...brokerChecks, ...liveChecks]) assert.deepEqual(c.evaluate({ clients: [], checkpoints: [] }), []);
  });
});

describe('live checks', () => {
  test('__transaction_state partitions below min ISR', () => {
    const t = topic('__transaction_state', 3, 1, {}, ['internal']);
    const [r] = result(liveChecks, 'live.transaction-state-isr', facts([broker(1), broker(2)], [t]));
    assert.equal(r!.passed, false);
    assert.match(r!.observed, /2 of 2 partitions below min ISR 2: 0 \(isr 1\/3\), 1 \(isr 1\/3\)/);
    const [ok] = result(liveChecks, 'live.transaction-state-isr', facts([broker(1)], [topic('__transaction_state', 3, 2, {}, ['internal'])]));
    assert.equal(ok!.passed, true);
  });

  test('__transaction_state: min ISR is the largest any broker sets, 1 when none does; at min ISR passes', () => {
    const txn = (rf: number, isr: number, n = 2): TopicFacts => ({ ...topic('__transaction_state', rf, isr, {}, ['internal']), partitions: Array.from({ length: n }, (_, partition) => ({ partition, leader: 1, replicas: [1, 2, 3].slice(0, rf), isr: [1, 2, 3].slice(0, isr) })) });
    const bare: BrokerFacts = { id: 1, configs: new Map() };
    const [one] = result(liveChecks, 'live.transaction-state-isr', facts([bare], [txn(3, 1)]));
    assert.deepEqual([one!.target, one!.passed, one!.observed, one!.expected], ['topic:__transaction_state', true, 'all 2 partitions have >= 1 in-sync replicas', 'in-sync replicas >= 1 on every partition']);
    const strict = facts([broker(1), broker(2, { 'transaction.state.log.min.isr': '3' })], [txn(3, 2)]);
    const [r] = result(liveChecks, 'live.transaction-state-isr', strict);
    assert.equal(r!.passed, false);
    assert.equal(r!.expected, 'in-sync replicas >= 3 on every partition');
    // Eleven short partitions: the first ten are named, the count says all.
    const [many] = result(liveChecks, 'live.transaction-state-isr', facts([broker(1)], [txn(3, 1, 11)]));
    assert.equal(many!.observed, `11 of 11 partitions below min ISR 2: ${Array.from({ length: 10 }, (_, i) => `${i} (isr 1/3)`).join(', ')}`);
    assert.deepEqual(result(liveChecks, 'live.transaction-state-isr', facts([broker(1)], [topic('orders', 3, 1)])), []);
    assert.deepEqual(result(liveChecks, 'live.transaction-state-isr', { clients: [], checkpoints: [] }), []);
  });

  test('under-replicated: internal topics left out, the lagging partitions named (at most ten)', () => {
    const wide = (name: string, n: number, isr: number, roles: TopicFacts['roles'] = ['source']): TopicFacts => ({ name, roles, configs: new Map(), partitions: Array.from({ length: n }, (_, partition) => ({ partition, leader: 1, replicas: [1, 2, 3], isr: [1, 2, 3].slice(0, isr) })) });
    const rs = result(liveChecks, 'live.under-replicated', facts([broker(1)], [wide('in', 12, 2), wide('out', 2, 3, ['sink']), wide('__consumer_offsets', 2, 1, ['internal'])]));
    assert.deepEqual(rs.map((r) => [r.target, r.passed]), [['topic:in', false], ['topic:out', true]]);
    assert.equal(rs[0]!.observed, `under-replicated partitions: ${Array.from({ length: 10 }, (_, i) => `${i} (isr 2/3)`).join(', ')}`);
    assert.equal(rs[1]!.observed, 'all partitions fully in sync');
    for (const r of rs) assert.equal(r.expected, 'isr = replicas on every partition');
    assert.deepEqual(result(liveChecks, 'live.under-replicated', { clients: [], checkpoints: [] }), []);
  });

  test('under-replicated source and sink partitions', () => {
    const rs = result(liveChecks, 'live.under-replicated', facts([broker(1)], [topic('a', 3, 3), topic('b', 3, 2)]));
    assert.deepEqual(rs.map((r) => [r.target, r.passed]), [['topic:a', true], ['topic:b', false]]);
  });
});

describe('audit runner and reports', () => {
  test('a failing source is a finding and the other sources still count; a throwing check is a finding', async () => {
    const good: AuditSource = {
      name: 'good',
      async gather(f) {
        f.cluster = { brokers: [broker(1, { 'transaction.state.log.replication.factor': '1' })], topics: [] };
        return [];
      },
    };
    const bad: AuditSource = { name: 'broken', gather: async () => Promise.reject(new Error('/etc/x.properties: cannot read (no such file)')) };
    const partial: AuditSource = { name: 'partial', gather: async () => ['/etc/y.properties:3: malformed \\uXXXX escape'] };
    const slow: AuditSource = { name: 'slow', gather: () => new Promise(() => undefined) };
    const throwing: Check = { id: 'x.throws', title: 'throws', severity: 'warning', rationale: 'r', remediation: 'm', evaluate: () => { throw new Error('bug'); } };
    const report = await runAudit([good, bad, partial, slow], [...brokerChecks, throwing], { sourceTimeoutMs: 200 });
    const sources = Object.fromEntries(report.sources.map((s) => [s.name, s]));
    assert.equal(sources.good!.ok, true);
    assert.match(sources.broken!.error!, /cannot read \(no such file\)/);
    assert.match(sources.partial!.error!, /y\.properties:3: malformed/);
    assert.match(sources.slow!.error!, /source slow did not finish within 200 ms/);
    const srcFindings = report.findings.filter((f) => f.check === 'audit.source' && !f.passed).map((f) => f.target).sort();
    assert.deepEqual(srcFindings, ['broken', 'partial', 'slow']);
    assert.ok(report.findings.some((f) => f.check === 'broker.transaction-state-log-replication-factor' && !f.passed && f.source === 'cluster'));
    assert.ok(report.findings.some((f) => f.check === 'x.throws' && /check failed to run: bug/.test(f.observed)));
    assert.ok(report.summary.critical >= 1);
    assert.equal(report.summary.warning, 4);
    const table = formatTable(report);
    assert.match(table, /^CRITICAL broker\.transaction-state-log-replication-factor/m);
    assert.match(table, /fix: Set transaction\.state\.log\.replication\.factor=3/);
    const mdText = formatMarkdown(report);
    assert.match(mdText, /\| critical \| `broker\.transaction-state-log-replication-factor` \| broker:1 \|/);
  });

  test('docs/audit-checks.md is generated from the check definitions (npm run docs:checks)', () => {
    assert.equal(readFileSync('docs/audit-checks.md', 'utf8'), renderCatalogue(ALL_CHECKS));
  });

  test('check ids are unique and every check is documented', () => {
    const ids = ALL_CHECKS.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const c of ALL_CHECKS) {
      assert.match(c.id, /^[a-z]+\.[a-z0-9-]+$/);
      assert.ok(c.rationale.length > 30, `${c.id} rationale`);
      assert.ok(c.remediation.length > 10, `${c.id} remediation`);
    }
  });
});

describe('config entry helpers', () => {
  test('describeEntry names the value and where it comes from, or says it is missing', () => {
    assert.equal(describeEntry('a.b', undefined), 'a.b not reported');
    const at = (source: ConfigEntry['source'], value: string | null = '3') => describeEntry('a.b', { value, source });
    assert.equal(at('default'), 'a.b=3 (default)');
    assert.equal(at('static'), 'a.b=3 (server.properties)');
    assert.equal(at('unknown'), 'a.b=3 (source unknown)');
    assert.equal(at('dynamic-broker'), 'a.b=3 (dynamic (per broker))');
    assert.equal(at('dynamic-default'), 'a.b=3 (dynamic (cluster-wide))');
    // A sensitive entry has no value in describeConfigs; the text never invents one.
    assert.equal(at('static', null), 'a.b=(sensitive) (server.properties)');
  });

  test('intOf: a number, or undefined when missing, sensitive, empty or not a number (never 0 by coercion)', () => {
    assert.equal(intOf(undefined), undefined);
    assert.equal(intOf({ value: null, source: 'static' }), undefined);
    assert.equal(intOf({ value: '', source: 'static' }), undefined);
    assert.equal(intOf({ value: 'many', source: 'static' }), undefined);
    assert.equal(intOf({ value: '3', source: 'static' }), 3);
    assert.equal(intOf({ value: '0', source: 'default' }), 0);
  });
});
