// The Kafka Streams checks (src/audit/checks/streams.ts): each over parsed properties and, where it
// matters, the broker view; the two example files of docs/streams-audit.md; the source of a file
// that cannot be read.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { streamsChecks, commonSetting, eosEnabled, streamsOverrides, streamsSetting } from '../../../../src/audit/checks/streams.js';
import { ALL_CHECKS } from '../../../../src/audit/checks/index.js';
import { propertiesSource } from '../../../../src/audit/sources/files.js';
import { runAudit } from '../../../../src/audit/runner.js';
import { sourcesFromConfig } from '../../../../src/audit/sources/index.js';
import { parseConfigText } from '../../../../src/config/load.js';
import { readPropertiesFile } from '../../../../src/audit/parsers/properties.js';
import type { AuditFacts, BrokerFacts, Check, CheckResult, ClientFacts, ClusterFacts } from '../../../../src/audit/types.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../../../fixtures/streams/${name}`, import.meta.url));
const EOS = { 'processing.guarantee': 'exactly_once_v2' };

function check(id: string): Check {
  const c = streamsChecks.find((x) => x.id === id);
  assert.ok(c, `no check ${id}`);
  return c;
}

function streams(entries: Record<string, string>, file = 's.properties'): ClientFacts {
  return { role: 'streams', file, props: new Map(Object.entries(entries)) };
}

function facts(clients: ClientFacts[], cluster?: ClusterFacts): AuditFacts {
  return { clients, checkpoints: [], ...(cluster ? { cluster } : {}) };
}

function broker(id: number, configs: Record<string, string | null>): BrokerFacts {
  return { id, configs: new Map(Object.entries(configs).map(([k, v]) => [k, { value: v, source: 'static' as const }])) };
}

function cluster(...brokers: BrokerFacts[]): ClusterFacts {
  return { brokers, topics: [] };
}

/** The one result of `id` for the single streams file. */
function one(id: string, entries: Record<string, string>, c?: ClusterFacts): CheckResult {
  const rs = check(id).evaluate(facts([streams(entries)], c));
  assert.equal(rs.length, 1, `${id}: ${JSON.stringify(rs)}`);
  assert.equal(rs[0]!.target, 'streams:s.properties');
  return rs[0]!;
}

const seen = (r: CheckResult): [boolean, string] => [r.passed, r.observed];

describe('streams check definitions', () => {
  test('ids, order, severities; every check says why and how; registered after the others', () => {
    assert.deepEqual(
      streamsChecks.map((c) => [c.id, c.severity]),
      [
        ['streams.processing-guarantee', 'critical'],
        ['streams.replication-factor', 'critical'],
        ['streams.min-insync-replicas', 'critical'],
        ['streams.standby-replicas', 'warning'],
        ['streams.commit-interval', 'critical'],
        ['streams.exception-handlers', 'critical'],
        ['streams.state-dir', 'warning'],
        ['streams.client-overrides', 'critical'],
      ],
    );
    for (const c of streamsChecks) assert.ok(c.title && c.rationale.length > 80 && c.remediation.length > 20, c.id);
    assert.deepEqual(ALL_CHECKS.slice(-streamsChecks.length), streamsChecks);
  });

  test('only streams clients are judged, each file on its own', () => {
    const f = facts([
      { role: 'producer', file: 'p', props: new Map() },
      { role: 'consumer', file: 'c', props: new Map() },
      streams(EOS, 'a.properties'),
      streams(EOS, 'b.properties'),
    ]);
    for (const c of streamsChecks) assert.deepEqual(c.evaluate(f).map((r) => r.target), ['streams:a.properties', 'streams:b.properties'], c.id);
    for (const c of streamsChecks) assert.deepEqual(c.evaluate(facts([])), [], c.id);
  });

  test('remediations name the settings they set', () => {
    assert.equal(check('streams.processing-guarantee').remediation, 'Set processing.guarantee=exactly_once_v2.');
    assert.match(check('streams.replication-factor').remediation, /^Set replication\.factor=3 /);
    assert.match(check('streams.min-insync-replicas').remediation, /^Set topic\.min\.insync\.replicas=2 \(with replication\.factor=3\)/);
    assert.match(check('streams.standby-replicas').remediation, /^Set num\.standby\.replicas=1 /);
    assert.match(check('streams.commit-interval').remediation, /commit\.interval\.ms at most half of producer\.transaction\.timeout\.ms .*transaction\.max\.timeout\.ms/);
    assert.match(check('streams.exception-handlers').remediation, /errors\.dead\.letter\.queue\.topic\.name \(KIP-1034/);
    assert.match(check('streams.state-dir').remediation, /^Set state\.dir to a persistent directory/);
    assert.match(check('streams.client-overrides').remediation, /main\.consumer\., restore\.consumer\. or global\.consumer\./);
  });
});

describe('settings as Streams reads them', () => {
  test('values are trimmed, empty is unset', () => {
    const p = new Map([['a', '  x \t'], ['b', '   '], ['c', '']]);
    assert.equal(streamsSetting(p, 'a'), 'x');
    assert.equal(streamsSetting(p, 'b'), undefined);
    assert.equal(streamsSetting(p, 'c'), undefined);
    assert.equal(streamsSetting(p, 'd'), undefined);
  });

  test('producer. and consumer. win over the plain key; an empty prefixed value falls through', () => {
    const p = new Map([['acks', '1'], ['producer.acks', 'all'], ['isolation.level', 'read_uncommitted'], ['consumer.isolation.level', ' ']]);
    assert.deepEqual(commonSetting(p, 'producer', 'acks'), { key: 'producer.acks', value: 'all' });
    assert.deepEqual(commonSetting(p, 'consumer', 'acks'), { key: 'acks', value: '1' });
    assert.deepEqual(commonSetting(p, 'consumer', 'isolation.level'), { key: 'isolation.level', value: 'read_uncommitted' });
    assert.equal(commonSetting(p, 'producer', 'retries'), undefined);
  });

  test('exactly-once: exactly_once_v2 and the removed forms (3.x still runs them), in any case', () => {
    assert.equal(eosEnabled(streams({})), false);
    assert.equal(eosEnabled(streams({ 'processing.guarantee': 'at_least_once' })), false);
    assert.equal(eosEnabled(streams({ 'processing.guarantee': 'Exactly_Once_V2' })), true);
    assert.equal(eosEnabled(streams({ 'processing.guarantee': 'exactly_once' })), true);
    assert.equal(eosEnabled(streams({ 'processing.guarantee': 'exactly_once_beta' })), true);
    assert.equal(eosEnabled(streams({ 'processing.guarantee': 'exactly_once_v3' })), false);
  });
});

describe('streams.processing-guarantee', () => {
  const r = (v?: string) => one('streams.processing-guarantee', v === undefined ? {} : { 'processing.guarantee': v });

  test('exactly_once_v2 passes, shown as written', () => {
    assert.deepEqual([...seen(r('EXACTLY_ONCE_V2')), r('x').expected], [true, 'processing.guarantee=EXACTLY_ONCE_V2', 'processing.guarantee=exactly_once_v2']);
  });

  test('unset and at_least_once fail', () => {
    assert.deepEqual(seen(r()), [false, 'processing.guarantee unset (default at_least_once)']);
    assert.deepEqual(seen(r(' ')), [false, 'processing.guarantee unset (default at_least_once)']);
    assert.deepEqual(seen(r('at_least_once')), [false, 'processing.guarantee=at_least_once']);
  });

  test('exactly_once and exactly_once_beta: removed in 4.0, deprecated on 3.x', () => {
    for (const v of ['exactly_once', 'EXACTLY_ONCE_BETA']) {
      assert.deepEqual(seen(r(v)), [false, `processing.guarantee=${v}: removed in Kafka Streams 4.0 (the application does not start on 4.x), deprecated on 3.x`]);
    }
  });

  test('an unknown value: Streams does not start', () => {
    assert.deepEqual(seen(r('exactly-once')), [false, 'processing.guarantee=exactly-once: not a value Kafka Streams accepts (it does not start)']);
  });
});

describe('streams.replication-factor', () => {
  const r = (entries: Record<string, string>, c?: ClusterFacts) => one('streams.replication-factor', entries, c);

  test('an explicit factor is judged on its own: 3 passes, 2 fails', () => {
    assert.deepEqual([...seen(r({ 'replication.factor': '3' })), r({}).expected], [true, 'replication.factor=3', '>= 3']);
    assert.deepEqual(seen(r({ 'replication.factor': '2' })), [false, 'replication.factor=2']);
    assert.deepEqual(seen(r({ 'replication.factor': ' 4 ' }, cluster(broker(1, { 'default.replication.factor': '1' })))), [true, 'replication.factor=4']);
  });

  test('not a number: fails, saying so', () => {
    assert.deepEqual(seen(r({ 'replication.factor': 'three' })), [false, 'replication.factor=three (not a number: Kafka Streams does not start)']);
    assert.deepEqual(seen(r({ 'replication.factor': 'x3' })), [false, 'replication.factor=x3 (not a number: Kafka Streams does not start)']);
  });

  test('-1 (the default) without the cluster: it depends, and fails until explicit', () => {
    assert.deepEqual(seen(r({})), [false, "replication.factor unset (default -1): the broker's default.replication.factor, which this audit has not read (audit without the cluster): it depends on the cluster"]);
    assert.deepEqual(seen(r({ 'replication.factor': '-1' }, cluster(broker(1, {})))), [false, "replication.factor=-1: the broker's default.replication.factor, which this audit has not read: it depends on the cluster"]);
  });

  test('-1 with the cluster: the lowest default.replication.factor of the brokers is judged', () => {
    const c3 = cluster(broker(1, { 'default.replication.factor': '3' }), broker(2, { 'default.replication.factor': '3' }));
    assert.deepEqual(seen(r({}, c3)), [true, "replication.factor unset (default -1): the broker's default.replication.factor=3 (broker 1)"]);
    const mixed = cluster(broker(1, { 'default.replication.factor': '3' }), broker(2, { 'default.replication.factor': '1' }), broker(3, { 'default.replication.factor': '2' }));
    assert.deepEqual(seen(r({ 'replication.factor': '-1' }, mixed)), [false, "replication.factor=-1: the broker's default.replication.factor=1 (broker 2)"]);
    // A sensitive or odd broker value is no value.
    const odd = cluster(broker(1, { 'default.replication.factor': null }), broker(2, { 'default.replication.factor': 'x' }), broker(3, { 'default.replication.factor': ' 3 ' }));
    assert.deepEqual(seen(r({}, odd)), [true, "replication.factor unset (default -1): the broker's default.replication.factor=3 (broker 3)"]);
  });
});

describe('streams.min-insync-replicas', () => {
  const r = (entries: Record<string, string>, c?: ClusterFacts) => one('streams.min-insync-replicas', entries, c);
  const RF3 = { 'replication.factor': '3' };

  test('topic.min.insync.replicas=2 with replication factor 3 passes; 1 fails', () => {
    assert.deepEqual([...seen(r({ ...RF3, 'topic.min.insync.replicas': '2' })), r({}).expected], [true, 'topic.min.insync.replicas=2', '>= 2 and below the replication factor']);
    assert.deepEqual(seen(r({ ...RF3, 'topic.min.insync.replicas': '1' })), [false, 'topic.min.insync.replicas=1']);
    assert.deepEqual(seen(r({ ...RF3, 'topic.min.insync.replicas': 'two' })), [false, 'topic.min.insync.replicas=two (not a number)']);
  });

  test('equal to (or above) the replication factor: one replica down stops writes', () => {
    const eq = r({ ...RF3, 'topic.min.insync.replicas': '3' });
    assert.deepEqual([...seen(eq), eq.expected], [false, 'topic.min.insync.replicas=3 with replication factor 3: one replica down stops writes', '>= 2 and below the replication factor']);
    assert.deepEqual(seen(r({ 'replication.factor': '2', 'topic.min.insync.replicas': '2' })), [false, 'topic.min.insync.replicas=2 with replication factor 2: one replica down stops writes']);
    // Unknown factor: judged on the value alone.
    assert.deepEqual(seen(r({ 'topic.min.insync.replicas': '5' })), [true, 'topic.min.insync.replicas=5']);
  });

  test('unset: the lowest broker min.insync.replicas, Kafka\'s default 1 when not reported, unknown without the cluster', () => {
    const c = cluster(broker(1, { 'min.insync.replicas': '2' }), broker(2, { 'min.insync.replicas': '1' }));
    assert.deepEqual(seen(r(RF3, c)), [false, "topic.min.insync.replicas unset: the broker's min.insync.replicas=1 (broker 2)"]);
    const c2 = cluster(broker(4, { 'min.insync.replicas': '2', 'default.replication.factor': '3' }));
    assert.deepEqual(seen(r({}, c2)), [true, "topic.min.insync.replicas unset: the broker's min.insync.replicas=2 (broker 4)"]);
    const c1 = cluster(broker(4, { 'min.insync.replicas': '2', 'default.replication.factor': '2' }));
    assert.deepEqual(seen(r({}, c1)), [false, "topic.min.insync.replicas unset: the broker's min.insync.replicas=2 (broker 4) with replication factor 2: one replica down stops writes"]);
    assert.deepEqual(seen(r(RF3, cluster(broker(1, {})))), [false, 'topic.min.insync.replicas unset: the broker default min.insync.replicas=1']);
    assert.deepEqual(seen(r(RF3)), [false, "topic.min.insync.replicas unset: the broker's min.insync.replicas, which this audit has not read (audit without the cluster)"]);
  });
});

describe('streams.standby-replicas', () => {
  const r = (entries: Record<string, string>) => one('streams.standby-replicas', entries);

  test('1 or more passes; unset and 0 fail with the restore cost, which depends on the guarantee', () => {
    assert.deepEqual([...seen(r({ 'num.standby.replicas': '1' })), r({}).expected], [true, 'num.standby.replicas=1', 'num.standby.replicas >= 1']);
    assert.deepEqual(seen(r({ 'num.standby.replicas': '2' })), [true, 'num.standby.replicas=2']);
    assert.deepEqual(seen(r(EOS)), [false, 'num.standby.replicas unset (default 0): after a crash each stateful task restores its whole changelog before it processes again']);
    assert.deepEqual(seen(r({ ...EOS, 'num.standby.replicas': '0' })), [false, 'num.standby.replicas=0: after a crash each stateful task restores its whole changelog before it processes again']);
    assert.deepEqual(seen(r({})), [false, 'num.standby.replicas unset (default 0): a failed-over task restores its changelog before it processes again']);
    assert.deepEqual(seen(r({ 'num.standby.replicas': 'one' })), [false, 'num.standby.replicas=one (not a number)']);
  });
});

describe('streams.commit-interval', () => {
  const r = (entries: Record<string, string>, c?: ClusterFacts) => one('streams.commit-interval', { ...EOS, ...entries }, c);
  const EXPECTED_15M = 'commit.interval.ms at most half of transaction.timeout.ms, and transaction.timeout.ms at most 900000 ms (15m)';

  test('the defaults under exactly-once pass: 100 ms against 10 s, within the broker default 15 min', () => {
    const d = r({});
    assert.deepEqual(seen(d), [
      true,
      'commit.interval.ms unset (default 100 ms (100ms) under exactly-once); transaction.timeout.ms unset (Streams default 10000 ms (10s)); transaction.max.timeout.ms 900000 ms (15m) (broker default, no cluster facts)',
    ]);
    assert.equal(d.expected, EXPECTED_15M);
  });

  test('a commit interval above the transaction timeout: Streams refuses to start', () => {
    assert.deepEqual(seen(r({ 'commit.interval.ms': '30000' })), [
      false,
      'commit.interval.ms=30000 (30s); transaction.timeout.ms unset (Streams default 10000 ms (10s)); transaction.max.timeout.ms 900000 ms (15m) (broker default, no cluster facts); ' +
        'the transaction timeout is below the commit interval: Kafka Streams refuses to start',
    ]);
  });

  test('more than half of the timeout: a slow commit is aborted; exactly half passes', () => {
    assert.match(r({ 'commit.interval.ms': '5001' }).observed, /; a commit that takes longer than the rest of the timeout is aborted by the coordinator$/);
    assert.equal(r({ 'commit.interval.ms': '5001' }).passed, false);
    assert.equal(r({ 'commit.interval.ms': '5000' }).passed, true);
    assert.equal(r({ 'commit.interval.ms': '10000' }).passed, false);
    assert.doesNotMatch(r({ 'commit.interval.ms': '10000' }).observed, /refuses/);
  });

  test('producer.transaction.timeout.ms, else the plain key, against the lowest broker maximum', () => {
    const c = cluster(broker(1, { 'transaction.max.timeout.ms': '900000' }), broker(2, { 'transaction.max.timeout.ms': '60000' }));
    const over = r({ 'producer.transaction.timeout.ms': '120000', 'transaction.timeout.ms': '1000' }, c);
    assert.deepEqual(seen(over), [
      false,
      'commit.interval.ms unset (default 100 ms (100ms) under exactly-once); producer.transaction.timeout.ms=120000 (2m); transaction.max.timeout.ms 60000 ms (1m) (broker 2); ' +
        'the transaction timeout is above the broker maximum: InitProducerId fails and the application does not start',
    ]);
    assert.equal(over.expected, 'commit.interval.ms at most half of transaction.timeout.ms, and transaction.timeout.ms at most 60000 ms (1m)');
    assert.deepEqual(seen(r({ 'transaction.timeout.ms': '60000' }, c)), [
      true,
      'commit.interval.ms unset (default 100 ms (100ms) under exactly-once); transaction.timeout.ms=60000 (1m); transaction.max.timeout.ms 60000 ms (1m) (broker 2)',
    ]);
    assert.match(r({}, cluster(broker(1, {}))).observed, /transaction\.max\.timeout\.ms 900000 ms \(15m\) \(broker default\)$/);
  });

  test('both problems at once are both said', () => {
    const both = r({ 'commit.interval.ms': '2000000', 'producer.transaction.timeout.ms': '1000000' });
    assert.equal(both.passed, false);
    assert.match(both.observed, /refuses to start; the transaction timeout is above the broker maximum/);
  });

  test('not a number: fails naming the key', () => {
    assert.deepEqual(seen(r({ 'commit.interval.ms': '1s' })), [false, 'commit.interval.ms=1s (not a number: Kafka Streams does not start)']);
    assert.deepEqual(seen(r({ 'producer.transaction.timeout.ms': '10s' })), [false, 'producer.transaction.timeout.ms=10s (not a number: Kafka Streams does not start)']);
    assert.equal(r({ 'producer.transaction.timeout.ms': '10s' }).expected, 'a number of milliseconds');
  });

  test('not judged at_least_once (no transactions); judged under the removed exactly_once', () => {
    assert.deepEqual(check('streams.commit-interval').evaluate(facts([streams({ 'commit.interval.ms': '30000' })])), []);
    assert.equal(one('streams.commit-interval', { 'processing.guarantee': 'exactly_once', 'commit.interval.ms': '30000' }).passed, false);
  });
});

describe('streams.exception-handlers', () => {
  const r = (entries: Record<string, string>) => one('streams.exception-handlers', entries);
  const DEFAULTS = 'production: default DefaultProductionExceptionHandler (fails); processing: default LogAndFailProcessingExceptionHandler';
  const CONTINUE = 'org.apache.kafka.streams.errors.LogAndContinueExceptionHandler';

  test('the defaults fail on errors: pass', () => {
    const d = r({});
    assert.deepEqual(seen(d), [true, `deserialization: default LogAndFailExceptionHandler; ${DEFAULTS}`]);
    assert.equal(d.expected, 'fail-on-error handlers, or errors.dead.letter.queue.topic.name set');
  });

  test('log-and-continue deserialization (old or new key): records dropped', () => {
    for (const key of ['default.deserialization.exception.handler', 'deserialization.exception.handler']) {
      assert.deepEqual(seen(r({ [key]: CONTINUE })), [
        false,
        `${key}=${CONTINUE} (continues after an error); ${DEFAULTS}; errors.dead.letter.queue.topic.name unset: a failed record is dropped`,
      ]);
    }
  });

  test('the new key wins over the deprecated default.* one, as in Streams', () => {
    const fail = 'org.apache.kafka.streams.errors.LogAndFailExceptionHandler';
    assert.equal(r({ 'deserialization.exception.handler': fail, 'default.deserialization.exception.handler': CONTINUE }).passed, true);
    assert.equal(r({ 'deserialization.exception.handler': CONTINUE, 'default.deserialization.exception.handler': fail }).passed, false);
    assert.deepEqual(seen(r({ 'production.exception.handler': 'com.x.FailHandler', 'default.production.exception.handler': 'com.x.ContinueHandler' })), [
      true,
      'deserialization: default LogAndFailExceptionHandler; production.exception.handler=com.x.FailHandler; processing: default LogAndFailProcessingExceptionHandler',
    ]);
    assert.equal(r({ 'default.production.exception.handler': 'com.x.ContinueHandler' }).passed, false);
  });

  test('custom handlers named like continue/skip/ignore, and the processing handler', () => {
    assert.deepEqual(seen(r({ 'production.exception.handler': 'com.example.IgnoreErrors' })), [
      false,
      'deserialization: default LogAndFailExceptionHandler; production.exception.handler=com.example.IgnoreErrors (continues after an error); processing: default LogAndFailProcessingExceptionHandler; errors.dead.letter.queue.topic.name unset: a failed record is dropped',
    ]);
    assert.equal(r({ 'processing.exception.handler': 'org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler' }).passed, false);
    assert.equal(r({ 'processing.exception.handler': 'SkipBad' }).passed, false);
    assert.equal(r({ 'processing.exception.handler': 'com.continue.pkg.Fail' }).passed, true, 'the package name is not the class');
    assert.equal(r({ 'production.exception.handler': 'LogAndContinueProductionExceptionHandler' }).passed, false);
  });

  test('a dead-letter topic keeps failed records: pass, saying where they go', () => {
    assert.deepEqual(seen(r({ 'deserialization.exception.handler': CONTINUE, 'errors.dead.letter.queue.topic.name': 'app-dlq' })), [
      true,
      `deserialization.exception.handler=${CONTINUE} (continues after an error); ${DEFAULTS}; errors.dead.letter.queue.topic.name=app-dlq: a failed record goes to the dead-letter topic`,
    ]);
    assert.equal(r({ 'deserialization.exception.handler': CONTINUE, 'errors.dead.letter.queue.topic.name': ' ' }).passed, false);
  });
});

describe('streams.state-dir', () => {
  const r = (entries: Record<string, string>) => one('streams.state-dir', entries);

  test('unset and temporary directories fail; a persistent directory passes', () => {
    assert.deepEqual([...seen(r({})), r({}).expected], [false, 'state.dir unset (default ${java.io.tmpdir}/kafka-streams, /tmp/kafka-streams on Linux)', 'state.dir on persistent storage, not under /tmp']);
    for (const d of ['/tmp', '/tmp/kafka-streams', '/var/tmp/app', '/dev/shm/s', '${java.io.tmpdir}/x']) {
      assert.deepEqual(seen(r({ 'state.dir': d })), [false, `state.dir=${d} (temporary storage)`]);
    }
    for (const d of ['/var/lib/app/kafka-streams', '/data/tmp', '/tmpfs-not/x', '/srv/tmp/x']) assert.deepEqual(seen(r({ 'state.dir': d })), [true, `state.dir=${d}`]);
  });
});

describe('streams.client-overrides', () => {
  const r = (entries: Record<string, string>) => one('streams.client-overrides', { ...EOS, ...entries });

  test('none: pass; not judged at_least_once', () => {
    assert.deepEqual([...seen(r({ 'producer.acks': 'all', 'acks': '-1', 'consumer.isolation.level': 'READ_COMMITTED', 'enable.auto.commit': 'False', 'main.consumer.enable.auto.commit': 'false' })), r({}).expected], [
      true,
      'no producer or consumer override against exactly-once',
      'no override that Streams refuses or that takes effect against exactly-once',
    ]);
    assert.deepEqual(check('streams.client-overrides').evaluate(facts([streams({ 'producer.acks': '1' })])), []);
  });

  test('ignored by Streams (a warning in its log): reported, but pass', () => {
    const x = r({ 'producer.enable.idempotence': 'FALSE', 'transactional.id': 'mine', 'isolation.level': 'read_uncommitted', 'consumer.enable.auto.commit': 'true' });
    assert.deepEqual(seen(x), [
      true,
      'producer.enable.idempotence=FALSE: ignored (Streams forces enable.idempotence=true under exactly-once and logs a warning); ' +
        'transactional.id=mine: ignored (Streams sets the transactional id itself (<application.id>-<process id>-<thread>) and logs a warning); ' +
        'isolation.level=read_uncommitted: ignored (Streams forces isolation.level=read_committed under exactly-once and logs a warning); ' +
        'consumer.enable.auto.commit=true: ignored (Streams forces enable.auto.commit=false and logs an error)',
    ]);
    assert.equal(r({ 'enable.idempotence': 'true' }).observed, 'no producer or consumer override against exactly-once');
  });

  test('refused: max.in.flight > 5 (StreamsConfig), acks other than all, retries=0 (the idempotent producer)', () => {
    assert.deepEqual(seen(r({ 'producer.max.in.flight.requests.per.connection': '6' })), [
      false,
      'producer.max.in.flight.requests.per.connection=6: refused (StreamsConfig throws ConfigException: it cannot exceed 5 under exactly-once)',
    ]);
    assert.equal(r({ 'max.in.flight.requests.per.connection': '5' }).passed, true);
    assert.equal(r({ 'max.in.flight.requests.per.connection': 'five' }).passed, false);
    assert.deepEqual(seen(r({ acks: '1' })), [false, 'acks=1: refused (the idempotent producer Streams creates throws ConfigException: acks must be all)']);
    assert.equal(r({ 'producer.acks': '0', acks: 'all' }).passed, false);
    assert.equal(r({ 'producer.acks': 'ALL', acks: '0' }).passed, true);
    assert.equal(r({ acks: '-1' }).passed, true);
    assert.deepEqual(seen(r({ 'producer.retries': '0' })), [false, 'producer.retries=0: refused (the idempotent producer throws ConfigException: retries must be non-zero)']);
    assert.equal(r({ retries: '3' }).passed, true);
  });

  test('main./restore./global.consumer. prefixes are applied after the override: they weaken exactly-once', () => {
    assert.deepEqual(seen(r({ 'main.consumer.isolation.level': 'read_uncommitted' })), [
      false,
      "main.consumer.isolation.level=read_uncommitted: weakens (applied as written (the main.consumer. prefix comes after Streams' override): the main consumer reads records of aborted and open transactions of the input)",
    ]);
    assert.deepEqual(seen(r({ 'restore.consumer.isolation.level': 'read_uncommitted' })), [
      false,
      "restore.consumer.isolation.level=read_uncommitted: weakens (applied as written (the restore.consumer. prefix comes after Streams' override): restoring state reads aborted changelog writes into the stores)",
    ]);
    assert.deepEqual(seen(r({ 'global.consumer.isolation.level': 'read_uncommitted' })), [
      false,
      "global.consumer.isolation.level=read_uncommitted: weakens (applied as written (the global.consumer. prefix comes after Streams' override): global stores read records of aborted transactions)",
    ]);
    assert.equal(r({ 'main.consumer.isolation.level': 'Read_Committed' }).passed, true);
    assert.deepEqual(seen(r({ 'main.consumer.enable.auto.commit': 'true' })), [
      false,
      "main.consumer.enable.auto.commit=true: weakens (applied as written (the main.consumer. prefix comes after Streams' override): offsets are committed on a timer, outside the transaction)",
    ]);
    assert.deepEqual(seen(r({ 'restore.consumer.enable.auto.commit': 'true' })), [
      false,
      'restore.consumer.enable.auto.commit=true: refused (the restore consumer has no group.id: the consumer throws InvalidConfigurationException for enable.auto.commit=true)',
    ]);
    assert.equal(r({ 'global.consumer.enable.auto.commit': 'FALSE' }).passed, true);
  });

  test('streamsOverrides lists every finding with its verdict, in a stable order', () => {
    const o = streamsOverrides(streams({ ...EOS, 'producer.enable.idempotence': 'false', 'producer.acks': '1', 'consumer.isolation.level': 'read_uncommitted', 'main.consumer.isolation.level': 'read_uncommitted', 'global.consumer.enable.auto.commit': 'true' }));
    assert.deepEqual(o.map((x) => [x.key, x.value, x.verdict]), [
      ['producer.enable.idempotence', 'false', 'ignored'],
      ['producer.acks', '1', 'refused'],
      ['consumer.isolation.level', 'read_uncommitted', 'ignored'],
      ['main.consumer.isolation.level', 'read_uncommitted', 'weakens'],
      ['global.consumer.enable.auto.commit', 'true', 'refused'],
    ]);
  });
});

describe('the example files of docs/streams-audit.md', () => {
  const load = async (name: string): Promise<ClientFacts> => ({ role: 'streams', file: name, props: (await readPropertiesFile(fixture(name))).props });

  test('streams-unsafe.properties parses cleanly (continuation, "key : value") and fails every check', async () => {
    const parsed = await readPropertiesFile(fixture('streams-unsafe.properties'));
    assert.deepEqual(parsed.problems, []);
    assert.equal(parsed.props.get('main.consumer.isolation.level'), 'read_uncommitted');
    assert.equal(parsed.props.get('production.exception.handler'), 'com.example.streams.SkipOnErrorProductionHandler');
    const f = facts([await load('streams-unsafe.properties')], cluster(broker(1, { 'default.replication.factor': '1', 'min.insync.replicas': '1', 'transaction.max.timeout.ms': '900000' })));
    const failed = streamsChecks.flatMap((c) => c.evaluate(f).filter((r) => !r.passed).map(() => c.id));
    assert.deepEqual(failed, streamsChecks.map((c) => c.id));
    assert.match(check('streams.client-overrides').evaluate(f)[0]!.observed, /producer\.max\.in\.flight\.requests\.per\.connection=10: refused.*producer\.acks=1: refused.*main\.consumer\.isolation\.level=read_uncommitted: weakens/);
  });

  test('streams-safe.properties passes every check, with and without a 3-broker cluster', async () => {
    const safe = await load('streams-safe.properties');
    const three = cluster(...[1, 2, 3].map((id) => broker(id, { 'default.replication.factor': '3', 'min.insync.replicas': '2', 'transaction.max.timeout.ms': '900000' })));
    for (const f of [facts([safe]), facts([safe], three)]) {
      for (const c of streamsChecks) {
        const rs = c.evaluate(f);
        assert.equal(rs.length, 1, c.id);
        assert.equal(rs[0]!.passed, true, `${c.id}: ${rs[0]!.observed}`);
      }
    }
  });
});

describe('the Streams source', () => {
  test('a file that cannot be read is a finding naming it, and the other files are still audited', async () => {
    const missing = '/nonexistent/streams.properties';
    const report = await runAudit([propertiesSource('streams', missing), propertiesSource('streams', fixture('streams-safe.properties'))], streamsChecks);
    const src = report.findings.filter((f) => f.check === 'audit.source');
    // The report's order among findings of one severity follows the targets' names, which depend
    // on where the checkout lies: compare by target.
    const byTarget = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    assert.deepEqual(src.map((f) => [f.target, f.passed, f.observed]).sort(byTarget), [
      [`streams:${missing}`, false, `cannot read ${missing}: no such file`],
      [`streams:${fixture('streams-safe.properties')}`, true, 'read'],
    ].sort(byTarget));
    const streamsFindings = report.findings.filter((f) => f.check.startsWith('streams.'));
    assert.equal(streamsFindings.length, streamsChecks.length);
    assert.ok(streamsFindings.every((f) => f.passed && f.target === `streams:${fixture('streams-safe.properties')}`));
  });
});

describe('docs/streams-audit.md', () => {
  test('its safe example is the fixture (without comments) and it lists every check', async () => {
    const doc = await readFile('docs/streams-audit.md', 'utf8');
    const block = /```properties\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(block, 'no properties block');
    const fixtureLines = (await readFile(fixture('streams-safe.properties'), 'utf8')).split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
    assert.deepEqual(block.trim().split('\n'), fixtureLines);
    for (const c of streamsChecks) assert.ok(doc.includes(`| \`${c.id}\` | ${c.severity} |`), c.id);
  });
});

describe('audit.streamsConfigs (the daemon and eoswatch audit --config)', () => {
  test('each file is a streams source, judged by the streams checks of ALL_CHECKS', async () => {
    const safe = fixture('streams-safe.properties');
    const config = parseConfigText(`kafka:\n  brokers: [localhost:9092]\naudit:\n  cluster: false\n  streamsConfigs: [${JSON.stringify(safe)}]\n`, 'eoswatch.yaml', {});
    assert.deepEqual(config.audit.streamsConfigs, [safe]);
    const built = sourcesFromConfig(config, undefined);
    try {
      assert.ok(built.sources.some((s) => s.name === `streams:${safe}`), built.sources.map((s) => s.name).join(', '));
      const report = await runAudit(built.sources.filter((s) => s.name.startsWith('streams:')), ALL_CHECKS);
      assert.deepEqual(report.findings.filter((f) => f.target === `streams:${safe}` && f.check !== 'audit.source').map((f) => [f.check, f.passed]), streamsChecks.map((c) => [c.id, true]));
    } finally {
      await built.close();
    }
  });
});
