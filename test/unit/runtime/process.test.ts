// The tracked-process type (src/runtime/process.ts) on a process table of the test's own and the
// manual clock: which signals it sends when, that a pid it does not own (another start time,
// another command line) is never signalled, the SIGKILL escalation and its deadline, the command
// line of a parent-death signal, and the one exit hook. Spawning real processes is the
// integration test's (test/integration/tracked-process.test.ts).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/runtime/clock.js';
import { atExit, commandLine, exitHooksPending, killAllSync, TrackedProcess, type ProcessTable } from '../../../src/runtime/process.js';

interface FakeProc {
  state: string;
  startTime: number;
  cmdline: string;
}

/** A process table: kill() records each signal and applies it as `onSignal` says (by default SIGKILL ends the process). */
class FakeTable implements ProcessTable {
  readonly procs = new Map<number, FakeProc>();
  readonly sent: { pid: number; sig: NodeJS.Signals }[] = [];
  constructor(private readonly onSignal: (p: FakeProc, sig: NodeJS.Signals) => 'gone' | 'stays' = (_, sig) => (sig === 'SIGKILL' ? 'gone' : 'stays')) {}
  stat(pid: number) {
    const p = this.procs.get(pid);
    return p ? { state: p.state, startTime: p.startTime } : null;
  }
  cmdline(pid: number) {
    return this.procs.get(pid)?.cmdline ?? null;
  }
  kill(pid: number, sig: NodeJS.Signals): void {
    const p = this.procs.get(pid);
    if (!p) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    this.sent.push({ pid, sig });
    if (sig === 'SIGSTOP') p.state = 'T';
    if (sig === 'SIGCONT' && p.state === 'T') p.state = 'S';
    if (this.onSignal(p, sig) === 'gone') this.procs.delete(pid);
  }
  get signals(): NodeJS.Signals[] {
    return this.sent.map((s) => s.sig);
  }
}

const NEEDLE = '/run/node-1/server.properties';

function setup(onSignal?: ConstructorParameters<typeof FakeTable>[0], proc: Partial<FakeProc> = {}) {
  const table = new FakeTable(onSignal);
  table.procs.set(4242, { state: 'S', startTime: 1000, cmdline: `java\0kafka.Kafka\0${NEEDLE}\0`, ...proc });
  const clock = new ManualClock(0);
  const record = { pid: 4242 as number | null, startTime: 1000 as number | null };
  const p = new TrackedProcess(record, { name: 'node 1', needle: NEEDLE, clock, table });
  return { table, clock, record, p };
}

/** Runs `work` on the manual clock, advancing it by `step` ms until it settles; the time it took and its outcome. */
async function settleOn<T>(clock: ManualClock, work: Promise<T>, step = 50, limit = 100_000): Promise<{ at: number; value?: T; err?: unknown }> {
  let out: { at: number; value?: T; err?: unknown } | undefined;
  work.then(
    (value) => (out = { at: clock.now(), value }),
    (err: unknown) => (out = { at: clock.now(), err }),
  );
  while (!out && clock.now() < limit) await clock.advance(step);
  assert.ok(out, `did not settle within ${limit} ms`);
  return out;
}

describe('TrackedProcess: identity', () => {
  test('status: running, paused, and stopped for a gone pid, a zombie, a reused pid (another start time) or another command line', () => {
    const { table, record, p } = setup();
    assert.equal(p.status(), 'running');
    table.procs.get(4242)!.state = 'T';
    assert.equal(p.status(), 'paused');
    table.procs.get(4242)!.state = 'Z';
    assert.equal(p.status(), 'stopped');
    table.procs.get(4242)!.state = 'S';
    table.procs.get(4242)!.startTime = 1001;
    assert.equal(p.status(), 'stopped', 'the pid now belongs to a process started later');
    table.procs.get(4242)!.startTime = 1000;
    table.procs.get(4242)!.cmdline = 'java\0other.Main\0';
    assert.equal(p.status(), 'stopped', 'same pid and start time, but not our command line');
    table.procs.delete(4242);
    assert.equal(p.status(), 'stopped');
    record.pid = null;
    assert.equal(p.status(), 'stopped');
  });

  test('a reused pid is never signalled: end() sends nothing and forgets the record', async () => {
    const { table, clock, record, p } = setup(undefined, { startTime: 999 });
    const r = await settleOn(clock, p.end(30_000));
    assert.equal(r.err, undefined);
    assert.deepEqual(table.sent, []);
    assert.deepEqual(record, { pid: null, startTime: null });
    assert.equal(table.procs.has(4242), true, 'the other process still runs');
    assert.equal(p.signal('SIGKILL'), false);
    assert.equal(p.killSync(), true, 'not ours: as good as gone for an exit hook');
    assert.deepEqual(table.sent, []);
  });

  test('the record is read at each call: a pid another process wrote into it is judged then', () => {
    const { table, record, p } = setup();
    table.procs.set(5000, { state: 'S', startTime: 2000, cmdline: `java\0${NEEDLE}\0` });
    record.pid = 5000;
    assert.equal(p.status(), 'stopped', 'the start time recorded is the old one');
    record.startTime = 2000;
    assert.equal(p.status(), 'running');
    assert.equal(p.signal('SIGTERM'), true);
    assert.deepEqual(table.sent, [{ pid: 5000, sig: 'SIGTERM' }]);
  });
});

describe('TrackedProcess: ending with escalation (manual clock)', () => {
  test('SIGTERM then, graceMs later and not before, SIGKILL; resolves once gone', async () => {
    const { table, clock, record, p } = setup();
    let done = false;
    const work = p.end(30_000).then(() => (done = true));
    await clock.advance(29_900);
    assert.deepEqual(table.signals, ['SIGTERM'], 'no SIGKILL before the grace time is up');
    assert.equal(done, false);
    await clock.advance(200);
    assert.deepEqual(table.signals, ['SIGTERM', 'SIGKILL']);
    await clock.advance(100);
    await work;
    assert.equal(done, true);
    assert.deepEqual(record, { pid: null, startTime: null });
  });

  test('a process gone after SIGTERM gets no SIGKILL', async () => {
    const { table, clock, p } = setup((_, sig) => (sig === 'SIGTERM' || sig === 'SIGKILL' ? 'gone' : 'stays'));
    const r = await settleOn(clock, p.end(30_000));
    assert.equal(r.err, undefined);
    assert.deepEqual(table.signals, ['SIGTERM']);
    assert.ok(r.at < 1000, `ended at ${r.at} ms, not after the grace time`);
  });

  test('graceMs 0: SIGKILL at once, no SIGTERM', async () => {
    const { table, clock, p } = setup();
    const r = await settleOn(clock, p.end(0));
    assert.equal(r.err, undefined);
    assert.deepEqual(table.signals, ['SIGKILL']);
  });

  test('a paused process is continued before SIGTERM (else the SIGTERM waits with it)', async () => {
    const { table, clock, p } = setup((_, sig) => (sig === 'SIGTERM' ? 'gone' : 'stays'), { state: 'T' });
    await settleOn(clock, p.end(30_000));
    assert.deepEqual(table.signals, ['SIGCONT', 'SIGTERM']);
  });

  test('still there killWaitMs after SIGKILL: throws naming it, and keeps the record', async () => {
    const { table, clock, record, p } = setup(() => 'stays');
    const r = await settleOn(clock, p.end(1000, 5000));
    assert.match(String(r.err), /node 1 \(pid 4242\) did not exit after SIGKILL/);
    assert.ok(r.at >= 6000 && r.at < 6200, `gave up at ${r.at} ms: grace 1000 + 5000 after SIGKILL`);
    assert.deepEqual(table.signals, ['SIGTERM', 'SIGKILL']);
    assert.deepEqual(record, { pid: 4242, startTime: 1000 });
  });

  test('waitPaused: true once SIGSTOP took effect, false when it never does', async () => {
    const { table, clock, p } = setup((proc, sig) => {
      if (sig === 'SIGSTOP') proc.state = 'S'; // a process the stop does not reach
      return 'stays';
    });
    p.signal('SIGSTOP');
    const r = await settleOn(clock, p.waitPaused(true, 2000));
    assert.equal(r.value, false);
    assert.ok(r.at >= 2000);
    table.procs.get(4242)!.state = 'T';
    assert.equal((await settleOn(clock, p.waitPaused(true, 2000))).value, true);
  });

  test('killSync / killAllSync: SIGCONT for a paused one, SIGKILL for each ours; only those gone are forgotten', () => {
    const table = new FakeTable(() => 'stays');
    table.procs.set(1, { state: 'T', startTime: 10, cmdline: 'a\0' });
    table.procs.set(2, { state: 'S', startTime: 99, cmdline: 'a\0' });
    const clock = new ManualClock(0);
    const r1 = { pid: 1 as number | null, startTime: 10 as number | null };
    const r2 = { pid: 2 as number | null, startTime: 20 as number | null };
    const gone = killAllSync([new TrackedProcess(r1, { name: 'one', needle: 'a', clock, table }), new TrackedProcess(r2, { name: 'two', needle: 'a', clock, table })]);
    assert.deepEqual(table.sent, [
      { pid: 1, sig: 'SIGCONT' },
      { pid: 1, sig: 'SIGKILL' },
    ]);
    assert.deepEqual(
      gone.map((p) => p.name),
      ['one', 'two'],
      'a signalled process and one that is not ours both count as gone',
    );
    assert.deepEqual(r1, { pid: 1, startTime: 10 }, 'no state file given: the records stay as they are');
  });
});

describe('TrackedProcess: waiting for a line (manual clock)', () => {
  test('a line printed before the call matches; a match across lines does not; the timeout names the pattern and shows the tail', async () => {
    const { clock, p } = setup();
    p.output = 'starting\nHTTP server listening url=http://x:1\n';
    const m = await p.waitFor(/url=(\S+)/, 1000);
    assert.equal(m[1], 'http://x:1');
    const r = await settleOn(clock, p.waitFor(/starting\nHTTP/, 1000));
    assert.ok(r.err instanceof Error);
    assert.match(r.err.message, /no line matching \/starting\\nHTTP\/ within 1000 ms from node 1/);
    assert.match(r.err.message, /HTTP server listening/);
    assert.ok(r.at >= 1000 && r.at < 1100);
    assert.equal(clock.timersPending, 0, 'nothing left waiting');
  });

  test('a process known only by its record that is gone: rejects at once', async () => {
    const { table, p } = setup();
    table.procs.delete(4242);
    await assert.rejects(p.waitFor(/ready/, 60_000), /node 1 exited before a line matched \/ready\//);
  });
});

describe('commandLine', () => {
  test('wrapped first, then under setpriv --pdeathsig KILL when asked and present; unchanged otherwise', () => {
    const wrap = (cmd: string, args: string[]): [string, string[]] => ['ip', ['netns', 'exec', 'ns1', cmd, ...args]];
    assert.deepEqual(commandLine('node', ['cli.js'], { wrap, dieWithParent: true }, '/usr/bin/setpriv'), ['/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', 'ip', 'netns', 'exec', 'ns1', 'node', 'cli.js']]);
    assert.deepEqual(commandLine('node', ['cli.js'], { wrap, dieWithParent: true }, null), ['ip', ['netns', 'exec', 'ns1', 'node', 'cli.js']], 'no setpriv: the exit hook alone');
    assert.deepEqual(commandLine('java', ['-cp', 'x'], { dieWithParent: false }, '/usr/bin/setpriv'), ['java', ['-cp', 'x']], 'a process meant to outlive this one');
  });
});

describe('atExit: one hook for the whole process', () => {
  test('hooks counted while added; SIGINT and SIGTERM listened to only while some are pending', () => {
    const before = { n: exitHooksPending(), int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
    const removeA = atExit(() => undefined);
    const removeB = atExit(() => undefined);
    assert.equal(exitHooksPending(), before.n + 2);
    const armed = before.n === 0 ? 1 : 0;
    assert.equal(process.listenerCount('SIGINT'), before.int + armed, 'one listener however many hooks');
    assert.equal(process.listenerCount('SIGTERM'), before.term + armed);
    removeA();
    removeA();
    assert.equal(exitHooksPending(), before.n + 1, 'removing twice removes once');
    removeB();
    assert.equal(exitHooksPending(), before.n);
    assert.equal(process.listenerCount('SIGINT'), before.int);
    assert.equal(process.listenerCount('SIGTERM'), before.term);
  });
});
