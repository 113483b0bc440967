import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { parseProperties, readPropertiesFile } from '../../../../src/audit/parsers/properties.js';
import { flinkCheckpointFacts, javaPropertiesLines, parseFlinkConfig, parseFlinkDuration, readFlinkConfigFile } from '../../../../src/audit/parsers/flink-config.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../../../fixtures/audit/${name}`, import.meta.url));
const props = (text: string): Map<string, string> => parseProperties(text, 'test.properties').props;

describe('properties parser', () => {
  test('skips # and ! comments and blank lines, also indented ones', () => {
    const r = parseProperties('# a comment\n! another\n\n   \n  # indented comment\na=1\n', 'p.properties');
    assert.deepEqual([...r.props], [['a', '1']]);
    assert.equal(r.lines.get('a'), 6);
    assert.deepEqual(r.problems, []);
  });

  test('a comment marker after the first character is part of the value', () => {
    assert.equal(props('a=b # not a comment').get('a'), 'b # not a comment');
    assert.equal(props('a=#1').get('a'), '#1');
  });

  test('separators: =, : or whitespace; the first unescaped one; whitespace around it dropped', () => {
    const p = props('a=1\nb:2\nc 3\nd = 4\ne : 5\nf\t\t6\ng   =   7\nh=x=y\ni:x:y\nj  x y \n');
    assert.equal(p.get('a'), '1');
    assert.equal(p.get('b'), '2');
    assert.equal(p.get('c'), '3');
    assert.equal(p.get('d'), '4');
    assert.equal(p.get('e'), '5');
    assert.equal(p.get('f'), '6');
    assert.equal(p.get('g'), '7');
    assert.equal(p.get('h'), 'x=y');
    assert.equal(p.get('i'), 'x:y');
    // Trailing whitespace of a value is kept, as in Java.
    assert.equal(p.get('j'), 'x y ');
  });

  test('empty values and keys without a value', () => {
    const p = props('a=\nb\nc:\nd =   \n');
    assert.equal(p.get('a'), '');
    assert.equal(p.get('b'), '');
    assert.equal(p.get('c'), '');
    assert.equal(p.get('d'), '');
  });

  test('escaped separators belong to the key', () => {
    const p = props('a\\=b=c\nx\\:y:z\nsp\\ ace=1\nhash\\#key=2\n');
    assert.equal(p.get('a=b'), 'c');
    assert.equal(p.get('x:y'), 'z');
    assert.equal(p.get('sp ace'), '1');
    assert.equal(p.get('hash#key'), '2');
  });

  test('escapes \\t \\n \\r \\f \\\\ and any other \\x as x', () => {
    const p = props('a=1\\t2\\n3\\r4\\f5\nb=back\\\\slash\nc=\\q\\=\\:\\ \\#\n');
    assert.equal(p.get('a'), '1\t2\n3\r4\f5');
    assert.equal(p.get('b'), 'back\\slash');
    assert.equal(p.get('c'), 'q=: #');
  });

  test('unicode escapes', () => {
    const p = props('greeting=gr\\u00FC\\u00dfe\n\\u006bey=v\n');
    assert.equal(p.get('greeting'), 'grüße');
    assert.equal(p.get('key'), 'v');
  });

  test('continuations: odd trailing backslashes continue, leading whitespace of the next line dropped', () => {
    const r = parseProperties('list=a,\\\n    b,\\\n\tc\nafter=1\n', 'p');
    assert.equal(r.props.get('list'), 'a,b,c');
    assert.equal(r.lines.get('list'), 1);
    assert.equal(r.lines.get('after'), 4);
  });

  test('an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
    const p = props('a=x\\\\\nb=y\nc=z\\\\\\\n  w\n');
    assert.equal(p.get('a'), 'x\\');
    assert.equal(p.get('b'), 'y');
    assert.equal(p.get('c'), 'z\\w');
  });

  test('a continuation line starting with # is not a comment; a comment does not continue', () => {
    const p = props('a=1\\\n  #2\n# c=\\\nd=4\n');
    assert.equal(p.get('a'), '1#2');
    assert.equal(p.has('c'), false);
    assert.equal(p.get('d'), '4');
  });

  test('a blank line after a continuation ends the entry; a dangling backslash at the end is dropped', () => {
    const p = props('a=1\\\n\nb=2\\');
    assert.equal(p.get('a'), '1');
    assert.equal(p.get('b'), '2');
  });

  test('CRLF and CR line endings', () => {
    const p = props('a=1\r\nb=2\rc=3\\\r\n  4\r\n');
    assert.deepEqual([...p], [['a', '1'], ['b', '2'], ['c', '34']]);
  });

  test('duplicate keys: the last wins, and its line is recorded', () => {
    const r = parseProperties('acks=1\nacks=all\n', 'p');
    assert.equal(r.props.get('acks'), 'all');
    assert.equal(r.lines.get('acks'), 2);
  });

  test('a malformed \\u escape is a problem naming file and line; the rest is still parsed', () => {
    const r = parseProperties('a=1\nbad=\\u12G4\nshort=\\u12\nc=3\n', '/etc/app/producer.properties');
    assert.equal(r.props.get('a'), '1');
    assert.equal(r.props.get('c'), '3');
    assert.equal(r.props.has('bad'), false);
    assert.equal(r.problems.length, 2);
    assert.equal(r.problems[0]!.line, 2);
    assert.match(r.problems[0]!.message, /^\/etc\/app\/producer\.properties:2: malformed \\uXXXX escape/);
    assert.equal(r.problems[1]!.line, 3);
  });

  test('a malformed \\u escape quotes neither a key that may hold a secret nor the value', () => {
    // A key glued to a password by a continuation, a password with a bad escape, and a plain key.
    const r = parseProperties('ssl.key.password\\\nhunter2-pw\\u1\nssl.truststore.password=hunter3-pw\\u12\nretries=\\u12\n', 'p.properties');
    assert.deepEqual(
      r.problems.map((p) => p.message),
      [
        'p.properties:1: malformed \\uXXXX escape in the key of this entry; the entry is ignored',
        'p.properties:3: malformed \\uXXXX escape in the value of this entry; the entry is ignored',
        'p.properties:4: malformed \\uXXXX escape in the value of retries; the entry is ignored',
      ],
    );
  });

  test('a setting glued onto the line before by a stray trailing backslash is a problem naming both lines, not the text', () => {
    const r = parseProperties('enable.idempotence=true\nacks=all \\\nsasl.jaas.config=x.PlainLoginModule required password="hunter2-pw";\nretries=5\n', 'p.properties');
    assert.equal(r.props.get('acks'), 'all sasl.jaas.config=x.PlainLoginModule required password="hunter2-pw";', 'read as Java reads it');
    assert.equal(r.props.has('sasl.jaas.config'), false);
    assert.deepEqual(r.problems, [
      { line: 3, message: 'p.properties:3: this line (sasl.jaas.config) is not a setting of its own: the line before ends with \\, so Java reads it as part of the entry of line 2 (remove the trailing backslash)' },
    ]);
    // A value continued on purpose (JAAS options, class lists) is no problem.
    const ok = parseProperties('sasl.jaas.config=x.PlainLoginModule required \\\n  username="u" \\\n  password="p";\ninterceptor.classes=a.B,\\\n  c.D\n', 'q.properties');
    assert.deepEqual(ok.problems, []);
  });

  test('a byte order mark is reported, as Java makes it part of the first key', () => {
    const r = parseProperties('\uFEFFacks=all\n', 'p.properties');
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]!.message, /^p\.properties:1: .*byte order mark/);
  });

  test('reads the fixtures', async () => {
    const safe = await readPropertiesFile(fixture('producer-safe.properties'));
    assert.deepEqual(safe.problems, []);
    assert.equal(safe.props.get('bootstrap.servers'), 'broker-1:9092,broker-2:9092,broker-3:9092');
    assert.equal(safe.props.get('client.id'), 'orders-enricher');
    assert.equal(safe.props.get('transactional.id'), 'orders-enricher-0');
    assert.equal(safe.lines.get('bootstrap.servers'), 4);
    const unsafe = await readPropertiesFile(fixture('producer-unsafe.properties'));
    assert.equal(unsafe.props.get('acks'), '1');
    assert.equal(unsafe.props.has('transactional.id'), false);
    const consumer = await readPropertiesFile(fixture('consumer-unsafe.properties'));
    assert.equal(consumer.props.get('isolation.level'), 'read_uncommitted');
  });

  test('a missing file: the error names the path and the reason', async () => {
    const path = fixture('does-not-exist.properties');
    await assert.rejects(readPropertiesFile(path), (err: Error) => {
      assert.ok(err.message.includes(path), err.message);
      assert.match(err.message, /no such file/);
      return true;
    });
    await assert.rejects(readPropertiesFile(fixture('')), /is a directory/);
  });
});

describe('Flink durations', () => {
  test('Flink syntax, plain numbers are milliseconds', () => {
    assert.equal(parseFlinkDuration('10 s'), 10_000);
    assert.equal(parseFlinkDuration('1 min'), 60_000);
    assert.equal(parseFlinkDuration('5min'), 300_000);
    assert.equal(parseFlinkDuration('2m'), 120_000);
    assert.equal(parseFlinkDuration('500 ms'), 500);
    assert.equal(parseFlinkDuration('1h'), 3_600_000);
    assert.equal(parseFlinkDuration('2 hours'), 7_200_000);
    assert.equal(parseFlinkDuration('1 d'), 86_400_000);
    assert.equal(parseFlinkDuration('30 SECONDS'), 30_000);
    assert.equal(parseFlinkDuration('60000'), 60_000);
    assert.equal(parseFlinkDuration(' 7 sec '), 7000);
    assert.equal(parseFlinkDuration('1500 µs'), 1);
  });

  test('not Flink syntax', () => {
    for (const bad of ['', 'ten s', '1.5 s', '-1 s', '1 h 30 min', '10 sex', 'PT10S']) {
      assert.throws(() => parseFlinkDuration(bad), /invalid Flink duration/, bad);
    }
  });
});

describe('Flink configuration parser', () => {
  test('legacy flink-conf.yaml: values literal, # cuts the line, problems name file and line', async () => {
    const path = fixture('flink-conf.yaml');
    const r = await readFlinkConfigFile(path);
    assert.equal(r.format, 'legacy');
    assert.deepEqual(r.problems, []);
    assert.equal(r.props.get('execution.checkpointing.interval'), '1 min');
    assert.equal(r.props.get('sink.delivery-guarantee'), 'exactly-once');
    assert.equal(r.props.get('state.checkpoints.dir'), 'hdfs:///flink/checkpoints');
    assert.equal(r.lines.get('execution.checkpointing.mode'), 9);
  });

  test('legacy: a line without ": " and an empty value are problems; the rest is parsed', () => {
    const text = 'a.b: 1\nnot a pair\nc.d:no-space\ne.f: \ng.h: x # y\n';
    const r = parseFlinkConfig(text, '/opt/flink/conf/flink-conf.yaml');
    assert.deepEqual([...r.props], [['a.b', '1'], ['g.h', 'x']]);
    assert.deepEqual(r.problems.map((p) => p.line), [2, 3, 4]);
    assert.match(r.problems[0]!.message, /^\/opt\/flink\/conf\/flink-conf\.yaml:2: not a key-value pair/);
  });

  test('legacy is not YAML: a value that YAML would read as a list or a quoted string stays literal', () => {
    const r = parseFlinkConfig("a: [x, y]\nb: 'q'\n", 'flink-conf.yaml');
    assert.equal(r.props.get('a'), '[x, y]');
    assert.equal(r.props.get('b'), "'q'");
  });

  test('standard config.yaml: nested maps flattened, lists comma-joined, line numbers', async () => {
    const r = await readFlinkConfigFile(fixture('config.yaml'));
    assert.equal(r.format, 'standard');
    assert.deepEqual(r.problems, []);
    assert.equal(r.props.get('state.backend.type'), 'rocksdb');
    assert.equal(r.props.get('execution.checkpointing.interval'), '10 s');
    assert.equal(r.props.get('execution.checkpointing.incremental'), 'true');
    assert.equal(r.props.get('taskmanager.numberOfTaskSlots'), '4');
    assert.equal(r.props.get('pipeline.jars'), 'file:///opt/flink/usrlib/orders-enricher.jar,file:///opt/flink/usrlib/udfs.jar');
    assert.equal(r.props.get('sink.transactional-id-prefix'), 'orders-enricher');
    assert.equal(r.props.get('properties.transaction.timeout.ms'), '600000');
    assert.equal(r.lines.get('execution.checkpointing.interval'), 14);
  });

  test('standard: malformed YAML gives a problem naming file and line', () => {
    const text = 'execution:\n  checkpointing:\n    interval: 10 s\n    mode: [EXACTLY_ONCE\nstate.backend.type: rocksdb\n';
    const r = parseFlinkConfig(text, '/opt/flink/conf/config.yaml');
    assert.equal(r.format, 'standard');
    assert.ok(r.problems.length > 0);
    assert.match(r.problems[0]!.message, /^\/opt\/flink\/conf\/config\.yaml:\d+: /);
    assert.ok(r.problems[0]!.line >= 4, String(r.problems[0]!.line));
  });

  test('standard: duplicate keys are a problem, the last wins; an empty value is a problem', () => {
    const r = parseFlinkConfig('a:\n  b: 1\na.b: 2\nc:\n', 'config.yaml');
    assert.equal(r.props.get('a.b'), '2');
    assert.equal(r.props.has('c'), false);
    assert.deepEqual(r.problems.map((p) => p.line), [4]);
    const dup = parseFlinkConfig('a: 1\na: 2\n', 'config.yaml');
    assert.equal(dup.props.get('a'), '2');
    assert.equal(dup.problems.length, 1);
    assert.match(dup.problems[0]!.message, /^config\.yaml:2: /);
  });

  test('other names: YAML when it is a YAML map, flat otherwise', () => {
    const yaml = parseFlinkConfig('execution:\n  checkpointing:\n    interval: 5 s\n', 'job.yaml');
    assert.equal(yaml.format, 'standard');
    assert.equal(yaml.props.get('execution.checkpointing.interval'), '5 s');
    const flat = parseFlinkConfig('a: b: c\nd: [1\n', 'job.conf');
    assert.equal(flat.format, 'legacy');
    assert.equal(flat.props.get('a'), 'b: c');
    assert.equal(flat.props.get('d'), '[1');
  });

  test('a Java .properties file passed as Flink configuration: one error saying so, not a line-by-line complaint', () => {
    const text = '# producer for the sink\nbootstrap.servers=localhost:9092\nenable.idempotence=true\n\nacks = all\ntransactional.id=orders-sink\n';
    for (const name of ['/etc/app/producer.properties', '/etc/app/config.yaml', '/etc/app/flink-conf.yaml', 'job.conf']) {
      assert.throws(
        () => parseFlinkConfig(text, name),
        (err: Error) => {
          assert.equal(
            err.message,
            `${name}: not a Flink configuration file (looks like a Java .properties file: "name=value" at lines 2, 3, 5, …); Flink reads config.yaml (YAML) or flink-conf.yaml ("name: value" lines); a Kafka client's .properties file is audited with --producer, --consumer or --streams`,
          );
          return true;
        },
        name,
      );
    }
    assert.deepEqual(javaPropertiesLines('a=1\n'), [1]);
    // Flink's own files: '=' inside a value, or a stray properties line among Flink lines, is not a properties file.
    assert.equal(javaPropertiesLines('env.java.opts.all: -Dfoo=bar -Dx=y\nexecution.checkpointing.interval: 10 s\n'), null);
    assert.equal(javaPropertiesLines('a: 1\nb: 2\nc=3\n'), null);
    assert.equal(javaPropertiesLines('execution:\n  checkpointing:\n    interval: 5 s\n'), null);
    assert.equal(javaPropertiesLines('# only comments\n! and this\n'), null);
    assert.equal(parseFlinkConfig('env.java.opts.all: -Dfoo=bar\n', 'flink-conf.yaml').props.get('env.java.opts.all'), '-Dfoo=bar');
  });

  test('a missing Flink file: the error names the path and the reason', async () => {
    await assert.rejects(readFlinkConfigFile('/nonexistent/flink/config.yaml'), /cannot read \/nonexistent\/flink\/config\.yaml: no such file/);
  });
});

describe('Flink checkpoint facts', () => {
  test('legacy unsafe fixture', async () => {
    const r = await readFlinkConfigFile(fixture('flink-conf.yaml'));
    const f = flinkCheckpointFacts(r.props, 'flink:flink-conf.yaml');
    assert.deepEqual(f, {
      origin: 'flink',
      target: 'flink:flink-conf.yaml',
      intervalMs: 60_000,
      mode: 'AT_LEAST_ONCE',
      timeoutMs: 90_000,
      tolerableFailed: 3,
      retainOnCancellation: false,
      stateBackend: 'hashmap',
      sinkDeliveryGuarantee: 'EXACTLY_ONCE',
      sinkTransactionTimeoutMs: 3_600_000,
    });
  });

  test('standard safe fixture', async () => {
    const r = await readFlinkConfigFile(fixture('config.yaml'));
    const f = flinkCheckpointFacts(r.props, 'flink:config.yaml');
    assert.deepEqual(f, {
      origin: 'flink',
      target: 'flink:config.yaml',
      intervalMs: 10_000,
      mode: 'EXACTLY_ONCE',
      timeoutMs: 60_000,
      minPauseMs: 5000,
      tolerableFailed: 0,
      retainOnCancellation: true,
      stateBackend: 'rocksdb',
      incremental: true,
      sinkDeliveryGuarantee: 'EXACTLY_ONCE',
      sinkTransactionalIdPrefix: 'orders-enricher',
      sinkTransactionTimeoutMs: 600_000,
    });
  });

  test('old and new key names; mode defaults to EXACTLY_ONCE only when checkpointing is on', () => {
    const old = flinkCheckpointFacts(
      new Map([
        ['execution.checkpointing.interval', '30000'],
        ['state.backend', 'rocksdb'],
        ['state.backend.incremental', 'TRUE'],
        ['delivery.guarantee', 'exactly_once'],
        ['transactional.id.prefix', 'job-a'],
        ['transaction.timeout.ms', '900000'],
      ]),
      'flink:old',
    );
    assert.equal(old.mode, 'EXACTLY_ONCE');
    assert.equal(old.intervalMs, 30_000);
    assert.equal(old.stateBackend, 'rocksdb');
    assert.equal(old.incremental, true);
    assert.equal(old.sinkDeliveryGuarantee, 'EXACTLY_ONCE');
    assert.equal(old.sinkTransactionalIdPrefix, 'job-a');
    assert.equal(old.sinkTransactionTimeoutMs, 900_000);

    // New names win over deprecated ones.
    const both = flinkCheckpointFacts(new Map([['state.backend', 'hashmap'], ['state.backend.type', 'rocksdb']]), 'flink:x');
    assert.equal(both.stateBackend, 'rocksdb');

    const off = flinkCheckpointFacts(new Map([['execution.checkpointing.mode', 'EXACTLY_ONCE']]), 'flink:off');
    assert.equal(off.mode, undefined);
    assert.equal(off.intervalMs, undefined);
  });

  test('a value Flink would reject throws, naming the target and the key', () => {
    assert.throws(
      () => flinkCheckpointFacts(new Map([['execution.checkpointing.interval', '10 sex']]), 'flink:/opt/conf.yaml'),
      /flink:\/opt\/conf\.yaml: execution\.checkpointing\.interval: "10 sex" is not a Flink duration/,
    );
    assert.throws(
      () => flinkCheckpointFacts(new Map([['execution.checkpointing.tolerable-failed-checkpoints', 'three']]), 'flink:x'),
      /tolerable-failed-checkpoints: "three" is not an integer/,
    );
  });

  test('fixture text is read as written (sanity check of the line numbers used above)', async () => {
    const text = await readFile(fixture('config.yaml'), 'utf8');
    assert.equal(text.split('\n')[13], '    interval: 10 s');
    const legacy = await readFile(fixture('flink-conf.yaml'), 'utf8');
    assert.equal(legacy.split('\n')[8], 'execution.checkpointing.mode: AT_LEAST_ONCE');
  });
});
