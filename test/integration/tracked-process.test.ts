// The tracked-process type (src/runtime/process.ts) with real short-lived processes: spawn with
// output kept or in a log file, wait for a line, SIGTERM and the SIGKILL escalation, a reused pid
// never signalled, and what happens to a child when its parent exits (the exit hook), is
// interrupted (SIGINT), or is SIGKILLed (the parent-death signal). Each test ends what it started.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setprivPath, TrackedProcess } from '../../src/runtime/process.js';
import { startTimeOf } from '../../src/runtime/proc.js';
import { until } from '../harness/wait.js';
import { tempDirs } from '../harness/tmp.js';

const temp = tempDirs('eoswatch-tracked-process-');

/** Every process a test starts, ended (SIGKILL) after the file whatever happened. */
const started: TrackedProcess[] = [];
after(async () => {
  for (const p of started) await p.end(0).catch(() => undefined);
});

function spawnNode(script: string, opts: Partial<Parameters<typeof TrackedProcess.spawn>[2]> = {}): TrackedProcess {
  const p = TrackedProcess.spawn(process.execPath, ['-e', script], { name: 'node -e', pipe: true, ...opts });
  started.push(p);
  return p;
}

/** A parent process (node with tsx, to import the type) that starts a child the way `mode` says and prints its pid. */
const PARENT = `
import { TrackedProcess } from './src/runtime/process.ts';
const mode = process.env.MODE;
// A shutdown of its own, listening before the child (and so the exit hook's listener) exists.
if (mode === 'graceful') process.once('SIGTERM', () => { console.log('graceful'); setTimeout(() => process.exit(0), 300); });
const p = TrackedProcess.spawn('sleep', ['300'], { name: 'sleep', atExit: mode === 'outlive' ? 'outlive' : 'kill', dieWithParent: mode === 'pdeathsig', detached: mode === 'outlive' });
console.log('child ' + p.pid + ' ' + p.record.startTime);
setInterval(() => undefined, 1 << 30);
`;

async function parentWithChild(mode: 'kill' | 'outlive' | 'pdeathsig' | 'graceful'): Promise<{ parent: TrackedProcess; child: TrackedProcess }> {
  const parent = TrackedProcess.spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PARENT], { name: `parent (${mode})`, pipe: true, env: { ...process.env, MODE: mode } });
  started.push(parent);
  const m = await parent.waitFor(/^child (\d+) (\d+)$/, 60_000);
  const child = new TrackedProcess({ pid: Number(m[1]), startTime: Number(m[2]) }, { name: `sleep of the parent (${mode})` });
  started.push(child);
  assert.equal(child.status(), 'running');
  return { parent, child };
}

describe('tracked process', () => {
  test('spawn: pid and start time recorded, output kept, a line waited for (also one printed before the wait), exit code', async () => {
    const p = spawnNode(`console.log('one'); setTimeout(() => { console.error('ready 42'); setTimeout(() => process.exit(3), 300); }, 200);`);
    assert.ok(p.pid !== null && p.pid > 0);
    assert.equal(p.record.startTime, startTimeOf(p.pid));
    const m = await p.waitFor(/^ready (\d+)$/, 30_000);
    assert.equal(m[1], '42', 'stderr is output too');
    assert.deepEqual((await p.waitFor(/^one$/, 1000))[0], 'one', 'a line printed before the call counts');
    assert.equal(await p.exited, 3);
    assert.equal(p.status(), 'stopped');
    await assert.rejects(p.waitFor(/never/, 30_000), /node -e exited before a line matched \/never\/:\n--- node -e \(pid \d+\):\none\nready 42/);
  });

  test('output to a log file by the child itself (logFrom: where this start begins), and a failed spawn', async () => {
    const dir = await temp.make();
    const logFile = join(dir, 'x.log');
    const a = TrackedProcess.spawn(process.execPath, ['-e', 'console.log("first")'], { name: 'a', logFile });
    started.push(a);
    assert.equal(await a.exited, 0);
    const b = TrackedProcess.spawn(process.execPath, ['-e', 'console.error("second")'], { name: 'b', logFile });
    started.push(b);
    assert.equal(await b.exited, 0);
    assert.equal(b.logFrom, 'first\n'.length);
    assert.equal(readFileSync(logFile, 'utf8'), 'first\nsecond\n');

    const none = TrackedProcess.spawn(join(dir, 'no-such-command'), [], { name: 'missing', pipe: true });
    assert.equal(await none.exited, null);
    assert.match(String(none.error?.message), /ENOENT/);
    assert.equal(none.status(), 'stopped');
  });

  test('stdin as a pipe; stdout discarded (stderr kept); raw pipes the caller reads, nothing kept', async () => {
    const echo = spawnNode(`process.stdin.on('data', (d) => console.log('got ' + String(d).trim()));`, { stdin: 'pipe' });
    echo.child!.stdin!.write('hello\n');
    await echo.waitFor(/^got hello$/, 30_000);
    echo.child!.stdin!.end();
    assert.equal(await echo.exited, 0);

    const quiet = spawnNode(`console.log('to stdout'); console.error('to stderr');`, { discardStdout: true });
    assert.equal(await quiet.exited, 0);
    await until('the pipes closed', () => quiet.child!.stderr!.closed || quiet.child!.stderr!.destroyed, 5000);
    assert.equal(quiet.output, 'to stderr\n');

    const raw = spawnNode(`console.log('raw line');`, { pipe: 'raw' });
    const chunks: Buffer[] = [];
    raw.child!.stdout!.on('data', (d: Buffer) => chunks.push(d));
    assert.equal(await raw.exited, 0);
    await until('its stdout read to the end', () => Buffer.concat(chunks).toString() === 'raw line\n', 5000);
    assert.ok(Buffer.isBuffer(chunks[0]), 'Buffers, as the caller asked for raw pipes');
    assert.equal(raw.output, '', 'nothing kept');
  });

  test('group: a signal reaches the whole process group (the grandchild of a command that forks)', async () => {
    const sh = TrackedProcess.spawn('sh', ['-c', 'sleep 300 & echo "grandchild $!"; wait'], { name: 'sh', pipe: true, group: true });
    started.push(sh);
    const pid = Number((await sh.waitFor(/^grandchild (\d+)$/, 30_000))[1]);
    const grandchild = new TrackedProcess({ pid, startTime: startTimeOf(pid) }, { name: 'sleep' });
    started.push(grandchild);
    assert.equal(grandchild.status(), 'running');
    await sh.end(0);
    await until('the grandchild is gone with its group', () => grandchild.status() === 'stopped', 10_000);
  });

  test('end: SIGTERM obeyed; SIGTERM ignored is followed by SIGKILL after the grace time', async () => {
    const polite = spawnNode(`process.on('SIGTERM', () => { console.log('bye'); process.exit(0); }); console.log('up'); setInterval(() => undefined, 1000);`);
    await polite.waitFor(/^up$/, 30_000);
    await polite.end(10_000);
    assert.equal(await polite.exited, 0);
    assert.match(polite.output, /^bye$/m);
    assert.equal(polite.record.pid, null, 'the record forgets the pid');

    const stubborn = spawnNode(`process.on('SIGTERM', () => console.log('ignored')); console.log('up'); setInterval(() => undefined, 1000);`);
    await stubborn.waitFor(/^up$/, 30_000);
    const t0 = Date.now();
    await stubborn.end(1500);
    const took = Date.now() - t0;
    assert.equal(await stubborn.exited, -1, 'killed by a signal');
    assert.equal(stubborn.child!.signalCode, 'SIGKILL');
    assert.match(stubborn.output, /^ignored$/m);
    assert.ok(took >= 1400, `SIGKILL came after the grace time, not before (${took} ms)`);
  });

  test('pause and resume: SIGSTOP is seen as paused, SIGCONT as running', async () => {
    const p = spawnNode(`console.log('up'); setInterval(() => undefined, 1000);`);
    await p.waitFor(/^up$/, 30_000);
    assert.equal(p.signal('SIGSTOP'), true);
    assert.equal(await p.waitPaused(true), true);
    assert.equal(p.status(), 'paused');
    assert.equal(p.signal('SIGCONT'), true);
    assert.equal(await p.waitPaused(false), true);
    assert.equal(p.status(), 'running');
    await p.end(0);
  });

  test('a reused pid: a record naming a live process with another start time, or another command line, is not ours and is never signalled', async () => {
    const other = spawnNode(`console.log('up'); setInterval(() => undefined, 1000);`);
    await other.waitFor(/^up$/, 30_000);
    const startTime = other.record.startTime!;
    const stale = new TrackedProcess({ pid: other.pid, startTime: startTime - 1 }, { name: 'stale record' });
    assert.equal(stale.status(), 'stopped');
    assert.equal(stale.signal('SIGKILL'), false);
    await stale.end(0);
    assert.equal(stale.record.pid, null, 'forgotten');
    const elsewhere = new TrackedProcess({ pid: other.pid, startTime }, { name: 'other program', needle: '/no/such/props/file' });
    assert.equal(elsewhere.killSync(), true, 'as good as gone for an exit hook');
    assert.equal(other.status(), 'running', 'the live process was never signalled');
    assert.equal(startTimeOf(other.pid!), startTime);
    await other.end(0);
  });

  test('exit hook: a child goes when its parent exits or is interrupted (SIGINT); one meant to outlive it stays', async () => {
    const exiting = await parentWithChild('kill');
    // SIGTERM: no handler of the parent's own, the kernel's hook exits with 128+15 and kills the child.
    assert.equal(exiting.parent.signal('SIGTERM'), true);
    assert.equal(await exiting.parent.exited, 143);
    await until('the child of the terminated parent is gone', () => exiting.child.status() === 'stopped', 10_000);

    const interrupted = await parentWithChild('kill');
    assert.equal(interrupted.parent.signal('SIGINT'), true);
    assert.equal(await interrupted.parent.exited, 130);
    await until('the child of the interrupted parent is gone', () => interrupted.child.status() === 'stopped', 10_000);

    // A parent with a SIGTERM handler of its own shuts down its way; the hook runs when it exits.
    const graceful = await parentWithChild('graceful');
    assert.equal(graceful.parent.signal('SIGTERM'), true);
    assert.equal(await graceful.parent.exited, 0, 'its own handler chose the exit code, the hook did not cut it short');
    assert.match(graceful.parent.output, /^graceful$/m);
    await until('the child of the gracefully stopped parent is gone', () => graceful.child.status() === 'stopped', 10_000);

    const outliving = await parentWithChild('outlive');
    assert.equal(outliving.parent.signal('SIGTERM'), true);
    assert.equal(await outliving.parent.exited, -1, 'nothing to kill at exit: the default action');
    assert.equal(outliving.child.status(), 'running', 'a child meant to outlive its parent');
    await outliving.child.end(0);
    assert.equal(outliving.child.status(), 'stopped');
  });

  test('parent-death signal: a child goes even when its parent is SIGKILLed (no exit hook runs)', { skip: setprivPath() === null ? 'setpriv (util-linux) not installed' : false }, async () => {
    const { parent, child } = await parentWithChild('pdeathsig');
    await parent.end(0);
    await until('the child of the SIGKILLed parent is gone', () => child.status() === 'stopped', 10_000);

    // Without it, a SIGKILLed parent leaves its child: what the parent-death signal is for.
    const plain = await parentWithChild('kill');
    await plain.parent.end(0);
    assert.equal(plain.child.status(), 'running');
    await plain.child.end(0);
  });
});
