// Bounded shutdown against a real 3-node cluster: a daemon running the pipeline and the canary,
// one broker paused (SIGSTOP: its sockets stay open, nothing answers), then SIGTERM. The daemon
// must be gone within shutdown.gracePeriod and a small margin, nothing left serving, its last
// line saying why; the broker is resumed afterwards.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueName, useCluster } from '../harness/index.js';
import { PipelineProcess, pipelineConfig, pipelineTopics, seedStream } from '../harness/pipeline.js';
import { until } from '../harness/wait.js';
import { PollTimeoutError } from '../../src/runtime/poll-until.js';

const GRACE_MS = 5000;
/** Start-up of node and the exit itself on a loaded 2-core machine; far below the 85 s a paused broker used to hold the process. */
const MARGIN_MS = 4000;

describe('shutdown with a paused broker (3-node cluster)', () => {
  const h = useCluster({ nodes: 3 });

  test('SIGTERM with broker 1 paused: the daemon exits within the grace period, nothing keeps serving, the last line says why', async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'paused-stop', 3, 3);
    // Stopped by its own after hook.
    seedStream(h.cluster.brokers, s.source, 3, 1_000_000, 50, 50).done.catch(() => undefined);
    const canary = { enabled: true, id: uniqueName('c'), rate: 20, lostAfter: '1m' };
    const p = new PipelineProcess(pipelineConfig(s, {}, { canary, shutdown: { gracePeriod: `${GRACE_MS}ms` } }));
    const url = await p.url;
    await p.waitMetric('eos_checkpoints_total', { outcome: 'completed' }, 2, 120_000);
    await p.waitMetric('eos_canary_records_total', { result: 'received' }, 1, 120_000);

    await h.cluster.pause(1);
    after(async () => {
      if (h.cluster.status(1) === 'paused') await h.cluster.resume(1);
    });
    // Let the pipeline's and the canary's requests reach the paused broker: poll until a
    // checkpoint has been pending for a while (no completion for 2 s). At most 10 s: the SIGTERM
    // goes then whatever is pending (the exit is bounded either way, which is what is tested).
    let completed = await p.metric('eos_checkpoints_total', { outcome: 'completed' });
    let stuckSince = Date.now();
    await until(
      'no checkpoint completed for 2 s',
      async () => {
        const now = await p.metric('eos_checkpoints_total', { outcome: 'completed' }).catch(() => completed);
        if (now !== completed) [completed, stuckSince] = [now, Date.now()];
        return Date.now() - stuckSince > 2000;
      },
      10_000,
    ).catch((err: unknown) => {
      if (!(err instanceof PollTimeoutError)) throw err;
    });

    const t0 = Date.now();
    p.signal('SIGTERM');
    const code = await p.exited;
    const elapsed = Date.now() - t0;
    const lines = p.output.trim().split('\n').filter((l) => l.startsWith('{'));
    const last = JSON.parse(lines.at(-1)!) as { msg: string; clean?: boolean; reason?: string; exitCode?: number };
    process.stdout.write(`# SIGTERM to exit with broker 1 paused: ${elapsed} ms (grace period ${GRACE_MS} ms), exit code ${code}, last line: ${last.msg}\n`);
    assert.ok(elapsed < GRACE_MS + MARGIN_MS, `exited after ${elapsed} ms, more than grace period ${GRACE_MS} ms + ${MARGIN_MS} ms\n${p.tail(40)}`);
    await assert.rejects(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }), 'nothing serves HTTP after the exit');
    // The last line says why: a clean stop, or the grace period that ran out (exit 1).
    if (last.msg === 'stopped') {
      assert.equal(last.reason, 'SIGTERM');
      assert.equal(code, 0);
    } else {
      assert.equal(last.msg, `exiting: shutdown after SIGTERM did not finish within the grace period of ${GRACE_MS / 1000} s (shutdown.gracePeriod); services still stopping are cut off`, p.tail(40));
      assert.equal(code, 1);
      assert.ok(lines.some((l) => l.includes('shutdown grace period exceeded')));
    }
    await h.cluster.resume(1);
    assert.equal(h.cluster.status(1), 'running');
  });
});
