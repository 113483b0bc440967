import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { brokerChecks, effectiveMessageFormat, parseKafkaVersion } from '../../../../src/audit/checks/broker.js';
import { liveChecks } from '../../../../src/audit/checks/live.js';
import { describeEntry, intOf } from '../../../../src/audit/checks/util.js';
import { runAudit, type AuditSource } from '../../../../src/audit/runner.js';
import { formatMarkdown, formatTable } from '../../../../src/audit/report.js';
import { renderCatalogue } from '../../../../src/audit/catalogue.js';
import { ALL_CHECKS } from '../../../../src/audit/checks/index.js';
import type { AuditFacts, BrokerFacts, Check, ConfigEntry, TopicFacts } from '../../../../src/audit/types.js';
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

  test('broker count: 3 pass, fewer fail, the count is said', () => {
    const count = (n: number) => result(brokerChecks, 'cluster.broker-count', facts(Array.from({ length: n }, (_, i) => broker(i + 1))));
    assert.deepEqual(count(1).map((r) => [r.target, r.passed, r.observed, r.expected]), [['cluster', false, '1 broker', '>= 3 brokers']]);
    assert.deepEqual(count(2).map((r) => [r.passed, r.observed]), [[false, '2 brokers']]);
    assert.deepEqual(count(3).map((r) => [r.passed, r.observed]), [[true, '3 brokers']]);
  });

  test('replication factor 3 passes on both internal logs, 2 and a missing value fail', () => {
    for (const [id, key] of [['broker.transaction-state-log-replication-factor', 'transaction.state.log.replication.factor'], ['broker.offsets-topic-replication-factor', 'offsets.topic.replication.factor']] as const) {
      const at = (v: string) => result(brokerChecks, id, facts([broker(1, { [key]: v })]))[0]!;
      assert.deepEqual([at('3').passed, at('3').expected], [true, '>= 3'], id);
      assert.equal(at('2').passed, false, id);
      const bare = result(brokerChecks, id, facts([{ id: 4, configs: new Map() }]))[0]!;
      assert.deepEqual([bare.target, bare.passed, bare.observed], ['broker:4', false, `${key} not reported`], id);
    }
  });

  test('transaction log min ISR: 2 below the replication factor passes; equal, or 2 with replication factor 2, fails; unknown factor judged on min ISR alone', () => {
    const at = (o: Record<string, string>) => result(brokerChecks, 'broker.transaction-state-log-min-isr', facts([broker(1, o)]))[0]!;
    const ok = at({});
    assert.deepEqual([ok.passed, ok.observed, ok.expected], [true, 'transaction.state.log.min.isr=2 (server.properties), replication factor 3', '>= 2 and < transaction.state.log.replication.factor']);
    assert.equal(at({ 'transaction.state.log.replication.factor': '2' }).passed, false);
    const unknown: BrokerFacts = { id: 1, configs: entries({ 'transaction.state.log.min.isr': '2' }) };
    const u = result(brokerChecks, 'broker.transaction-state-log-min-isr', facts([unknown]))[0]!;
    assert.deepEqual([u.passed, u.observed], [true, 'transaction.state.log.min.isr=2 (server.properties), replication factor unknown']);
    const none = result(brokerChecks, 'broker.transaction-state-log-min-isr', facts([{ id: 1, configs: new Map() }]))[0]!;
    assert.equal(none.passed, false);
  });

  test('record format: the per-broker result says v2 or the downgrade', () => {
    const old = broker(1, { 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '0.10.2' });
    const [r] = result(brokerChecks, 'broker.message-format', facts([old]));
    assert.deepEqual([r!.target, r!.passed, r!.expected], ['broker:1', false, 'record format v2']);
    assert.equal(r!.observed, 'log.message.format.version=0.10.2 (server.properties) with inter.broker.protocol.version=0.10.2 (server.properties): records below format v2 cannot carry transactions');
    const [ok] = result(brokerChecks, 'broker.message-format', facts([broker(2)]));
    assert.equal(ok!.passed, true);
    const modern = effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.11.0', 'inter.broker.protocol.version': '2.8-IV1' }) });
    assert.deepEqual(modern, { ok: true, observed: 'format v2: log.message.format.version=0.11.0 (server.properties)' });
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '2.9' }) }).ok, false);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '3.0-IV1' }) }).ok, true);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '4.0' }) }).ok, true);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '1.0', 'inter.broker.protocol.version': '1.0' }) }).ok, true);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'inter.broker.protocol.version': '2.8' }) }).ok, false);
    assert.deepEqual(parseKafkaVersion('0.10.2'), [0, 10]);
    assert.equal(parseKafkaVersion(null), undefined);
    assert.equal(parseKafkaVersion('v3.9'), undefined);
  });

  test('unclean leader election: a topic override is a finding of its own; internal topics and false overrides are not', () => {
    const t = (name: string, v: string, roles: TopicFacts['roles'] = ['sink']) => topic(name, 3, 3, { 'min.insync.replicas': '2', 'unclean.leader.election.enable': v }, roles);
    const rs = result(brokerChecks, 'broker.unclean-leader-election', facts([broker(1)], [t('a', 'true'), t('b', 'false'), t('__x', 'true', ['internal'])]));
    assert.deepEqual(rs.map((r) => [r.target, r.passed]), [['broker:1', true], ['topic:a', false]]);
    assert.deepEqual([rs[0]!.observed, rs[0]!.expected], ['unclean.leader.election.enable=false (server.properties)', 'false']);
    assert.deepEqual([rs[1]!.observed, rs[1]!.expected], ['unclean.leader.election.enable=true (default)', 'false']);
  });

  test('topic replication factor is the smallest of its partitions', () => {
    const mixed: TopicFacts = { ...topic('m', 3, 3), partitions: [{ partition: 0, leader: 1, replicas: [1, 2, 3], isr: [1, 2, 3] }, { partition: 1, leader: 1, replicas: [1, 2], isr: [1, 2] }] };
    const [r] = result(brokerChecks, 'topic.replication-factor', facts([broker(1)], [mixed]));
    assert.deepEqual([r!.passed, r!.observed, r!.expected], [false, 'replication factor 2', '>= 3']);
    const [ok] = result(brokerChecks, 'topic.replication-factor', facts([broker(1)], [topic('ok', 3, 3)]));
    assert.equal(ok!.observed, 'replication factor 3');
    const [none] = result(brokerChecks, 'topic.replication-factor', facts([broker(1)], [{ ...topic('e', 3, 3), partitions: [] }]));
    assert.deepEqual([none!.passed, none!.observed], [false, 'replication factor unknown']);
  });

  test('topic min ISR: unset is 1 and fails; with fewer than 3 replicas the remediation raises the factor first', () => {
    const at = (t: TopicFacts) => result(brokerChecks, 'topic.min-insync-replicas', facts([broker(1)], [t]))[0]!;
    const unset = at(topic('u', 3, 3, {}));
    assert.deepEqual([unset.passed, unset.observed, unset.expected, unset.remediation], [false, 'min.insync.replicas not reported', '>= 2', undefined]);
    const thin = at(topic('thin', 2, 2, { 'min.insync.replicas': '1' }));
    assert.match(thin.remediation ?? '', /^First raise the replication factor to 3 .*then set min\.insync\.replicas=2 on the topic \(kafka-configs\.sh --alter --entity-type topics\)\.$/);
    assert.equal(at(topic('ok2', 2, 2, { 'min.insync.replicas': '2' })).remediation, undefined);
  });

  test('record format: two-digit versions, a missing protocol version, and the full text of an ignored format', () => {
    assert.deepEqual(parseKafkaVersion('10.2-IV0'), [10, 2]);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2' }) }).ok, false);
    assert.equal(effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '2.8' }) }).ok, true);
    assert.equal(
      effectiveMessageFormat({ id: 1, configs: entries({ 'log.message.format.version': '0.10.2', 'inter.broker.protocol.version': '3.9-IV0' }) }).observed,
      'format v2: inter.broker.protocol.version=3.9-IV0 (server.properties) is 3.0 or newer, so log.message.format.version=0.10.2 (server.properties) is ignored',
    );
  });

  test('unclean leader election not reported by a broker: its default false passes', () => {
    const [r] = result(brokerChecks, 'broker.unclean-leader-election', facts([{ id: 1, configs: new Map() }]));
    assert.deepEqual([r!.passed, r!.observed], [true, 'unclean.leader.election.enable not reported']);
  });

  test('topic min ISR: the replicas that count for raising the factor first are the fewest of any partition', () => {
    const mixed: TopicFacts = { ...topic('m', 3, 3, { 'min.insync.replicas': '1' }), partitions: [{ partition: 0, leader: 1, replicas: [1, 2, 3], isr: [1, 2, 3] }, { partition: 1, leader: 1, replicas: [1, 2], isr: [1, 2] }] };
    const [r] = result(brokerChecks, 'topic.min-insync-replicas', facts([broker(1)], [mixed]));
    assert.match(r!.remediation ?? '', /^First raise the replication factor to 3/);
  });

  test('remediations name the broker and topic keys they set', () => {
    const rem = (id: string) => brokerChecks.find((c) => c.id === id)!.remediation;
    assert.match(rem('broker.transaction-state-log-replication-factor'), /transaction\.state\.log\.replication\.factor=3/);
    assert.match(rem('broker.transaction-state-log-min-isr'), /transaction\.state\.log\.min\.isr=2/);
    assert.match(rem('broker.offsets-topic-replication-factor'), /offsets\.topic\.replication\.factor=3/);
    assert.match(rem('broker.unclean-leader-election'), /unclean\.leader\.election\.enable=false/);
    assert.match(rem('topic.min-insync-replicas'), /min\.insync\.replicas=2/);
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
