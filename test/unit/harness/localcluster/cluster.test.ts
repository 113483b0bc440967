import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { brokerDefaults, mergeRecordedNodes, newClusterId, nodeProperties, type ClusterState } from '../../../../harness/localcluster/cluster.js';
import { mergeRecordedFlink, type FlinkClusterState } from '../../../../harness/localcluster/flink-cluster.js';
import { assertSupportedVersion, isKafka4, lockHolderGone, pomFor } from '../../../../harness/localcluster/kafka-dist.js';

function state(nodes: number, version = '4.4.0', overrides: Record<string, string> = {}): ClusterState {
  return {
    version,
    clusterId: 'x',
    libs: '/libs',
    dir: '/d',
    heap: '512m',
    overrides,
    nodes: Array.from({ length: nodes }, (_, i) => ({
      id: i + 1,
      brokerPort: 10000 + 2 * i,
      controllerPort: 10001 + 2 * i,
      dir: `/d/node-${i + 1}`,
      propsFile: `/d/node-${i + 1}/server.properties`,
      logFile: `/d/node-${i + 1}/server.log`,
      pid: null,
    })),
  };
}

function props(text: string): Record<string, string> {
  return Object.fromEntries(text.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

describe('local cluster configuration', () => {
  test('3 nodes: static voters, transaction log RF 3 / min ISR 2, loopback listeners', () => {
    const s = state(3);
    const p = props(nodeProperties(s, s.nodes[1]!));
    assert.equal(p['node.id'], '2');
    assert.equal(p['controller.quorum.voters'], '1@127.0.0.1:10001,2@127.0.0.1:10003,3@127.0.0.1:10005');
    assert.equal(p['listeners'], 'PLAINTEXT://127.0.0.1:10002,CONTROLLER://127.0.0.1:10003');
    assert.equal(p['process.roles'], 'broker,controller');
    assert.equal(p['transaction.state.log.replication.factor'], '3');
    assert.equal(p['transaction.state.log.min.isr'], '2');
    assert.equal(p['min.insync.replicas'], '2');
    assert.equal(p['group.initial.rebalance.delay.ms'], '0');
  });

  test('1 node: every replication factor and min ISR is 1', () => {
    const d = brokerDefaults(1);
    for (const k of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr', 'default.replication.factor', 'min.insync.replicas']) {
      assert.equal(d[k], '1', k);
    }
  });

  test('overrides win over the defaults', () => {
    const s = state(3, '4.4.0', { 'transaction.state.log.replication.factor': '1', 'unclean.leader.election.enable': 'true' });
    const p = props(nodeProperties(s, s.nodes[0]!));
    assert.equal(p['transaction.state.log.replication.factor'], '1');
    assert.equal(p['unclean.leader.election.enable'], 'true');
  });

  test('3.9 gets no 4.x-only share coordinator keys', () => {
    const s = state(1, '3.9.1');
    assert.doesNotMatch(nodeProperties(s, s.nodes[0]!), /share\.coordinator/);
    assert.match(nodeProperties(state(1), state(1).nodes[0]!), /share\.coordinator\.state\.topic\.replication\.factor=1/);
  });

  test('cluster ids are 22-char base64url and never start with "-"', () => {
    for (let i = 0; i < 500; i++) {
      const id = newClusterId();
      assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    }
  });

  test('the pom asks for log4j2 bindings on 4.x only', () => {
    assert.match(pomFor('4.4.0'), /log4j-slf4j-impl/);
    assert.doesNotMatch(pomFor('3.9.1'), /log4j-slf4j-impl/);
    assert.match(pomFor('3.9.1'), /<artifactId>kafka-tools<\/artifactId><version>3\.9\.1</);
  });

  test('versions: 3.9.x and 4.x only', () => {
    assert.equal(isKafka4('4.0.0'), true);
    assert.equal(isKafka4('3.9.1'), false);
    assertSupportedVersion('3.9.1');
    assertSupportedVersion('4.4.0');
    assert.throws(() => assertSupportedVersion('3.8.0'), /not supported/);
    assert.throws(() => assertSupportedVersion('latest'), /not supported/);
  });
});

describe('the state file and the processes', () => {
  test('the state file wins for pid and start time: a node started by another process is adopted, one it killed is dropped', () => {
    const ours = state(3).nodes.map((n) => ({ ...n, pid: 100 + n.id, startTime: 10 }));
    const file = state(3).nodes.map((n) => ({ ...n }));
    file[1]!.pid = 999; // `start 2` from the CLI after a `kill 2`
    file[1]!.startTime = 77;
    file[2]!.pid = null; // `kill 3` from the CLI
    file[2]!.startTime = null;
    file[0]!.pid = 101;
    file[0]!.startTime = 10;
    mergeRecordedNodes(ours, file);
    assert.deepEqual(ours.map((n) => [n.pid, n.startTime]), [[101, 10], [999, 77], [null, null]]);
    // An old file without start times leaves none.
    const old = state(1).nodes.map(({ startTime: _s, ...n }) => ({ ...n, pid: 5 }));
    const mine = state(1).nodes.map((n) => ({ ...n, pid: 4, startTime: 3 }));
    mergeRecordedNodes(mine, old);
    assert.deepEqual([mine[0]!.pid, mine[0]!.startTime], [5, null]);
  });

  test('the Flink state file wins for pid and start time of the JobManager and each TaskManager', () => {
    const proc = (name: string, pid: number | null, startTime: number | null) => ({ name, logFile: `/f/${name}.log`, pid, startTime });
    const base = (jm: [number | null, number | null], tm1: [number | null, number | null]): FlinkClusterState => ({
      version: '1.20.1', lib: '/lib', dir: '/f', confDir: '/f/conf', restPort: 1, rpcPort: 2,
      jobmanager: proc('jobmanager', ...jm), taskmanagers: [proc('taskmanager-1', ...tm1)],
    });
    const ours = base([10, 1], [null, null]);
    mergeRecordedFlink(ours, base([10, 1], [555, 66])); // `start-tm 1` from the CLI
    assert.deepEqual([ours.taskmanagers[0]!.pid, ours.taskmanagers[0]!.startTime], [555, 66]);
    assert.deepEqual([ours.jobmanager.pid, ours.jobmanager.startTime], [10, 1]);
  });
});

test('a fetch lock whose holder is gone is taken over; a live holder, or a lock without an owner yet, is waited for', () => {
  const running = (pid: number) => (pid === 100 ? 5000 : null);
  assert.equal(lockHolderGone('100 5000\n', running), false, 'the holder runs');
  assert.equal(lockHolderGone('100 4999', running), true, 'its pid now belongs to another process');
  assert.equal(lockHolderGone('200 5000', running), true, 'no such pid');
  assert.equal(lockHolderGone(null, running), false, 'no owner file yet (being created)');
  assert.equal(lockHolderGone('', running), false);
  assert.equal(lockHolderGone('garbage', running), false);
});
