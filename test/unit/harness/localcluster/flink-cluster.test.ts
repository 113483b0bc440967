// Pure parts of the local Flink harness: version lines, the Maven pom, the JVM flags taken from
// BashJavaUtils, and the cluster configuration (everything bound to loopback).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkConfig, parseBashJavaUtils, type FlinkClusterState } from '../../../../harness/localcluster/flink-cluster.js';
import { flinkPom, resolveFlinkLine } from '../../../../harness/localcluster/flink-dist.js';

test('Flink lines resolve by line or full version, each with its Kafka connector; others are refused', () => {
  assert.deepEqual(resolveFlinkLine('1.20'), { version: '1.20.3', connector: '3.4.0-1.20', pooledNaming: false });
  assert.deepEqual(resolveFlinkLine('1.20.3'), resolveFlinkLine('1.20'));
  // FLIP-511's pooled transactional ids exist only in the connector of the 2.x line.
  assert.deepEqual(resolveFlinkLine('2.2'), { version: '2.2.0', connector: '5.0.0-2.2', pooledNaming: true });
  assert.throws(() => resolveFlinkLine('1.19'), /Flink version "1.19" is not supported: expected one of 1.20 \(1.20.3\), 2.2/);
  assert.throws(() => resolveFlinkLine('1.20.1'), /not supported/);
});

test('the pom stands in for flink-dist: runtime, web, RPC loader, connector and log4j 2', () => {
  const pom = flinkPom(resolveFlinkLine('1.20'));
  for (const a of ['flink-runtime', 'flink-streaming-java', 'flink-clients', 'flink-runtime-web', 'flink-rpc-akka-loader', 'flink-connector-base']) {
    assert.match(pom, new RegExp(`<artifactId>${a}</artifactId><version>1.20.3</version>`));
  }
  assert.match(pom, /<artifactId>flink-connector-kafka<\/artifactId><version>3.4.0-1.20<\/version>/);
  assert.match(pom, /<artifactId>log4j-core<\/artifactId>/);
});

test('BashJavaUtils output becomes JVM flags and dynamic properties; missing output is an error', () => {
  const out = [
    'INFO  [] - Loading configuration property: jobmanager.memory.process.size, 1g',
    'BASH_JAVA_UTILS_EXEC_RESULT:-Xmx469762048 -Xms469762048 -XX:MaxMetaspaceSize=268435456',
    'BASH_JAVA_UTILS_EXEC_RESULT:-D jobmanager.memory.off-heap.size=134217728b -D jobmanager.memory.heap.size=469762048b',
  ].join('\n');
  assert.deepEqual(parseBashJavaUtils(out), {
    jvm: ['-Xmx469762048', '-Xms469762048', '-XX:MaxMetaspaceSize=268435456'],
    dynamic: ['-D', 'jobmanager.memory.off-heap.size=134217728b', '-D', 'jobmanager.memory.heap.size=469762048b'],
  });
  assert.throws(() => parseBashJavaUtils('Exception in thread "main"'), /printed no resource parameters/);
});

test('the cluster configuration binds everything to loopback, on the chosen ports, overridable', () => {
  const state = { dir: '/data/flink', restPort: 40001, rpcPort: 40002, jobmanager: { name: 'jobmanager', logFile: '', pid: null } } as unknown as FlinkClusterState;
  const text = flinkConfig(state, 2, { 'rest.cache.checkpoint-statistics.timeout': '1 s' });
  const conf = new Map(text.trim().split('\n').map((l) => [l.slice(0, l.indexOf(':')), JSON.parse(l.slice(l.indexOf(':') + 2)) as string]));
  for (const k of ['rest.bind-address', 'jobmanager.bind-host', 'taskmanager.bind-host', 'taskmanager.host', 'jobmanager.rpc.address']) assert.equal(conf.get(k), '127.0.0.1', k);
  assert.equal(conf.get('rest.port'), '40001');
  assert.equal(conf.get('jobmanager.rpc.port'), '40002');
  assert.equal(conf.get('taskmanager.numberOfTaskSlots'), '2');
  assert.equal(conf.get('state.checkpoints.dir'), 'file:///data/flink/checkpoints');
  assert.equal(conf.get('rest.cache.checkpoint-statistics.timeout'), '1 s');
});

test('in a networked cluster the JobManager is reached at its own address and binds every address of its namespace', () => {
  const state = {
    dir: '/data/flink',
    restPort: 40001,
    rpcPort: 40002,
    jobmanager: { name: 'jobmanager', logFile: '', pid: null, endpoint: { role: 'fjm', ns: 'eosw-x-fjm', addr: '10.231.7.13' } },
  } as unknown as FlinkClusterState;
  const conf = new Map(flinkConfig(state, 2, {}).trim().split('\n').map((l) => [l.slice(0, l.indexOf(':')), JSON.parse(l.slice(l.indexOf(':') + 2)) as string]));
  for (const k of ['jobmanager.rpc.address', 'rest.address']) assert.equal(conf.get(k), '10.231.7.13', k);
  // 0.0.0.0 inside the namespace: its own address and its loopback (the REST handlers' client reaches the blob server there), nothing of the host.
  for (const k of ['jobmanager.bind-host', 'rest.bind-address']) assert.equal(conf.get(k), '0.0.0.0', k);
});
