// The cluster CLI for people (`npm run kafka -- …`), as separate processes: up leaves the node
// running after the CLI exits, the others find it through the state file.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { LocalCluster } from '../harness/index.js';
import { javaProcessesUnder } from './cluster-scenarios.js';
import { tempDirs } from '../harness/tmp.js';

const execFileP = promisify(execFile);
const temp = tempDirs('eoswatch-cli-cluster-');

async function kafkaCli(args: string[]): Promise<string> {
  const { stdout } = await execFileP('node', ['--import', 'tsx', 'src/localcluster/cli.ts', ...args], { timeout: 180_000 });
  return stdout;
}

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
