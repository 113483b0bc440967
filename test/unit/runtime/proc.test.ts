// Process identity (src/runtime/proc.ts): /proc/<pid>/stat parsed, a recorded process judged by
// pid, start time and command line (a recycled pid is never ours), and the survivors named.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describeSurvivors, judgeProcess, parseProcStat, processStatus, processesReferencing, startTimeOf } from '../../../src/runtime/proc.js';

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

  test('processStatus without a needle (a child this process holds): pid and start time alone', () => {
    const startTime = startTimeOf(process.pid)!;
    assert.equal(processStatus({ pid: process.pid, startTime }, undefined), 'running');
    assert.equal(processStatus({ pid: process.pid, startTime: startTime + 1 }, undefined), 'stopped');
    const table = { stat: () => ({ state: 'T', startTime: 5 }), cmdline: () => { throw new Error('not read without a needle'); } };
    assert.equal(processStatus({ pid: 1, startTime: 5 }, undefined, table), 'paused');
  });
});
