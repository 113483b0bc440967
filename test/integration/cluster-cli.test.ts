// The cluster CLI for people (`npm run kafka -- …`), as separate processes: up leaves the node
// running after the CLI exits, the others find it through the state file.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { LocalCluster, spawnTracked, waitForLine } from '../harness/index.js';
import { processesReferencing, startTimeOf } from '../../src/runtime/proc.js';
import { javaProcessesUnder } from './cluster-scenarios.js';
import { tempDirs } from '../harness/tmp.js';
import { until } from '../harness/wait.js';

const execFileP = promisify(execFile);
const temp = tempDirs('eoswatch-cli-cluster-');

async function kafkaCli(args: string[]): Promise<string> {
  const { stdout } = await execFileP('node', ['--import', 'tsx', 'harness/localcluster/cli.ts', ...args], { timeout: 180_000 });
  return stdout;
}

/** Live processes (from /proc) whose command line names a file under dir: the cluster's java processes and anything else left there. */
function leftUnder(dir: string): number[] {
  return processesReferencing([`${dir}/`]).map((p) => p.pid);
}

async function flinkCli(args: string[]): Promise<string> {
  const { stdout } = await execFileP('node', ['--import', 'tsx', 'harness/localcluster/flink-cli.ts', ...args], { timeout: 240_000 });
  return stdout;
}

/** As OWNER, for a Flink session cluster (demo --flink). */
const FLINK_OWNER = `
import { LocalFlinkCluster } from './harness/localcluster/flink-cluster.ts';
const c = await LocalFlinkCluster.start({ dir: process.env.DIR, taskManagers: 1, slots: 1, killOnExit: true });
process.on('SIGINT', () => process.exit(130));
console.log('flink up ' + c.restUrl);
setInterval(() => undefined, 1 << 30);
`;

/** A process like the demo: starts a cluster that dies with it, exits on SIGINT through process.exit (so only the exit hook cleans up). */
const OWNER = `
import { LocalCluster } from './harness/localcluster/cluster.ts';
const c = await LocalCluster.start({ nodes: Number(process.env.NODES), dir: process.env.DIR, killOnExit: true });
process.on('SIGINT', () => process.exit(130));
console.log('cluster up ' + c.bootstrapServers);
setInterval(() => undefined, 1 << 30);
`;

describe('cluster CLI', () => {
  test('up, status, kill, start, pause, resume, down', async () => {
    const dir = join(await temp.make(), 'c');
    after(async () => {
      // Whatever happened above, stop the node by its recorded pid.
      await (await LocalCluster.load(dir).catch(() => undefined))?.down();
    });
    const up = await kafkaCli(['up', '--nodes', '1', '--dir', dir]);
    assert.match(up, /^bootstrap servers: 127\.0\.0\.1:\d+$/m);
    assert.equal(javaProcessesUnder(dir).length, 1, 'the node outlives the CLI process');

    assert.match(await kafkaCli(['status', '--dir', dir]), /^node 1: running/m);
    // topics create on one node: replication factor 1 is refused unless asked for.
    await assert.rejects(kafkaCli(['topics', 'create', 'cli.orders', '--dir', dir]), /refusing to create topics that are not exactly-once safe/);
    assert.match(await kafkaCli(['topics', 'create', 'cli.orders', '--partitions', '2', '--allow-unsafe', '--dir', dir]), /^ {2}cli\.orders\s+created\s+named$/m);
    assert.match(await kafkaCli(['topics', 'list', '--dir', dir]), /^cli\.orders {2}2 partitions {2}replication factor 1$/m);
    assert.match(await kafkaCli(['kill', '1', '--dir', dir]), /^node 1: stopped$/m);
    assert.deepEqual(javaProcessesUnder(dir), []);
    assert.match(await kafkaCli(['status', '--dir', dir]), /^node 1: stopped/m);
    assert.match(await kafkaCli(['start', '1', '--dir', dir]), /^node 1: running$/m);
    assert.match(await kafkaCli(['pause', '1', '--dir', dir]), /^node 1: paused$/m);
    assert.match(await kafkaCli(['resume', '1', '--dir', dir]), /^node 1: running$/m);
    assert.match(await kafkaCli(['logs', '1', '--dir', dir]), /Kafka Server started|started \(kafka\.server/);
    assert.match(await kafkaCli(['down', '--dir', dir]), /stopped and removed/);
    assert.deepEqual(javaProcessesUnder(dir), []);
  });

  test('kill 2 / start 2 from the CLI: the owner\'s exit hook stops the restarted node too, status tells the truth, down checks identity and names a survivor', async () => {
    const dir = join(await temp.make(), 'c');
    after(async () => {
      await (await LocalCluster.load(dir).catch(() => undefined))?.down().catch(() => undefined);
    });
    const owner = spawnTracked('node', ['--import', 'tsx', '--input-type=module', '-e', OWNER], { env: { ...process.env, NODES: '3', DIR: dir } });
    await waitForLine(owner, /^cluster up /, 180_000);
    const exited = new Promise<number | null>((r) => owner.once('exit', (code) => r(code)));
    const state = () => JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as { nodes: { id: number; pid: number | null; startTime?: number | null }[] };
    const first = state().nodes[1]!;
    assert.ok(first.pid !== null && first.startTime === startTimeOf(first.pid), 'the state file records pid and start time');

    assert.match(await kafkaCli(['kill', '2', '--dir', dir]), /^node 2: stopped$/m);
    assert.equal(state().nodes[1]!.pid, null, 'kill is recorded');
    assert.match(await kafkaCli(['start', '2', '--dir', dir]), /^node 2: running$/m);
    const again = state().nodes[1]!;
    assert.ok(again.pid !== null && again.pid !== first.pid, 'the restart is recorded with its new pid');
    assert.equal(again.startTime, startTimeOf(again.pid));
    assert.match(await kafkaCli(['status', '--dir', dir]), new RegExp(`^node 2: running pid ${again.pid} `, 'm'));
    assert.equal(leftUnder(dir).length, 3);

    // Ctrl-C of the owner: its exit hook reads the state file, so the node another process started goes too.
    owner.kill('SIGINT');
    assert.equal(await exited, 130);
    await until('no process of the cluster left after the owner exited', () => leftUnder(dir).length === 0, 15_000, { intervalMs: 100 });
    const status = await kafkaCli(['status', '--dir', dir]);
    for (const id of [1, 2, 3]) assert.match(status, new RegExp(`^node ${id}: stopped pid - `, 'm'));

    // A recycled pid: the state file names a live process that has another start time. It is
    // not ours: status says stopped, down does not signal it, and down names it instead of
    // saying "removed" (its command line names the cluster's files).
    const decoy = spawn('node', ['-e', 'setInterval(() => undefined, 1000)', join(dir, 'node-2', 'server.properties')], { stdio: 'ignore' });
    after(() => {
      if (decoy.exitCode === null && decoy.signalCode === null) decoy.kill('SIGKILL');
    });
    await until('the decoy runs', () => startTimeOf(decoy.pid!) !== null && leftUnder(dir).includes(decoy.pid!), 15_000, { intervalMs: 100 });
    const s = state();
    s.nodes[1]!.pid = decoy.pid!;
    s.nodes[1]!.startTime = startTimeOf(decoy.pid!)! + 1;
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify(s));
    assert.match(await kafkaCli(['status', '--dir', dir]), new RegExp(`^node 2: stopped pid - \\(recorded pid ${decoy.pid} is gone\\)`, 'm'));
    await assert.rejects(kafkaCli(['down', '--dir', dir]), (err: Error & { stderr?: string }) => {
      assert.match(err.stderr ?? '', new RegExp(`still running .*pid ${decoy.pid} \\(node -e`));
      return true;
    });
    assert.equal(startTimeOf(decoy.pid!), s.nodes[1]!.startTime! - 1, 'down never signalled a process that is not ours');
    assert.ok(existsSync(join(dir, 'cluster.json')), 'down kept the directory while something was left');
    decoy.kill('SIGKILL');
    await until('the decoy is gone', () => !leftUnder(dir).includes(decoy.pid!), 15_000, { intervalMs: 100 });
    assert.match(await kafkaCli(['down', '--dir', dir]), /stopped and removed/);
    assert.equal(existsSync(dir), false);
    assert.deepEqual(leftUnder(dir), []);
  });

  test('Flink: a TaskManager started again with start-tm is stopped by the owner\'s exit hook; status and down tell the truth', async () => {
    const dir = join(await temp.make(), 'f');
    after(async () => {
      const { LocalFlinkCluster } = await import('../../harness/localcluster/flink-cluster.js');
      await (await LocalFlinkCluster.load(dir).catch(() => undefined))?.down().catch(() => undefined);
    });
    const owner = spawnTracked('node', ['--import', 'tsx', '--input-type=module', '-e', FLINK_OWNER], { env: { ...process.env, DIR: dir } });
    await waitForLine(owner, /^flink up /, 240_000);
    const exited = new Promise<number | null>((r) => owner.once('exit', (code) => r(code)));
    const state = () => JSON.parse(readFileSync(join(dir, 'flink-cluster.json'), 'utf8')) as { jobmanager: { pid: number | null }; taskmanagers: { pid: number | null; startTime?: number | null }[] };
    const first = state().taskmanagers[0]!.pid;
    assert.match(await flinkCli(['kill-tm', '1', '--dir', dir]), /^taskmanager-1: stopped$/m);
    assert.match(await flinkCli(['start-tm', '1', '--dir', dir]), /^taskmanager-1: running$/m);
    const tm = state().taskmanagers[0]!;
    assert.ok(tm.pid !== null && tm.pid !== first && tm.startTime === startTimeOf(tm.pid));
    assert.match(await flinkCli(['status', '--dir', dir]), new RegExp(`^taskmanager-1 +running pid ${tm.pid} `, 'm'));
    assert.equal(leftUnder(dir).length, 2, 'the JobManager and the new TaskManager');

    owner.kill('SIGINT');
    assert.equal(await exited, 130);
    await until('no Flink process left after the owner exited', () => leftUnder(dir).length === 0, 15_000, { intervalMs: 100 });
    assert.match(await flinkCli(['status', '--dir', dir]), /^taskmanager-1 +stopped pid - /m);
    assert.match(await flinkCli(['down', '--dir', dir]), /stopped and removed/);
    assert.equal(existsSync(dir), false);
  });

  test('a bad broker config fails at storage format, naming the key', async () => {
    await assert.rejects(LocalCluster.start({ nodes: 1, overrides: { 'transaction.state.log.replication.factor': 'three' } }), (err: Error) => {
      assert.match(err.message, /formatting storage of node 1 failed/);
      assert.match(err.message, /Invalid value three for configuration transaction\.state\.log\.replication\.factor/);
      return true;
    });
  });

  test('a node that dies during start-up is reported with the tail of its log, not a hang', async () => {
    // Hold the broker port so the node cannot bind it.
    const blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    after(() => blocker.close());
    const port = (blocker.address() as AddressInfo).port;
    const t0 = Date.now();
    await assert.rejects(LocalCluster.start({ nodes: 1, basePort: port }), (err: Error) => {
      assert.match(err.message, /Kafka node 1 exited during start-up\.\nFirst errors in .*server\.log/);
      assert.match(err.message, /Address already in use|BindException/);
      return true;
    });
    assert.ok(Date.now() - t0 < 60_000);
  });
});
