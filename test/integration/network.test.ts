// The networked local cluster's network (harness/localcluster/network.ts), on its own: real
// namespaces, a real bridge, real packets between small TCP echo servers. Skipped, with the reason
// printed, only where the machine cannot build network namespaces (not root, tools missing).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ClusterNetwork, NET_REGISTRY } from '../../harness/localcluster/network.js';

const execFileP = promisify(execFile);
const reason = await ClusterNetwork.probe();
if (reason) process.stdout.write(`# network tests skipped: ${reason}\n`);

const PORT = 7070;
const SERVER = `require('node:net').createServer((s) => s.pipe(s)).listen(${PORT}, process.argv[1], () => console.log('listening'))`;
/** Connects, sends 5 bytes one at a time; prints the round-trip times in ms, or fails after timeoutMs. */
const CLIENT = `const [host, timeoutMs] = process.argv.slice(1);
const s = require('node:net').connect(${PORT}, host); s.setNoDelay(true); const rtts = []; let t;
setTimeout(() => { console.log('timeout'); process.exit(3); }, Number(timeoutMs));
s.on('error', (e) => { console.log(e.code); process.exit(4); });
s.on('connect', () => { t = performance.now(); s.write('x'); });
s.on('data', () => { rtts.push(performance.now() - t); if (rtts.length === 5) { console.log(JSON.stringify(rtts)); process.exit(0); } t = performance.now(); s.write('x'); });`;

/** Counts UDP datagrams on port 7071 until a second passes without one; prints the count. */
const RECEIVER = `const d = require('node:dgram').createSocket('udp4'); let n = 0; let timer;
const done = () => { console.log(String(n)); process.exit(0); };
d.on('message', () => { n++; clearTimeout(timer); timer = setTimeout(done, 1000); });
d.bind(7071, process.argv[1], () => { console.log('ready'); timer = setTimeout(done, 8000); });`;
/** Sends N datagrams to host:7071, a few at a time. */
const SENDER = `const [host, count] = process.argv.slice(1); const d = require('node:dgram').createSocket('udp4'); let i = 0;
const next = () => { if (i >= Number(count)) return d.close(); i++; d.send('x', 7071, host, () => setTimeout(next, 1)); }; next();`;

function hostLinks(): string[] {
  return readdirSync('/sys/class/net').sort();
}

describe('networked cluster: namespaces, bridge, cuts, links, slow links, sweep', { skip: reason ?? false }, () => {
  let net: ClusterNetwork;
  const servers: ChildProcess[] = [];
  const linksBefore = reason ? [] : hostLinks();

  /** Round trips from an endpoint (or the host, from === null) to an endpoint's echo server, or the failure. */
  async function rtt(from: string | null, to: string, timeoutMs = 3000): Promise<number[] | string> {
    const args = ['-e', CLIENT, net.addr(to), String(timeoutMs)];
    const [cmd, argv] = from === null ? [process.execPath, args] : net.wrap(from, process.execPath, args);
    try {
      return JSON.parse((await execFileP(cmd, argv)).stdout) as number[];
    } catch (err) {
      return ((err as { stdout?: string }).stdout ?? '').trim() || (err as Error).message;
    }
  }

  before(async () => {
    net = await ClusterNetwork.create();
    for (const role of ['n1', 'n2', 'wmain']) {
      const e = await net.endpoint(role);
      const [cmd, argv] = net.wrap(role, process.execPath, ['-e', SERVER, e.addr]);
      const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
      servers.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`echo server in ${role} exited (${code})`)));
      });
    }
  });

  after(async () => {
    for (const s of servers) s.kill('SIGKILL');
    await net?.remove();
  });

  test('endpoints have addresses only inside their namespaces; the host gains one interface of its own', async () => {
    const added = hostLinks().filter((l) => !linksBefore.includes(l));
    assert.deepEqual(added, [net.state.hostLink]);
    assert.match(net.state.hostLink, /^eosw-[0-9a-f]{4}-h$/);
    const { stdout } = await execFileP('ip', ['-o', '-4', 'addr', 'show']);
    assert.ok(!stdout.includes(net.addr('n1')), 'an endpoint address on a host interface');
    assert.ok(stdout.includes(`${net.state.hostAddr}/24`));
    for (const e of net.state.endpoints) assert.ok(e.ns.startsWith(`eosw-${net.id}-`));
    assert.ok(existsSync(join(NET_REGISTRY, `${net.id}.json`)));
  });

  test('everyone reaches everyone; a partition drops packets both ways and only between its sides; heal restores it', async () => {
    assert.ok(Array.isArray(await rtt('wmain', 'n1')));
    assert.ok(Array.isArray(await rtt(null, 'n2')));
    await net.partition(['wmain'], ['n1']);
    // Dropped, not refused: the connection attempt just never completes.
    assert.equal(await rtt('wmain', 'n1'), 'timeout');
    assert.equal(await rtt('n1', 'wmain'), 'timeout');
    assert.ok(Array.isArray(await rtt('wmain', 'n2')), 'the worker still reaches n2');
    assert.ok(Array.isArray(await rtt('n2', 'n1')), 'n2 still reaches n1');
    assert.ok(Array.isArray(await rtt(null, 'n1')), 'the harness still reaches n1');
    await net.heal();
    assert.ok(Array.isArray(await rtt('wmain', 'n1')));
  });

  test('a one-way cut drops only its direction', async () => {
    await net.cut([{ from: 'n1', to: 'n2' }]);
    // A TCP connection needs both directions; the SYN from n2 arrives but the answer does not.
    assert.equal(await rtt('n2', 'n1'), 'timeout');
    assert.equal(await rtt('n1', 'n2'), 'timeout');
    await net.heal();
    assert.ok(Array.isArray(await rtt('n1', 'n2')));
  });

  test('a link set down cuts the endpoint off until it is up again', async () => {
    await net.link('wmain', false);
    assert.equal(await rtt('n1', 'wmain'), 'timeout');
    await net.heal();
    assert.ok(Array.isArray(await rtt('n1', 'wmain', 10_000)));
  });

  test('slow links delay every packet between endpoints, not those to the harness', async () => {
    const fast = await rtt('n1', 'n2');
    assert.ok(Array.isArray(fast));
    await net.slow({ delayMs: 200, jitterMs: 50, lossPercent: 0 });
    try {
      const slow = await rtt('n1', 'n2', 15_000);
      assert.ok(Array.isArray(slow), String(slow));
      // Each echo crosses two delayed egresses: 2 × (200 ± 50) ms.
      for (const ms of slow) assert.ok(ms >= 290 && ms < 1500, `round trip ${ms} ms`);
      const direct = await rtt(null, 'n2');
      assert.ok(Array.isArray(direct));
      // The host's own link is not slowed; the echo server's reply to it is exempt as well.
      assert.ok(Math.max(...direct) < 150, `harness round trips ${direct.join(', ')} ms`);
      assert.equal(net.failure, null);
    } finally {
      await net.slow(null);
    }
    const again = await rtt('n1', 'n2');
    assert.ok(Array.isArray(again) && Math.max(...again) < 150, `fast again: ${String(again)}`);
  });

  test('lossy links drop datagrams between endpoints at about the given rate, none to the harness', async () => {
    const received = async (from: string | null, count: number): Promise<number> => {
      const [rcmd, rargs] = net.wrap('n2', process.execPath, ['-e', RECEIVER, net.addr('n2')]);
      const receiver = spawn(rcmd, rargs, { stdio: ['ignore', 'pipe', 'inherit'] });
      const lines: string[] = [];
      const ready = new Promise<void>((resolve) => receiver.stdout!.on('data', (d: Buffer) => (lines.push(...d.toString().split('\n').filter(Boolean)), lines.includes('ready') && resolve())));
      const exited = new Promise((r) => receiver.once('exit', r));
      await ready;
      const args = ['-e', SENDER, net.addr('n2'), String(count)];
      const [cmd, argv] = from === null ? [process.execPath, args] : net.wrap(from, process.execPath, args);
      await execFileP(cmd, argv);
      await exited;
      return Number(lines[lines.length - 1]);
    };
    await net.slow({ delayMs: 0, jitterMs: 0, lossPercent: 20 });
    try {
      // 400 datagrams, each lost with probability 0.2: 320 expected, standard deviation 8.
      const got = await received('n1', 400);
      assert.ok(got >= 280 && got <= 360, `${got} of 400 datagrams arrived`);
      assert.equal(await received(null, 400), 400, 'datagrams from the harness are never dropped');
    } finally {
      await net.slow(null);
    }
    assert.equal(await received('n1', 200), 200);
  });

  test("the sweep removes a crashed owner's network and leaves a live one alone", async () => {
    // A child process creates a network and is killed with SIGKILL: no exit hook runs.
    const code = `import('${new URL('../../harness/localcluster/network.ts', import.meta.url).pathname}').then(async ({ ClusterNetwork }) => {
      const n = await ClusterNetwork.create(); await n.endpoint('n1'); console.log(n.id); setInterval(() => {}, 1000); });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const id = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
      child.once('exit', (c) => reject(new Error(`child exited (${c})`)));
    });
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
    const leftovers = () => readdirSync('/run/netns').filter((n) => n.startsWith(`eosw-${id}-`));
    assert.equal(leftovers().length, 2, 'bridge and endpoint namespaces left behind');
    assert.ok(hostLinks().includes(`eosw-${id}-h`));
    const removed = ClusterNetwork.sweep();
    assert.ok(removed.includes(id), `swept ${removed.join(', ')}`);
    assert.ok(!removed.includes(net.id), 'the live network was swept');
    assert.deepEqual(leftovers(), []);
    assert.ok(!hostLinks().includes(`eosw-${id}-h`));
    assert.ok(!existsSync(join(NET_REGISTRY, `${id}.json`)));
    assert.ok(net.exists());
  });

  test("a network handed to a cluster left running (kafka up) outlives its creator until the cluster's state no longer names it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eoswatch-net-detach-'));
    try {
      // As `npm run kafka -- up --network`: create, write the cluster's state, detach, exit.
      const code = `import('${new URL('../../harness/localcluster/network.ts', import.meta.url).pathname}').then(async ({ ClusterNetwork }) => {
        const n = await ClusterNetwork.create(); await n.endpoint('n1');
        require('node:fs').writeFileSync(process.argv[1] + '/cluster.json', JSON.stringify({ network: n.state }));
        await n.detach(process.argv[1]); console.log(n.id); process.exit(0); });`;
      const { stdout } = await execFileP(process.execPath, ['--import', 'tsx', '-e', code, dir]);
      const id = stdout.trim();
      const mine = () => readdirSync('/run/netns').filter((n) => n.startsWith(`eosw-${id}-`));
      assert.equal(mine().length, 2, 'the exit of its creator left the detached network in place');
      assert.ok(!ClusterNetwork.sweep().includes(id), 'a network its cluster still names is not a leftover');
      assert.equal(mine().length, 2);
      rmSync(join(dir, 'cluster.json'));
      assert.ok(ClusterNetwork.sweep().includes(id), 'once the cluster is gone, it is');
      assert.deepEqual(mine(), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('remove leaves nothing: no namespace, no host interface, no registration', async () => {
    const id = net.id;
    for (const s of servers) s.kill('SIGKILL');
    await net.remove();
    assert.equal(net.exists(), false);
    assert.deepEqual(readdirSync('/run/netns').filter((n) => n.startsWith(`eosw-${id}-`)), []);
    assert.deepEqual(hostLinks(), linksBefore);
    assert.ok(!existsSync(join(NET_REGISTRY, `${id}.json`)));
  });
});
