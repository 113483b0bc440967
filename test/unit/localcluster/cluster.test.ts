import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { brokerDefaults, mergeRecordedNodes, newClusterId, nodeProperties, type ClusterState } from '../../../src/localcluster/cluster.js';
import { mergeRecordedFlink, type FlinkClusterState } from '../../../src/localcluster/flink-cluster.js';
import { describeSurvivors, judgeProcess, parseProcStat, processStatus, processesReferencing, startTimeOf } from '../../../src/runtime/proc.js';
import { assertSupportedVersion, isKafka4, lockHolderGone, pomFor } from '../../../src/localcluster/kafka-dist.js';

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

// A /proc/<pid>/stat line: pid (comm) state ppid … field 22 starttime … (comm may hold spaces and ')').
function statLine(comm: string, state: string, startTime: number): string {
  const after = [state, '1', '100', '100', '0', '-1', '4194560', '0', '0', '0', '0', '5', '3', '0', '0', '20', '0', '30', '0', String(startTime), '123456', '789'];
  return `4242 (${comm}) ${after.join(' ')}\n`;
}

describe('process identity (pid and start time)', () => {
  test('parseProcStat reads the state and field 22, counting from the last ")"', () => {
    assert.deepEqual(parseProcStat(statLine('java', 'S', 987654)), { state: 'S', startTime: 987654 });
    // A command name with spaces and a ")" does not shift the fields.
    assert.deepEqual(parseProcStat(statLine('a) b (c', 'T', 12)), { state: 'T', startTime: 12 });
    assert.equal(parseProcStat('garbage'), null);
    assert.equal(parseProcStat('1 (x) S 1 2'), null, 'too few fields');
  });

  test('parseProcStat agrees with the real /proc/self/stat', () => {
    const st = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    assert.ok(st);
    assert.match(st.state, /^[RS]$/);
    assert.equal(startTimeOf(process.pid), st.startTime);
  });

  test('judgeProcess: a recycled pid (another start time) is not ours; paused, zombie, gone, no record', () => {
    const rec = { pid: 4242, startTime: 1000 };
    assert.equal(judgeProcess(rec, { state: 'S', startTime: 1000 }, true), 'running');
    assert.equal(judgeProcess(rec, { state: 'R', startTime: 1000 }, true), 'running');
    assert.equal(judgeProcess(rec, { state: 'T', startTime: 1000 }, true), 'paused');
    assert.equal(judgeProcess(rec, { state: 't', startTime: 1000 }, true), 'paused');
    assert.equal(judgeProcess(rec, { state: 'S', startTime: 1001 }, true), 'stopped', 'the pid was reused by a later process');
    assert.equal(judgeProcess(rec, { state: 'Z', startTime: 1000 }, true), 'stopped');
    assert.equal(judgeProcess(rec, { state: 'X', startTime: 1000 }, true), 'stopped');
    assert.equal(judgeProcess(rec, null, true), 'stopped', 'no such pid');
    assert.equal(judgeProcess(rec, { state: 'S', startTime: 1000 }, false), 'stopped', 'same identity but another program');
    assert.equal(judgeProcess({ pid: null, startTime: null }, { state: 'S', startTime: 1000 }, true), 'stopped');
    // A state file written before start times were recorded: the command line decides.
    assert.equal(judgeProcess({ pid: 4242 }, { state: 'S', startTime: 5 }, true), 'running');
    assert.equal(judgeProcess({ pid: 4242 }, { state: 'S', startTime: 5 }, false), 'stopped');
    // Inside execve (`ip netns exec` becoming java) the command line reads empty for a moment: ours
    // when the start time matches, not without a recorded start time, never when it differs or the process is a zombie.
    assert.equal(judgeProcess(rec, { state: 'R', startTime: 1000 }, 'empty'), 'running');
    assert.equal(judgeProcess(rec, { state: 'R', startTime: 1001 }, 'empty'), 'stopped');
    assert.equal(judgeProcess(rec, { state: 'Z', startTime: 1000 }, 'empty'), 'stopped');
    assert.equal(judgeProcess({ pid: 4242 }, { state: 'R', startTime: 5 }, 'empty'), 'stopped');
    assert.equal(judgeProcess({ pid: 4242, startTime: null }, { state: 'R', startTime: 5 }, 'empty'), 'stopped');
  });

  test('processStatus on a real process: our own start time is ours, another is not', () => {
    const startTime = startTimeOf(process.pid)!;
    const needle = readFileSync('/proc/self/cmdline', 'utf8').split('\0')[0]!;
    assert.equal(processStatus({ pid: process.pid, startTime }, needle), 'running');
    assert.equal(processStatus({ pid: process.pid, startTime: startTime + 1 }, needle), 'stopped');
    assert.equal(processStatus({ pid: process.pid, startTime }, '/no/such/props/file'), 'stopped');
  });

  test('processesReferencing finds a live process by a string of its command line, never this process', () => {
    const marker = `eoswatch-proc-test-${process.pid}-${Date.now()}`;
    assert.deepEqual(processesReferencing([marker]), []);
    // The parent (the test runner) holds no marker either; only a process started with it would.
    assert.equal(processesReferencing([readFileSync('/proc/self/cmdline', 'utf8')]).some((p) => p.pid === process.pid), false);
    assert.equal(describeSurvivors([{ pid: 7, cmdline: 'java -cp x kafka.Kafka /d/node-2/server.properties' }]), 'pid 7 (java -cp x kafka.Kafka /d/node-2/server.properties)');
    assert.match(describeSurvivors([{ pid: 8, cmdline: `java ${'x'.repeat(300)} kafka.Kafka /d/node-2/server.properties` }]), /^pid 8 \(java x+ … x+ kafka\.Kafka \/d\/node-2\/server\.properties\)$/);
  });

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
