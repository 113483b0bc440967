// The first of README's two commands, `eoswatch demo`: a local cluster it starts itself, the
// pipeline, canary, LSO monitor and audit running against it, and Ctrl-C stopping everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, spawnTracked, waitForLine } from '../harness/index.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { tempDirs } from '../harness/tmp.js';

const temp = tempDirs('eoswatch-demo-');

test('eoswatch demo (1 node): metrics of the pipeline and the canary within seconds, Ctrl-C stops the daemon and the cluster', async () => {
  const dir = join(await temp.make(), 'demo');
  const child = spawnTracked('node', [...CLI, 'demo', '--port', '0', '--nodes', '1', '--rate', '100', '--dir', dir]);
  const [, url] = await waitForLine(child, /metrics:\s+(http:\/\/\S+)\/metrics/, 120_000);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const value = async (name: string, labels: Record<string, string>) => sampleValue(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()), name, labels) ?? 0;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if ((await value('eos_canary_records_total', { result: 'received' })) > 0 && (await value('eos_checkpoints_total', { outcome: 'completed' })) > 0) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.ok((await value('eos_checkpoints_total', { outcome: 'completed' })) > 0, 'checkpoints complete');
  assert.ok((await value('eos_canary_records_total', { result: 'received' })) > 0, 'canary records come back through the pipeline');
  assert.ok((await value('eos_kafka_transaction_commit_latency_seconds_count', { pipeline: 'demo' })) > 0);
  assert.equal(await value('eos_kafka_up', {}), 1);
  assert.equal(await value('eos_canary_records_total', { result: 'lost' }), 0);
  child.kill('SIGINT');
  assert.equal(await exited, 0);
  // No broker of the demo's cluster is left running.
  let left = '';
  try {
    left = execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' });
  } catch {
    /* pgrep exits 1 when nothing matches */
  }
  assert.equal(left.trim(), '', 'processes left over from the demo');
});
