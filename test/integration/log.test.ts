// The root logger in a process of its own: by default its lines go to stdout synchronously, so a
// line logged just before the process is killed is not lost (the unit test in
// test/unit/log.test.ts holds the destination to fd 1, sync; this one kills a real process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test('by default lines go to stdout synchronously: a line logged just before a SIGKILL is not lost', () => {
  const script = `import { createLogger } from './src/log.ts'; createLogger('info').info({ password: 'p4ss' }, 'bye'); process.kill(process.pid, 'SIGKILL');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  const line = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
  assert.equal(line.msg, 'bye');
  assert.equal(line.password, '[REDACTED]');
});
