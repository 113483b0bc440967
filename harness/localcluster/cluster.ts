// A real Kafka cluster on loopback, for tests, the demo and benchmarks: KRaft combined
// broker+controller nodes started with plain `java` from the jars Maven fetched. Every process
// is a tracked process (pid and start time, src/runtime/process.ts) recorded in a state file next to the data, so another
// process (the CLI) can kill, pause or restart a node, and nothing but the processes we started
// is ever signalled. The state file is the truth shared by every process attached to a cluster:
// each action reads it first and writes it after every start, restart and stop, and the exit hook
// of the process that started the cluster kills what the file names (also a node `start N`
// started from another terminal).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { DEFAULT_KAFKA_VERSION, ensureKafka, isKafka4 } from './kafka-dist.js';
import { ClusterNetwork, type NetworkState } from './network.js';
import { describeSurvivors, processesReferencing } from '../../src/runtime/proc.js';
import { atExit, killAllSync, TrackedProcess } from '../../src/runtime/process.js';
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';
import {
  createSecurity,
  eoswatchKafkaSection,
  kafkajsSecurity,
  listenerName,
  nodePem,
  normaliseSecurity,
  propValue,
  scramFormatArgs,
  securityProperties,
  type ClientIdentity,
  type SecurityMode,
  type SecurityOptions,
  type SecurityState,
} from './security.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

const execFileP = promisify(execFile);
/**
 * For the short-lived tool JVMs (storage format): the client compiler only and the serial
 * collector start in about 0.9 s of CPU instead of 1.3 (C2 and G1 threads are set up for work
 * a tool never does). The brokers keep the full JIT and G1.
 */
export const TOOL_JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

export interface ClusterOptions {
  /** 1 node (every replication factor and min ISR 1) or 3 nodes (transaction log RF 3, min ISR 2). */
  nodes?: 1 | 3;
  version?: string;
  /** Broker config applied to every node after the defaults, e.g. to build a deliberately unsafe cluster. */
  overrides?: Record<string, string>;
  /** Where data, logs and the state file go; a fresh temporary directory by default. */
  dir?: string;
  /** First port; node i uses base+2i (broker) and base+2i+1 (controller). Free ports are picked by default. */
  basePort?: number;
  heap?: string;
  startTimeoutMs?: number;
  /** Kill the nodes when this process exits (tests). The CLI's `up` turns it off. */
  killOnExit?: boolean;
  /**
   * Each node in a network namespace of its own on a bridge (./network.ts), reachable from this
   * process only through the network's own interface, so that chaos can cut and slow its links.
   * Needs root; refused with the reason where that is missing.
   */
  network?: boolean;
  /**
   * plaintext (the default) or a secured cluster (./security.ts): SASL_SSL or SSL client listener,
   * a private CA, StandardAuthorizer deny-by-default, an admin super user (LocalCluster.security).
   */
  security?: SecurityMode | SecurityOptions;
}

export interface NodeState {
  id: number;
  brokerPort: number;
  controllerPort: number;
  dir: string;
  propsFile: string;
  logFile: string;
  pid: number | null;
  /** Start time of pid (/proc/<pid>/stat field 22): with the pid, the identity of the process we started. */
  startTime?: number | null;
  /** The node's address: 127.0.0.1, or its own in a networked cluster. */
  host?: string;
}

export interface ClusterState {
  version: string;
  clusterId: string;
  libs: string;
  dir: string;
  heap: string;
  overrides: Record<string, string>;
  nodes: NodeState[];
  network?: NetworkState;
  /** A secured cluster's CA, users and passwords (all inside dir); absent for plaintext. */
  security?: SecurityState;
}

export type NodeStatus = 'running' | 'paused' | 'stopped';

const STATE_FILE = 'cluster.json';

export function brokerDefaults(nodes: number): Record<string, string> {
  const rf = String(Math.min(nodes, 3));
  const minIsr = nodes >= 3 ? '2' : '1';
  return {
    'offsets.topic.replication.factor': rf,
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.replication.factor': rf,
    'transaction.state.log.min.isr': minIsr,
    'transaction.state.log.num.partitions': '10',
    'default.replication.factor': rf,
    'min.insync.replicas': minIsr,
    'num.partitions': '1',
    'auto.create.topics.enable': 'false',
    'unclean.leader.election.enable': 'false',
    'group.initial.rebalance.delay.ms': '0',
    'share.coordinator.state.topic.replication.factor': rf,
    'share.coordinator.state.topic.min.isr': minIsr,
    'log.segment.bytes': String(64 * 1024 * 1024),
  };
}

/** `pem`: the node's key and certificate, for a secured cluster (state.security). */
export function nodeProperties(state: ClusterState, node: NodeState, pem?: { keyPem: string; certPem: string }): string {
  const host = (n: NodeState) => n.host ?? '127.0.0.1';
  const voters = state.nodes.map((n) => `${n.id}@${host(n)}:${n.controllerPort}`).join(',');
  const sec = state.security;
  if (sec && !pem) throw new Error(`node ${node.id}: a secured cluster's properties need the node's key and certificate`);
  // The client (and inter-broker) listener: PLAINTEXT, SASL_SSL or SSL; the controller's stays PLAINTEXT on the node's address.
  const l = listenerName(sec);
  const props: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': String(node.id),
    'controller.quorum.voters': voters,
    listeners: `${l}://${host(node)}:${node.brokerPort},CONTROLLER://${host(node)}:${node.controllerPort}`,
    'advertised.listeners': `${l}://${host(node)}:${node.brokerPort}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': l,
    'listener.security.protocol.map': `CONTROLLER:PLAINTEXT,${l}:${l}`,
    'log.dirs': join(node.dir, 'data'),
    ...brokerDefaults(state.nodes.length),
    ...(sec && pem ? securityProperties(sec, pem, state.nodes.length) : {}),
    ...state.overrides,
  };
  if (!isKafka4(state.version)) {
    // Share groups do not exist before 4.0; 3.9 warns about unknown keys but a stray key is noise.
    delete props['share.coordinator.state.topic.replication.factor'];
    delete props['share.coordinator.state.topic.min.isr'];
  }
  return Object.entries(props)
    .map(([k, v]) => `${k}=${propValue(v)}`)
    .join('\n')
    .concat('\n');
}

function loggingConfig(version: string): { file: string; text: string; flag: string } {
  if (isKafka4(version)) {
    return {
      file: 'log4j2.properties',
      flag: '-Dlog4j2.configurationFile=',
      text: [
        'status = warn',
        'appender.out.type = Console',
        'appender.out.name = OUT',
        'appender.out.layout.type = PatternLayout',
        'appender.out.layout.pattern = [%d] %p %m (%c)%n',
        'rootLogger.level = INFO',
        'rootLogger.appenderRef.out.ref = OUT',
        'logger.kafka.name = kafka',
        'logger.kafka.level = INFO',
        'logger.request.name = kafka.request.logger',
        'logger.request.level = WARN',
        '',
      ].join('\n'),
    };
  }
  return {
    file: 'log4j.properties',
    flag: '-Dlog4j.configuration=file:',
    text: [
      'log4j.rootLogger=INFO, out',
      'log4j.appender.out=org.apache.log4j.ConsoleAppender',
      'log4j.appender.out.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n',
      'log4j.logger.kafka.request.logger=WARN',
      '',
    ].join('\n'),
  };
}

/** 16 random bytes as base64url; a leading '-' would be read as an option by StorageTool. */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/** A node's process: its record in the state file, ours only while its command line names the node's properties. */
function nodeProcess(node: NodeState): TrackedProcess {
  return new TrackedProcess(node, { name: `node ${node.id}`, needle: node.propsFile });
}

/** True only when pid is alive, has the start time we recorded, and runs this node's properties. */
function isOurProcess(node: NodeState): boolean {
  return nodeProcess(node).alive;
}

/**
 * The state file's view of the nodes merged into ours: the file wins for the process fields
 * (pid, start time), which another process (the CLI) may have changed. Pure.
 */
export function mergeRecordedNodes(ours: NodeState[], recorded: readonly NodeState[]): void {
  for (const n of ours) {
    const r = recorded.find((x) => x.id === n.id);
    if (!r) continue;
    n.pid = r.pid;
    n.startTime = r.startTime ?? null;
  }
}

/** The first error lines of a broker log and its tail: the cause usually sits before the shutdown noise. */
export function explainLog(file: string): string {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch {
    return `(no log at ${file})`;
  }
  const errors = lines.filter((l) => / (ERROR|FATAL) |^\S*Exception|Exception: /.test(l)).slice(0, 8);
  return [
    ...(errors.length ? [`First errors in ${file}:`, ...errors] : []),
    `Tail of ${file}:`,
    ...lines.slice(-12),
  ].join('\n');
}

export function tailFile(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

export class LocalCluster {
  /** The namespaces of a networked cluster (ClusterOptions.network). */
  readonly network: ClusterNetwork | undefined;
  /** Removes the exit hook that kills what the state file names (armed at the first start of a node). */
  private disarmExit: (() => void) | undefined;

  private constructor(
    readonly state: ClusterState,
    private readonly killOnExit: boolean,
    network?: ClusterNetwork,
  ) {
    this.network = network ?? (state.network ? ClusterNetwork.attach(state.network) : undefined);
  }

  get dir(): string {
    return this.state.dir;
  }

  get version(): string {
    return this.state.version;
  }

  get nodes(): readonly NodeState[] {
    return this.state.nodes;
  }

  get brokers(): string[] {
    return this.state.nodes.map((n) => `${n.host ?? '127.0.0.1'}:${n.brokerPort}`);
  }

  get bootstrapServers(): string {
    return this.brokers.join(',');
  }

  node(id: number): NodeState {
    const n = this.state.nodes.find((x) => x.id === id);
    if (!n) throw new EosError(ErrorCodes.USAGE, `no node ${id} in this cluster (nodes: ${this.state.nodes.map((x) => x.id).join(', ')})`);
    return n;
  }

  static async start(opts: ClusterOptions = {}): Promise<LocalCluster> {
    const count = opts.nodes ?? 3;
    const version = opts.version ?? process.env.EOSWATCH_KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION;
    const libs = await ensureKafka(version);
    const dir = resolve(opts.dir ?? (await mkdtemp(join(tmpdir(), 'eoswatch-kafka-'))));
    if (existsSync(join(dir, STATE_FILE))) {
      const prev = await LocalCluster.load(dir);
      if (prev.state.nodes.some(isOurProcess)) {
        throw new EosError(ErrorCodes.HARNESS_FAILED, `a cluster is already running in ${dir} (${prev.bootstrapServers}); stop it first with 'down'`);
      }
    }
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const securityOpts = normaliseSecurity(opts.security);
    const network = opts.network ? await ClusterNetwork.create() : undefined;
    const nodes: NodeState[] = [];
    for (let i = 0; i < count; i++) {
      const id = i + 1;
      const ndir = join(dir, `node-${id}`);
      await mkdir(ndir, { recursive: true });
      // A node of a networked cluster has an address of its own: the usual ports are free there.
      const host = network ? (await network.endpoint(`n${id}`)).addr : undefined;
      nodes.push({
        id,
        brokerPort: host ? 9092 : opts.basePort ? opts.basePort + 2 * i : await freePort(),
        controllerPort: host ? 9093 : opts.basePort ? opts.basePort + 2 * i + 1 : await freePort(),
        dir: ndir,
        propsFile: join(ndir, 'server.properties'),
        logFile: join(ndir, 'server.log'),
        pid: null,
        ...(host ? { host } : {}),
      });
    }
    const state: ClusterState = {
      version,
      clusterId: newClusterId(),
      libs,
      dir,
      heap: opts.heap ?? '512m',
      overrides: opts.overrides ?? {},
      nodes,
      ...(network ? { network: network.state } : {}),
    };
    const cluster = new LocalCluster(state, opts.killOnExit ?? true, network);
    try {
      if (securityOpts.mode !== 'plaintext') state.security = await createSecurity(dir, securityOpts, nodes.map((n) => n.host ?? '127.0.0.1'));
      const log = loggingConfig(version);
      await writeFile(join(dir, log.file), log.text);
      // Mode 0600: a secured node's file holds its key and the JAAS passwords.
      for (const n of nodes) await writeFile(n.propsFile, nodeProperties(state, n, state.security ? await nodePem(state.security, n.id) : undefined), { mode: 0o600 });
      // Each node's storage is its own: formatted side by side.
      const formatted = await Promise.allSettled(nodes.map((n) => cluster.format(n)));
      const failed = formatted.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      // All nodes at once: a broker blocks until the controller quorum is up.
      for (const n of nodes) cluster.spawnNode(n);
      await cluster.save();
      await cluster.waitReady(nodes.map((n) => n.id), opts.startTimeoutMs ?? 120_000);
    } catch (err) {
      // The error names what failed (with the first errors of the node's log); a directory the
      // caller chose keeps the logs, a temporary one goes.
      // A failed clean-up must not hide why the start failed: both are told.
      await cluster.down({ keepData: opts.dir !== undefined }).catch((downErr: unknown) => {
        throw new EosError(ErrorCodes.HARNESS_FAILED, `${(err as Error).message}\n(and then the clean-up failed: ${(downErr as Error).message})`, { cause: err });
      });
      throw err;
    }
    return cluster;
  }

  /** Attach to a cluster started by another process (the CLI). */
  static async load(dir: string, killOnExit = false): Promise<LocalCluster> {
    const file = join(resolve(dir), STATE_FILE);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw new EosError(ErrorCodes.HARNESS_FAILED, `no cluster state at ${file}: start one with 'up'`);
    }
    return new LocalCluster(JSON.parse(text) as ClusterState, killOnExit);
  }

  private async save(): Promise<void> {
    // Mode 0600: a secured cluster's state holds the generated passwords.
    await writeFile(join(this.state.dir, STATE_FILE), JSON.stringify(this.state, null, 2), { mode: 0o600 });
  }

  /** Reads the state file again (another process may have started or stopped a node); a missing file changes nothing. */
  refreshSync(): void {
    let recorded: ClusterState;
    try {
      recorded = JSON.parse(readFileSync(join(this.state.dir, STATE_FILE), 'utf8')) as ClusterState;
    } catch {
      return;
    }
    if (recorded.clusterId !== this.state.clusterId) return;
    mergeRecordedNodes(this.state.nodes, recorded.nodes);
  }

  private javaArgs(): string[] {
    const log = loggingConfig(this.state.version);
    return [
      `-Xms256m`,
      `-Xmx${this.state.heap}`,
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `${log.flag}${join(this.state.dir, log.file)}`,
      '-cp',
      `${this.state.libs}/*`,
    ];
  }

  private async format(n: NodeState): Promise<void> {
    try {
      await execFileP('java', [
        ...TOOL_JVM_FLAGS,
        ...this.javaArgs().filter((a) => a !== '-XX:+UseG1GC'),
        'kafka.tools.StorageTool',
        'format',
        '-t',
        this.state.clusterId,
        '-c',
        n.propsFile,
        ...(this.state.security ? scramFormatArgs(this.state.security) : []),
      ]);
    } catch (err) {
      // The command line holds the SCRAM passwords: only the tool's output is told, with any password masked.
      const e = err as { stdout?: string; stderr?: string };
      throw new EosError(ErrorCodes.HARNESS_FAILED, `formatting storage of node ${n.id} failed:\n${this.mask(`${e.stdout ?? ''}${e.stderr ?? ''}`)}`);
    }
  }

  private spawnNode(n: NodeState): void {
    // Detached (a process group of its own): a node of a cluster the CLI's `up` started outlives it.
    // Killed at exit by the cluster's hook (which records it), not one of its own.
    TrackedProcess.spawn('java', [...this.javaArgs(), 'kafka.Kafka', n.propsFile], {
      name: `node ${n.id}`,
      needle: n.propsFile,
      record: n,
      logFile: n.logFile,
      detached: true,
      atExit: this.killOnExit ? 'owner' : 'outlive',
      ...(this.network ? { wrap: (cmd: string, args: string[]) => this.network!.wrap(`n${n.id}`, cmd, args) } : {}),
    });
    if (n.pid === null) throw new EosError(ErrorCodes.HARNESS_FAILED, `could not start java for node ${n.id}`);
    if (this.killOnExit) this.disarmExit ??= atExit(() => this.killAllSync({ record: true }));
  }

  /** What the node's recorded process is now, checked against its recorded identity (the state file is read first). */
  status(id: number): NodeStatus {
    this.refreshSync();
    return nodeProcess(this.node(id)).status();
  }

  /** A secured cluster's CA, users and generated passwords (for the harness; never print them); undefined for plaintext. */
  get security(): SecurityState | undefined {
    return this.state.security;
  }

  /** Any generated password in text replaced by '***'. */
  mask(text: string): string {
    let out = text;
    for (const p of Object.values(this.state.security?.passwords ?? {})) out = out.split(p).join('***');
    return out;
  }

  /** A kafkajs client of this cluster as a user (the admin super user by default) with its TLS and SASL options. */
  async kafka(id: ClientIdentity = {}, opts: { clientId?: string; retry?: { retries: number; initialRetryTime?: number }; connectionTimeout?: number; requestTimeout?: number } = {}): Promise<Kafka> {
    return new Kafka({
      clientId: opts.clientId ?? 'eoswatch-harness',
      brokers: this.brokers,
      logLevel: logLevel.NOTHING,
      connectionTimeout: opts.connectionTimeout ?? 5000,
      requestTimeout: opts.requestTimeout ?? 10_000,
      retry: opts.retry ?? { retries: 10, initialRetryTime: 200 },
      ...(await kafkajsSecurity(this.state.security, id)),
    });
  }

  /** The `kafka:` section of an eoswatch config connecting as a user of this cluster (file paths, as an operator writes them). */
  eoswatchKafka(id: ClientIdentity = {}): Record<string, unknown> {
    return eoswatchKafkaSection(this.state.security, this.brokers, id);
  }

  private async admin() {
    // A TLS handshake and SASL exchange take longer than a plaintext connect on a loaded machine.
    const secured = this.state.security !== undefined;
    return (await this.kafka({}, { retry: { retries: 0 }, connectionTimeout: secured ? 5000 : 2000, requestTimeout: secured ? 10_000 : 5000 })).admin();
  }

  /** Waits until the admin client sees every listed node, failing early with the broker log tail if one dies. */
  async waitReady(ids: number[], timeoutMs = 120_000): Promise<void> {
    let lastErr = '';
    // A node that exits during start-up ends the wait at once (the probe answers with it).
    const dead = await pollUntil(
      'the Kafka nodes to be ready',
      async () => {
        const gone = ids.map((id) => this.node(id)).find((n) => !isOurProcess(n));
        if (gone) return gone;
        const admin = await this.admin();
        try {
          await admin.connect();
          const { brokers } = await admin.describeCluster();
          const seen = new Set(brokers.map((b) => b.nodeId));
          if (ids.every((id) => seen.has(id))) return 'ready';
          lastErr = `admin sees nodes [${[...seen].join(', ')}]`;
        } catch (err) {
          lastErr = (err as Error).message;
        } finally {
          await admin.disconnect().catch(() => undefined);
        }
        return undefined;
      },
      { timeoutMs, intervalMs: 500 },
    ).catch((err: unknown) => {
      if (!(err instanceof PollTimeoutError)) throw err;
      const tails = ids.map((id) => `--- node ${id}:\n${explainLog(this.node(id).logFile)}`).join('\n');
      throw new EosError(ErrorCodes.HARNESS_FAILED, `Kafka cluster not ready after ${timeoutMs} ms (last: ${lastErr}).\n${tails}`);
    });
    if (typeof dead === 'object') throw new EosError(ErrorCodes.HARNESS_FAILED, `Kafka node ${dead.id} exited during start-up.\n${explainLog(dead.logFile)}`);
  }

  /** Waits until the controller has fenced a dead node, so metadata no longer routes to it. */
  async waitFenced(id: number, timeoutMs = 60_000): Promise<void> {
    await pollUntil(
      `node ${id} to be fenced`,
      async () => {
        const admin = await this.admin();
        try {
          await admin.connect();
          const { brokers } = await admin.describeCluster();
          return !brokers.some((b) => b.nodeId === id);
        } catch {
          return false; // a live node will answer on the next try
        } finally {
          await admin.disconnect().catch(() => undefined);
        }
      },
      { timeoutMs, intervalMs: 500 },
    ).catch((err: unknown) => {
      if (!(err instanceof PollTimeoutError)) throw err;
      throw new EosError(ErrorCodes.HARNESS_FAILED, `node ${id} still visible to the admin client after ${timeoutMs} ms`);
    });
  }

  /** SIGKILL: the node dies without any shutdown. */
  async kill(id: number): Promise<void> {
    this.refreshSync();
    await nodeProcess(this.node(id)).end(0);
    await this.save();
  }

  /** SIGTERM: controlled shutdown; SIGKILL if it has not exited after timeoutMs. */
  async stop(id: number, timeoutMs = 30_000): Promise<void> {
    this.refreshSync();
    await nodeProcess(this.node(id)).end(timeoutMs);
    await this.save();
  }

  /** SIGSTOP: the node freezes (no heartbeats, no replies) until resumed. Resolves once it is stopped. */
  async pause(id: number): Promise<void> {
    this.refreshSync();
    const p = nodeProcess(this.node(id));
    if (!p.signal('SIGSTOP')) throw new EosError(ErrorCodes.HARNESS_FAILED, `node ${id} is not running`);
    await p.waitPaused(true);
  }

  /** SIGCONT: a paused node runs again. */
  async resume(id: number): Promise<void> {
    this.refreshSync();
    const p = nodeProcess(this.node(id));
    if (!p.signal('SIGCONT')) throw new EosError(ErrorCodes.HARNESS_FAILED, `node ${id} is not running`);
    await p.waitPaused(false);
  }

  /** Starts a stopped node (after kill or stop) and waits until the cluster sees it again. */
  async start(id: number, timeoutMs = 120_000): Promise<void> {
    this.refreshSync();
    const n = this.node(id);
    if (isOurProcess(n)) throw new EosError(ErrorCodes.HARNESS_FAILED, `node ${id} is already running (pid ${n.pid})`);
    this.spawnNode(n);
    await this.save();
    await this.waitReady([id], timeoutMs);
  }

  async restart(id: number, timeoutMs = 120_000): Promise<void> {
    await this.stop(id);
    await this.start(id, timeoutMs);
  }

  /** Leader of the transaction coordinator partition for a transactional id is found by the caller; this maps node ids to pids. */
  pids(): Record<number, number | null> {
    this.refreshSync();
    return Object.fromEntries(this.state.nodes.map((n) => [n.id, isOurProcess(n) ? n.pid : null]));
  }

  /**
   * SIGKILL every node the state file names (read first: a node may have been started by another
   * process), each checked by identity. `record`: also write the state file (the exit hook, which
   * cannot wait for the nodes to die, records them as stopped so `status` tells the truth).
   */
  killAllSync(opts: { record?: boolean } = {}): void {
    this.refreshSync();
    killAllSync(this.state.nodes.map(nodeProcess), opts.record ? { file: join(this.state.dir, STATE_FILE), state: this.state } : undefined);
  }

  /** Processes still running that name this cluster's node files (ours or not): none may be left after down. */
  survivors(): { pid: number; cmdline: string }[] {
    return processesReferencing(this.state.nodes.map((n) => n.propsFile)).filter((p) => !/kafka\.tools\.StorageTool/.test(p.cmdline));
  }

  /**
   * Kills every node of this cluster (those the state file names, by identity) and, unless
   * keepData, removes its directory. Throws naming any process of the cluster still running, and
   * then keeps the directory and the state file.
   */
  async down(opts: { keepData?: boolean } = {}): Promise<void> {
    this.killAllSync();
    await Promise.all(this.state.nodes.map((n) => nodeProcess(n).waitExit(10_000)));
    const alive = this.state.nodes.filter(isOurProcess);
    // The network goes either way: a namespace holding a surviving process lives on until it
    // dies, and its record would otherwise wait for the next network's sweep.
    if (alive.length) await this.network?.remove().catch(() => undefined);
    if (alive.length) throw new EosError(ErrorCodes.HARNESS_FAILED, `nodes ${alive.map((n) => `${n.id} (pid ${n.pid})`).join(', ')} did not exit after SIGKILL; cluster directory ${this.state.dir} kept`);
    for (const n of this.state.nodes) {
      n.pid = null;
      n.startTime = null;
    }
    this.disarmExit?.();
    this.disarmExit = undefined;
    await this.network?.remove();
    const left = this.survivors();
    if (left.length) {
      await this.save();
      throw new EosError(ErrorCodes.HARNESS_FAILED, `cluster in ${this.state.dir}: its recorded nodes are stopped, but ${left.length === 1 ? 'a process' : 'processes'} naming its files ${left.length === 1 ? 'is' : 'are'} still running and ${left.length === 1 ? 'was' : 'were'} not started by this cluster's record: ${describeSurvivors(left)}; directory kept, stop ${left.length === 1 ? 'it' : 'them'} by pid`);
    }
    if (opts.keepData) await this.save();
    else await rm(this.state.dir, { recursive: true, force: true });
  }
}
