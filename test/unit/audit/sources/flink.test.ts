// The live audit of a Flink job: its /checkpoints/config (recorded from the seed's job on a real
// Flink 1.20 cluster, and variants of it) turned into checkpoint facts, judged by the same checks
// that read Flink config files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkpointChecks } from '../../../../src/audit/checks/checkpoint.js';
import type { AuditFacts } from '../../../../src/audit/types.js';
import { liveCheckpointFacts } from '../../../../src/audit/sources/flink.js';
import type { CheckpointConfigInfo } from '../../../../src/flink/rest-types.js';

const recorded = JSON.parse(readFileSync(new URL('../../../fixtures/flink/checkpoints-config.json', import.meta.url), 'utf8')) as CheckpointConfigInfo;
const job = { name: 'orders-eos', jid: '23b8b98281260c04df02e6e32e05611d' };

function verdicts(cfg: CheckpointConfigInfo | null): Record<string, boolean> {
  const facts: AuditFacts = { clients: [], checkpoints: [liveCheckpointFacts(job, cfg)] };
  const out: Record<string, boolean> = {};
  for (const c of checkpointChecks) for (const r of c.evaluate(facts)) out[c.id] = r.passed;
  return out;
}

test('the recorded config of the seed job becomes checkpoint facts', () => {
  assert.deepEqual(liveCheckpointFacts(job, recorded), {
    origin: 'flink',
    target: 'flink-job:orders-eos (23b8b98281260c04df02e6e32e05611d)',
    intervalMs: 1000,
    mode: 'EXACTLY_ONCE',
    timeoutMs: 60000,
    minPauseMs: 0,
    maxConcurrent: 1,
    tolerableFailed: 3,
    unaligned: false,
    retainOnCancellation: true,
  });
});

test('a safe job passes the live checks; the seed job as recorded tolerates failures and has no pause', () => {
  assert.deepEqual(verdicts(recorded), {
    'checkpoint.mode': true,
    'checkpoint.tolerable-failures': false,
    'checkpoint.timeout': true,
    'checkpoint.min-pause': false,
    'checkpoint.retain-on-cancellation': true,
    'checkpoint.max-concurrent': true,
    'checkpoint.unaligned-exactly-once': true,
    'checkpoint.state-backend': false,
  });
  const safe = { ...recorded, tolerable_failed_checkpoints: 0, min_pause: 500 };
  const v = verdicts(safe);
  for (const id of ['checkpoint.mode', 'checkpoint.tolerable-failures', 'checkpoint.timeout', 'checkpoint.min-pause', 'checkpoint.retain-on-cancellation', 'checkpoint.max-concurrent', 'checkpoint.unaligned-exactly-once']) {
    assert.equal(v[id], true, id);
  }
});

test('an unsafe job fails each check it breaks', () => {
  const unsafe: CheckpointConfigInfo = {
    ...recorded,
    mode: 'at_least_once',
    timeout: 2000,
    max_concurrent: 3,
    unaligned_checkpoints: true,
    externalization: { enabled: true, delete_on_cancellation: true },
  };
  const v = verdicts(unsafe);
  assert.equal(v['checkpoint.mode'], false);
  assert.equal(v['checkpoint.timeout'], false, '2 s < 3 × 1 s');
  assert.equal(v['checkpoint.max-concurrent'], false);
  assert.equal(v['checkpoint.unaligned-exactly-once'], false);
  assert.equal(v['checkpoint.retain-on-cancellation'], false);
});

test('checkpointing disabled (REST 404, or an interval of Long.MAX_VALUE) fails checkpoint.mode only', () => {
  assert.deepEqual(verdicts(null), { 'checkpoint.mode': false });
  assert.deepEqual(verdicts({ ...recorded, interval: Number('9223372036854775807') }), { 'checkpoint.mode': false });
});
