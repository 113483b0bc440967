// The first of README's two commands, `npm run demo`: a local cluster it starts itself, the
// pipeline, canary, LSO monitor and audit running against it, and Ctrl-C stopping everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_CLI, spawnTracked, until, waitForLine } from '../harness/index.js';
import { send } from '../harness/http.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { tempDirs } from '../harness/tmp.js';

const temp = tempDirs('eoswatch-demo-');

// The demo's endpoints are read on a fresh connection each time (send): a keep-alive connection
// left idle while the test blocks in execFileSync (the harness CLI's kill/start/pause take seconds)
// is closed by the server after its 5 s keep-alive timeout, and fetch would reuse it the moment
// the call returns ("other side closed").

test('npm run demo (1 node): metrics of the pipeline and the canary within seconds, Ctrl-C stops the daemon and the cluster', async () => {
  const dir = join(await temp.make(), 'demo');
  const child = spawnTracked('node', [...REPO_CLI, 'demo', '--port', '0', '--nodes', '1', '--rate', '100', '--dir', dir]);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d));
  const [, url] = await waitForLine(child, /metrics:\s+(http:\/\/\S+)\/metrics/, 120_000);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const value = async (name: string, labels: Record<string, string>) => sampleValue(parsePrometheusText((await send(`${url}/metrics`)).body), name, labels) ?? 0;
  await until(
    'canary records received and checkpoints completed',
    async () => (await value('eos_canary_records_total', { result: 'received' })) > 0 && (await value('eos_checkpoints_total', { outcome: 'completed' })) > 0,
    90_000,
    { intervalMs: 1000, context: () => output.slice(-3000) },
  );
  assert.ok((await value('eos_checkpoints_total', { outcome: 'completed' })) > 0, 'checkpoints complete');
  assert.ok((await value('eos_canary_records_total', { result: 'received' })) > 0, 'canary records come back through the pipeline');
  assert.ok((await value('eos_kafka_transaction_commit_latency_seconds_count', { pipeline: 'demo' })) > 0);
  assert.equal(await value('eos_kafka_up', {}), 1);
  assert.equal(await value('eos_canary_records_total', { result: 'lost' }), 0);
  child.kill('SIGINT');
  assert.equal(await exited, 0);
  // The demo's config keeps serving through a FAILED pipeline (whatever production's onFailure is).
  assert.match(output, /"onFailure":"keep-serving","restartStrategy":\{"type":"exponential-delay".*demo pipeline: a FAILED pipeline is restarted in-process/);
  // Its last line says why it exited.
  const lines = output.trim().split('\n');
  assert.match(lines.at(-1)!, /"exitCode":0,.*"msg":"demo exiting \(SIGINT, exit code 0\): Kafka cluster stopped, data and logs kept"/, lines.slice(-5).join('\n'));
  // No broker of the demo's cluster is left running.
  let left = '';
  try {
    left = execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' });
  } catch {
    /* pgrep exits 1 when nothing matches */
  }
  assert.equal(left.trim(), '', 'processes left over from the demo');
});

test('npm run demo (3 nodes), broken as its instructions say: survives kill 2 / start 2, Ctrl-C with broker 1 paused exits within the grace period, last line says why, nothing left', async () => {
  const dir = join(await temp.make(), 'demo3');
  const child = spawnTracked('node', [...REPO_CLI, 'demo', '--port', '0', '--nodes', '3', '--rate', '100', '--dir', dir]);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d));
  const [, url] = await waitForLine(child, /metrics:\s+(http:\/\/\S+)\/metrics/, 180_000);
  let code: number | null | undefined;
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r((code = c))));
  const value = async (name: string, labels: Record<string, string>) => sampleValue(parsePrometheusText((await send(`${url}/metrics`)).body), name, labels) ?? 0;
  const completed = () => value('eos_checkpoints_total', { outcome: 'completed' });
  // A wait ends when the demo exits, its output's tail following a failure.
  const demo = { child, tail: () => output.slice(-3000) };
  const kafka = (...args: string[]) => execFileSync('node', ['--import', 'tsx', 'harness/localcluster/cli.ts', ...args, '--dir', dir], { encoding: 'utf8', timeout: 180_000 });
  await until('checkpoints complete', async () => (await completed()) > 0, 120_000, { intervalMs: 500, process: demo });

  assert.match(kafka('kill', '2'), /^node 2: stopped$/m);
  const before = await completed();
  await until('checkpoints complete on the other two brokers', async () => (await completed()) > before + 3, 120_000, { intervalMs: 500, process: demo });
  assert.match(kafka('start', '2'), /^node 2: running$/m);
  const after2 = await completed();
  await until('checkpoints complete with broker 2 back', async () => (await completed()) > after2 + 3, 120_000, { intervalMs: 500, process: demo });
  assert.equal(code, undefined, 'the demo is still running');

  assert.match(kafka('pause', '1'), /^node 1: paused$/m);
  const t0 = Date.now();
  child.kill('SIGINT');
  await exited;
  const elapsed = Date.now() - t0;
  process.stdout.write(`# demo Ctrl-C with broker 1 paused: exit ${code} after ${elapsed} ms (grace period 20 s)\n`);
  // shutdown.gracePeriod (20 s by default) plus the bounded clean-up of the seed producer and the cluster.
  assert.ok(elapsed < 40_000, `the demo took ${elapsed} ms to exit`);
  const last = output.trim().split('\n').at(-1)!;
  assert.match(last, /demo exiting \(SIGINT, exit code [01]\)|exiting: shutdown after SIGINT did not finish within the grace period/, output.slice(-2000));
  // No process of the cluster is left, the restarted broker 2 included, and status says so.
  let left = '';
  try {
    left = execFileSync('pgrep', ['-f', `kafka.Kafka ${dir}`], { encoding: 'utf8' });
  } catch {
    /* pgrep exits 1 when nothing matches */
  }
  assert.equal(left.trim(), '', 'broker processes left over from the demo');
  assert.match(kafka('status'), /^node 2: stopped pid - /m);
});

test('npm run demo -- --streams (1 node), broken as its instructions say: the killed instance\'s rebalance seen and timed, the app up again after start --instance 1, its commits counted under the application; Ctrl-C stops the instances and the cluster, nothing left', async () => {
  const dir = join(await temp.make(), 'demo-streams');
  const child = spawnTracked('node', [...REPO_CLI, 'demo', '--streams', '--port', '0', '--nodes', '1', '--rate', '100', '--dir', dir]);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d));
  // The first run builds the app with Maven (cached for the next ones).
  const [, url] = await waitForLine(child, /metrics:\s+(http:\/\/\S+)\/metrics/, 300_000);
  let code: number | null | undefined;
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r((code = c))));
  const app = 'demo-orders-increment';
  const value = async (name: string, labels: Record<string, string>) => sampleValue(parsePrometheusText((await send(`${url}/metrics`)).body), name, labels) ?? 0;
  // A wait ends when the demo exits, its output's tail following a failure.
  const demo = { child, tail: () => output.slice(-3000) };
  const up = () => value('eos_pipeline_up', { pipeline: app, engine: 'streams' });
  await until('the app up, its transactions committed and counted under the application', async () => (await up()) === 1 && (await value('eos_coordinator_transactions_total', { application: app, outcome: 'committed' })) > 0, 120_000, { intervalMs: 500, process: demo });

  // The demo's own "break it" line, as printed.
  const breakIt = /break it:\s+npm run streams -- (kill --instance 1 --dir (\S+))/.exec(output);
  assert.ok(breakIt, `a break-it line in the output:\n${output.slice(-2000)}`);
  const streams = (...args: string[]) => execFileSync('node', ['--import', 'tsx', 'harness/localcluster/streams-cli.ts', ...args], { encoding: 'utf8', timeout: 180_000 });
  const timedBefore = await value('eos_streams_rebalance_duration_seconds_count', { application: app });
  streams(...breakIt[1]!.split(' '));
  streams('start', '--instance', '1', '--dir', breakIt[2]!);
  await until(
    'a timed rebalance, the group Stable with 2 members and the app up again',
    async () => (await value('eos_streams_rebalance_duration_seconds_count', { application: app })) > timedBefore && (await up()) === 1 && (await value('eos_consumer_group_members', { group: app })) === 2,
    120_000,
    { intervalMs: 500, process: demo },
  );
  assert.equal(code, undefined, 'the demo is still running');
  // The status page's Streams card (its data: /status.json, sampled every 5 s).
  const card = await until(
    'the Streams card up with 2 members and the rebalances counted',
    async () => {
      const s = JSON.parse((await send(`${url}/status.json`)).body) as { streams: { applicationId: string; up: boolean; members: number; rebalances: number; lagRecords: number | null }[] | null };
      const a = s.streams?.find((x) => x.applicationId === app);
      return a && a.up && a.members === 2 && a.rebalances >= 1 ? a : undefined;
    },
    30_000,
    { intervalMs: 1000 },
  );
  assert.notEqual(card.lagRecords, null, 'the group\'s lag on the card');

  child.kill('SIGINT');
  assert.equal(await exited, 0);
  const lines = output.trim().split('\n');
  assert.match(lines.at(-1)!, /demo --streams exiting \(SIGINT, exit code 0\): Kafka cluster and Streams instances stopped/, lines.slice(-5).join('\n'));
  let left = '';
  try {
    left = execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' });
  } catch {
    /* pgrep exits 1 when nothing matches */
  }
  assert.equal(left.trim(), '', 'processes left over from the demo (brokers, Streams instances)');
});
