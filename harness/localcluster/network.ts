// The networked local cluster: every endpoint (a broker, a chaos worker) in a Linux network
// namespace of its own, joined by a veth pair to a bridge in one more namespace, with addresses
// that exist only inside those namespaces; the harness's own process reaches them through one
// veth it adds to the bridge (its only change to the host: an interface of its own). Faults are
// made where the traffic meets: nft rules in the bridge namespace drop packets between chosen
// endpoints (partitions) or at random (loss), a bridge port set down cuts a link, and the
// delayer of ./net-delay.ts holds each endpoint's outgoing packets (slow links).
//
// Every name starts with NET_PREFIX and the network's id, and every network is registered under
// NET_REGISTRY with its owner, so a sweep removes exactly the leftovers of crashed runs (owner
// gone) and nothing else. Needs root, iproute2, nftables, iptables and python3 (probe() says
// which is missing).
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withLock } from './kafka-dist.js';
import { DELAYER_SOURCE } from './net-delay.js';
import { startTimeOf } from '../../src/runtime/proc.js';
import { atExit, TrackedProcess } from '../../src/runtime/process.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

const execFileP = promisify(execFile);

export const NET_PREFIX = 'eosw-';
export const NET_REGISTRY = '/run/eoswatch-net';
/** Subnets 10.231.N.0/24, one per network, N chosen free among the registered networks and the host's routes. */
const SUBNET_BASE = '10.231';
/** Table of the bridge namespace's rules. */
const TABLE = 'eoswatch';
/** The interface of an endpoint, inside its namespace. */
const ENDPOINT_IF = 'eth0';

export interface EndpointState {
  /** Short name: n1, n2, n3 for brokers, w<name> for workers (at most 5 characters: interface names are short). */
  role: string;
  ns: string;
  /** The endpoint's port on the bridge (an interface of the bridge namespace). */
  port: string;
  addr: string;
}

export interface NetworkState {
  id: string;
  /** The first three octets of the network's /24. */
  subnet: string;
  bridgeNs: string;
  /** The harness's interface into the bridge (host side) and its address. */
  hostLink: string;
  hostPort: string;
  hostAddr: string;
  endpoints: EndpointState[];
}

interface Registration {
  id: string;
  subnet: string;
  ownerPid: number;
  /** Start time of the owner (from /proc), so a reused pid is not taken for the owner. */
  ownerStart: string | null;
  /** A cluster left running by `npm run kafka -- up`: alive while its directory says so. */
  clusterDir?: string;
}

export interface SlowLinks {
  delayMs: number;
  jitterMs: number;
  lossPercent: number;
}

/** A partition: packets from `from` to `to` are dropped (both directions unless oneWay). */
export interface Cut {
  from: string;
  to: string;
}

async function run(cmd: string, args: string[], input?: string): Promise<string> {
  try {
    if (input === undefined) return (await execFileP(cmd, args)).stdout;
    return await new Promise((resolve, reject) => {
      const child = execFile(cmd, args, (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout)));
      child.stdin!.end(input);
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new EosError(ErrorCodes.HARNESS_FAILED, `${cmd} ${args.join(' ')}: ${(e.stderr ?? '').trim() || e.message}`, { cause: err });
  }
}

const ip = (...args: string[]) => run('ip', args);

/** A pid's start time as the registry records it (a string), or null when there is no such pid. */
function procStart(pid: number): string | null {
  const start = startTimeOf(pid);
  return start === null ? null : String(start);
}

function ownerAlive(r: Registration): boolean {
  const start = procStart(r.ownerPid);
  return start !== null && (r.ownerStart === null || start === r.ownerStart);
}

/** True when the registered network is still in use (its owner runs, or its detached cluster's state names it). */
function inUse(r: Registration): boolean {
  if (ownerAlive(r)) return true;
  if (!r.clusterDir) return false;
  try {
    const state = JSON.parse(readFileSync(join(r.clusterDir, 'cluster.json'), 'utf8')) as { network?: { id?: string } };
    return state.network?.id === r.id;
  } catch {
    return false;
  }
}

function readRegistrations(): Registration[] {
  let files: string[];
  try {
    files = readdirSync(NET_REGISTRY).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const out: Registration[] = [];
  for (const f of files) {
    try {
      out.push(JSON.parse(readFileSync(join(NET_REGISTRY, f), 'utf8')) as Registration);
    } catch {
      /* being written: its owner is alive */
    }
  }
  return out;
}

function netnsNames(): string[] {
  try {
    return readdirSync('/run/netns');
  } catch {
    return [];
  }
}

/** Pids of the processes in a namespace (all of them started there by this harness). */
function nsPids(ns: string): number[] {
  try {
    return execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Kills what runs in the namespaces of a network id and deletes them (synchronous: usable in an exit hook). */
function destroySync(id: string): void {
  const mine = netnsNames().filter((n) => n.startsWith(`${NET_PREFIX}${id}-`));
  for (const ns of mine) {
    for (const pid of nsPids(ns)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  for (const ns of mine) {
    try {
      execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    } catch {
      /* removed meanwhile */
    }
  }
  // The host end of the veth goes with its peer in the bridge namespace; a half-made one may not.
  try {
    execFileSync('ip', ['link', 'del', `${NET_PREFIX}${id}-h`], { stdio: 'ignore' });
  } catch {
    /* none */
  }
  rmSync(join(NET_REGISTRY, `${id}.json`), { force: true });
}

const ROLE = /^[a-z0-9]{1,5}$/;

/** Runs a command inside namespace `ns`: `ip netns exec` execs it, so the pid stays the command's. */
export function netnsWrap(ns: string): (cmd: string, args: string[]) => [string, string[]] {
  return (cmd, args) => ['ip', ['netns', 'exec', ns, cmd, ...args]];
}


export class ClusterNetwork {
  private slowLinks: SlowLinks | null = null;
  private cuts: Cut[] = [];
  private readonly down = new Set<string>();
  private readonly delayers = new Map<string, TrackedProcess>();
  /** Removes the exit hook that removes the network (this process's own: not one detached to a cluster's directory). */
  private disarmExit: (() => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Set when a packet delayer exits while its links should be slow: the fault is no longer what it claims. */
  failure: string | null = null;

  private constructor(readonly state: NetworkState) {}

  get id(): string {
    return this.state.id;
  }

  /** Why a networked cluster cannot run here, or null when it can. */
  static async probe(): Promise<string | null> {
    if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
    if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add, nft, iptables)';
    const tools: [string, string[], string][] = [
      ['ip', ['-V'], 'iproute2'],
      ['nft', ['--version'], 'nftables'],
      ['iptables', ['--version'], 'iptables'],
      ['python3', ['--version'], 'python3'],
    ];
    const missing: string[] = [];
    for (const [cmd, args, pkg] of tools) {
      try {
        await execFileP(cmd, args);
      } catch {
        missing.push(`${cmd} (Debian package ${pkg})`);
      }
    }
    if (missing.length) return `missing: ${missing.join(', ')}`;
    const ns = `${NET_PREFIX}probe-${process.pid}`;
    try {
      await ip('netns', 'add', ns);
      await ip('-n', ns, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1');
      await ip('-n', ns, 'link', 'add', 'b0', 'type', 'bridge');
      const rules = ['table bridge eoswatch {', '  chain forward {', '    type filter hook forward priority 0;', '    iifname "p0" drop', '    numgen random mod 100 < 5 drop', '  }', '}', ''];
      await run('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], rules.join('\n'));
      await run('ip', ['netns', 'exec', ns, 'iptables', '-w', '-A', 'OUTPUT', '-o', 'p0', '-j', 'NFQUEUE', '--queue-num', '0']);
      return null;
    } catch (err) {
      return `cannot build a network namespace with a bridge, veth pairs, nft and iptables rules: ${(err as Error).message}`;
    } finally {
      await ip('netns', 'del', ns).catch(() => undefined);
    }
  }

  /**
   * Removes the leftovers of networks whose owner is gone (a crashed run): their processes are
   * killed by pid, their namespaces and host interface deleted. Returns the ids removed.
   */
  static sweep(): string[] {
    const regs = new Map(readRegistrations().map((r) => [r.id, r]));
    const ids = new Set<string>();
    for (const ns of netnsNames()) {
      const m = ns.match(/^eosw-([0-9a-f]{4})-/);
      if (m) ids.add(m[1]!);
      const probe = ns.match(/^eosw-probe-(\d+)$/);
      if (probe && procStart(Number(probe[1])) === null) {
        try {
          execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
        } catch {
          /* gone */
        }
      }
    }
    for (const r of regs.values()) ids.add(r.id);
    const removed: string[] = [];
    for (const id of ids) {
      const r = regs.get(id);
      if (r && inUse(r)) continue;
      destroySync(id);
      removed.push(id);
    }
    return removed.sort();
  }

  /** Creates the bridge namespace and the host's interface into it; endpoints come with endpoint(). */
  static async create(): Promise<ClusterNetwork> {
    const reason = await ClusterNetwork.probe();
    if (reason) throw new EosError(ErrorCodes.HARNESS_FAILED, `a networked local cluster cannot run here: ${reason}`);
    ClusterNetwork.sweep();
    await mkdir(NET_REGISTRY, { recursive: true });
    const id = randomBytes(2).toString('hex');
    const subnet = await withLock(join(NET_REGISTRY, '.lock'), async () => {
      const used = new Set(readRegistrations().map((r) => r.subnet));
      const routes = await ip('-4', 'route', 'show', 'table', 'all');
      for (let n = 0; n < 255; n++) {
        const s = `${SUBNET_BASE}.${n}`;
        if (used.has(s) || routes.includes(`${s}.`)) continue;
        const reg: Registration = { id, subnet: s, ownerPid: process.pid, ownerStart: procStart(process.pid) };
        await writeFile(join(NET_REGISTRY, `${id}.json`), JSON.stringify(reg));
        return s;
      }
      throw new EosError(ErrorCodes.HARNESS_FAILED, `no free subnet ${SUBNET_BASE}.0-254.0/24 for a networked cluster`);
    });
    const name = (role: string) => `${NET_PREFIX}${id}-${role}`;
    const net = new ClusterNetwork({
      id,
      subnet,
      bridgeNs: name('br'),
      hostLink: name('h'),
      hostPort: name('hb'),
      hostAddr: `${subnet}.1`,
      endpoints: [],
    });
    net.disarmExit = atExit(() => net.removeSync());
    try {
      const br = net.state.bridgeNs;
      await ip('netns', 'add', br);
      await ip('-n', br, 'link', 'set', 'lo', 'up');
      await ip('-n', br, 'link', 'add', 'br0', 'type', 'bridge');
      await ip('-n', br, 'link', 'set', 'br0', 'up');
      await ip('link', 'add', net.state.hostLink, 'type', 'veth', 'peer', 'name', net.state.hostPort, 'netns', br);
      await writeFile(`/proc/sys/net/ipv6/conf/${net.state.hostLink}/disable_ipv6`, '1').catch(() => undefined);
      await ip('addr', 'add', `${net.state.hostAddr}/24`, 'dev', net.state.hostLink);
      await ip('link', 'set', net.state.hostLink, 'up');
      await ip('-n', br, 'link', 'set', net.state.hostPort, 'master', 'br0');
      await ip('-n', br, 'link', 'set', net.state.hostPort, 'up');
      await net.applyRules();
    } catch (err) {
      net.removeSync();
      throw err;
    }
    return net;
  }

  /** A network created by another process (the CLI's `up`), from the cluster's state file. */
  static attach(state: NetworkState): ClusterNetwork {
    return new ClusterNetwork(state);
  }

  /** From now on the network belongs to the cluster in dir (left running by the CLI), not to this process. */
  async detach(clusterDir: string): Promise<void> {
    const file = join(NET_REGISTRY, `${this.id}.json`);
    const reg = JSON.parse(await readFile(file, 'utf8')) as Registration;
    await writeFile(file, JSON.stringify({ ...reg, clusterDir }));
    this.disarmExit?.();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  ns(role: string): string {
    return this.endpointState(role).ns;
  }

  addr(role: string): string {
    return this.endpointState(role).addr;
  }

  private endpointState(role: string): EndpointState {
    const e = this.state.endpoints.find((x) => x.role === role);
    if (!e) throw new Error(`no endpoint ${role} in network ${this.id}`);
    return e;
  }

  /** The endpoint's namespace, with its address on the bridge; created on first use. */
  endpoint(role: string): Promise<EndpointState> {
    if (!ROLE.test(role) || role === 'h' || role === 'hb' || role === 'br') throw new Error(`endpoint role "${role}": expected 1-5 lower-case letters or digits`);
    return this.serial(async () => {
      const have = this.state.endpoints.find((x) => x.role === role);
      if (have) return have;
      const n = this.state.endpoints.length;
      if (n > 200) throw new EosError(ErrorCodes.HARNESS_FAILED, `network ${this.id} is full`);
      const e: EndpointState = { role, ns: `${NET_PREFIX}${this.id}-${role}`, port: `${NET_PREFIX}${this.id}-${role}`, addr: `${this.state.subnet}.${10 + n}` };
      const br = this.state.bridgeNs;
      await ip('netns', 'add', e.ns);
      this.state.endpoints.push(e);
      await ip('-n', e.ns, 'link', 'set', 'lo', 'up');
      await ip('-n', br, 'link', 'add', e.port, 'type', 'veth', 'peer', 'name', ENDPOINT_IF, 'netns', e.ns);
      await ip('-n', e.ns, 'addr', 'add', `${e.addr}/24`, 'dev', ENDPOINT_IF);
      await ip('-n', e.ns, 'link', 'set', ENDPOINT_IF, 'up');
      await ip('-n', br, 'link', 'set', e.port, 'master', 'br0');
      await ip('-n', br, 'link', 'set', e.port, 'up');
      if (this.slowLinks) await this.startDelayer(e, this.slowLinks);
      return e;
    });
  }

  /** The command line that runs `cmd` inside an endpoint's namespace (the pid stays the command's: ip execs it). */
  wrap(role: string, cmd: string, args: string[]): [string, string[]] {
    return netnsWrap(this.ns(role))(cmd, args);
  }

  /** Drops every packet between each endpoint of `a` and each of `b`, in both directions, on top of the cuts in place. */
  partition(a: string[], b: string[]): Promise<void> {
    const cuts: Cut[] = [];
    for (const x of a) for (const y of b) cuts.push({ from: x, to: y }, { from: y, to: x });
    return this.cut(cuts);
  }

  /** Drops the packets of these directed cuts, on top of those in place. */
  cut(cuts: Cut[]): Promise<void> {
    for (const c of cuts) {
      this.endpointState(c.from);
      this.endpointState(c.to);
    }
    return this.serial(async () => {
      this.cuts.push(...cuts);
      await this.applyRules();
    });
  }

  /** Removes every cut and brings every link that was set down up again. */
  heal(): Promise<void> {
    return this.serial(async () => {
      this.cuts = [];
      await this.applyRules();
      for (const role of [...this.down]) await this.setLink(role, true);
    });
  }

  /** Sets an endpoint's link down (its bridge port: the endpoint sees no carrier) or up. */
  link(role: string, up: boolean): Promise<void> {
    this.endpointState(role);
    return this.serial(() => this.setLink(role, up));
  }

  private async setLink(role: string, up: boolean): Promise<void> {
    await ip('-n', this.state.bridgeNs, 'link', 'set', this.endpointState(role).port, up ? 'up' : 'down');
    if (up) this.down.delete(role);
    else this.down.add(role);
  }

  /**
   * Slow, lossy links between every two endpoints (not to the harness's own interface): each
   * packet waits delay ± jitter on its way out of an endpoint and is lost with the given
   * probability on the bridge. null restores fast links.
   */
  slow(spec: SlowLinks | null): Promise<void> {
    return this.serial(async () => {
      for (const role of [...this.delayers.keys()]) await this.stopDelayer(role);
      this.failure = null;
      this.slowLinks = spec;
      await this.applyRules();
      if (spec && spec.delayMs + spec.jitterMs > 0) for (const e of this.state.endpoints) await this.startDelayer(e, spec);
    });
  }

  /** No cut, no link down, fast links. */
  async reset(): Promise<void> {
    await this.slow(null);
    await this.heal();
  }

  get faults(): { cuts: Cut[]; down: string[]; slow: SlowLinks | null } {
    return { cuts: [...this.cuts], down: [...this.down], slow: this.slowLinks };
  }

  private async startDelayer(e: EndpointState, spec: SlowLinks): Promise<void> {
    if (spec.delayMs + spec.jitterMs <= 0) return;
    // Under a parent-death signal: a delayer never outlives the harness (its namespace's sweep would find it otherwise).
    const child = TrackedProcess.spawn('python3', ['-c', DELAYER_SOURCE, '0', String(spec.delayMs), String(spec.jitterMs)], {
      name: `the packet delayer of ${e.ns}`,
      pipe: true,
      dieWithParent: true,
      wrap: netnsWrap(e.ns),
    });
    this.delayers.set(e.role, child);
    void child.exited!.then((code) => {
      if (this.delayers.get(e.role) === child) this.failure ??= `the packet delayer of ${e.ns} exited (${code}): ${child.output.trim()}`;
    });
    await child.waitFor(/delayer ready/, 15_000);
    // Every packet out of the endpoint waits in queue 0, except those to the harness's interface.
    const ipt = (...args: string[]) => ip('netns', 'exec', e.ns, 'iptables', '-w', ...args);
    await ipt('-A', 'OUTPUT', '-o', ENDPOINT_IF, '-d', this.state.hostAddr, '-j', 'ACCEPT');
    await ipt('-A', 'OUTPUT', '-o', ENDPOINT_IF, '-j', 'NFQUEUE', '--queue-num', '0');
  }

  private async stopDelayer(role: string): Promise<void> {
    const child = this.delayers.get(role);
    this.delayers.delete(role);
    await ip('netns', 'exec', this.ns(role), 'iptables', '-w', '-F', 'OUTPUT').catch(() => undefined);
    if (child) {
      await child.end(0);
      await child.exited;
    }
  }

  /** The bridge's whole rule set, replaced in one nft transaction. */
  private async applyRules(): Promise<void> {
    const port = (role: string) => this.endpointState(role).port;
    const rules = this.cuts.map((c) => `    iifname "${port(c.from)}" oifname "${port(c.to)}" drop`);
    const loss = this.slowLinks?.lossPercent ?? 0;
    if (loss > 0) {
      const h = this.state.hostPort;
      // numgen gives 0..9999: loss in hundredths of a percent.
      rules.push(`    iifname != "${h}" oifname != "${h}" numgen random mod 10000 < ${Math.round(loss * 100)} drop`);
    }
    const text = [
      `table bridge ${TABLE} {}`,
      `delete table bridge ${TABLE}`,
      `table bridge ${TABLE} {`,
      '  chain forward {',
      '    type filter hook forward priority 0; policy accept;',
      ...rules,
      '  }',
      '}',
      '',
    ].join('\n');
    await run('ip', ['netns', 'exec', this.state.bridgeNs, 'nft', '-f', '-'], text);
  }

  /** Kills what still runs in the network's namespaces, deletes them and the host's interface. */
  async remove(): Promise<void> {
    await this.queue;
    this.removeSync();
  }

  removeSync(): void {
    const delayers = [...this.delayers.values()];
    this.delayers.clear();
    for (const child of delayers) child.killSync();
    destroySync(this.id);
    this.disarmExit?.();
  }

  /** Whether any namespace or the host interface of this network still exists. */
  exists(): boolean {
    return netnsNames().some((n) => n.startsWith(`${NET_PREFIX}${this.id}-`)) || existsSync(`/sys/class/net/${this.state.hostLink}`);
  }
}
