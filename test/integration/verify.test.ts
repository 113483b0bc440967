// `eoswatch verify produce|check` on a real cluster: a pipeline run judged clean, and a sink
// with duplicates, losses and wrong values judged failed (exit 3).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLI, createTopic, uniqueName, useCluster } from '../harness/index.js';
import { PipelineProcess, pipelineConfig, waitCaughtUp } from '../harness/pipeline.js';

const execFileP = promisify(execFile);

async function eoswatch(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP('node', [...CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('eoswatch verify (1-node cluster)', () => {
  const h = useCluster({ nodes: 1 });

  test('a pipeline run passes: every record once, value + 1, in order', async () => {
    const id = uniqueName('verify');
    const s = { brokers: h.cluster.brokers, source: `${id}-in`, sink: `${id}-out`, groupId: `${id}-g`, prefix: id };
    for (const t of [s.source, s.sink, `${s.sink}.dlq`]) await createTopic(s.brokers, t, 4, 1);
    const produced = await eoswatch(['verify', 'produce', '-b', h.cluster.bootstrapServers, '--topic', s.source, '--records', '5000']);
    assert.equal(produced.code, 0, produced.stderr);
    const manifest = JSON.parse(produced.stdout) as { run: string; partitions: number; records: number };
    assert.equal(manifest.partitions, 4);
    const p = new PipelineProcess(pipelineConfig(s));
    await waitCaughtUp(s.brokers, s.groupId, s.source);
    const r = await eoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', s.sink, '--run', manifest.run, '--records', '5000', '--partitions', '4', '--uncommitted', '--format', 'json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { received: number; duplicates: number; lost: number; orderViolations: number; wrongValue: number; violations: string[]; latencyMs: { p50: number } | null };
    assert.deepEqual([report.received, report.duplicates, report.lost, report.orderViolations, report.wrongValue], [5000, 0, 0, 0, 0]);
    assert.deepEqual(report.violations, []);
    assert.ok(report.latencyMs && report.latencyMs.p50 > 0);
    await p.kill();
  });

  test('a sink with duplicates, a missing run and wrong values fails with exit 3 and says why', async () => {
    const topic = uniqueName('verify-bad');
    await createTopic(h.cluster.brokers, topic, 2, 1);
    // The same run written twice straight into the "sink", values not incremented.
    for (let i = 0; i < 2; i++) {
      const r = await eoswatch(['verify', 'produce', '-b', h.cluster.bootstrapServers, '--topic', topic, '--records', '100', '--run', 'dup']);
      assert.equal(r.code, 0, r.stderr);
    }
    const r = await eoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', topic, '--run', 'dup', '--records', '120', '--partitions', '2']);
    assert.equal(r.code, 3);
    assert.match(r.stdout, /^duplicates\s+100 \(83\.3333%\)$/m);
    assert.match(r.stdout, /^lost\s+20 /m);
    assert.match(r.stdout, /^wrong value\s+100$/m);
    assert.match(r.stdout, /verdict\s+FAIL: duplicate rate .*; loss rate .*; 100 records with a wrong value/);
  });

  test('usage errors exit 2', async () => {
    assert.equal((await eoswatch(['verify', 'check', '--topic', 't', '--records', '10', '--partitions', '2'])).code, 2);
    assert.equal((await eoswatch(['verify', 'produce', '--topic', 't', '--records', '-3'])).code, 2);
    assert.equal((await eoswatch(['verify', 'frob'])).code, 2);
  });
});
