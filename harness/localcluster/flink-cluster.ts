// A real standalone Flink session cluster on loopback, next to the Kafka one (cluster.ts): one
// JobManager and N TaskManagers, each its own `java -cp 'lib/*'` process started from the jars
// Maven fetched (flink-dist.ts), a tracked process (pid and start time, src/runtime/process.ts)
// recorded in a state file, so
// the CLI can kill or start one and nothing but the processes we started is ever signalled. As
// for the Kafka cluster, the state file is the shared truth: read before every action, written
// after every start and stop, and what the exit hook and `down` kill. Jobs go in through the REST API
// (flink-runtime-web serves /jars/upload and /jars/<id>/run).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { explainLog, freePort, TOOL_JVM_FLAGS } from './cluster.js';
import { describeSurvivors, processesReferencing } from '../../src/runtime/proc.js';
import { atExit, killAllSync, TrackedProcess } from '../../src/runtime/process.js';
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';
import { ensureFlink, ensureFlinkJob, resolveFlinkLine } from './flink-dist.js';
import { netnsWrap, type ClusterNetwork } from './network.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

const execFileP = promisify(execFile);

/** What flink-dist's config.yaml sets in env.java.opts.all for Java 17. */
export const JAVA17_OPENS = [
  '--add-exports=java.base/sun.net.util=ALL-UNNAMED',
  '--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED',
  '--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED',
  ...['java.lang', 'java.net', 'java.io', 'java.nio', 'sun.nio.ch', 'java.lang.reflect', 'java.text', 'java.time', 'java.util', 'java.util.concurrent', 'java.util.concurrent.atomic', 'java.util.concurrent.locks'].map(
    (p) => `--add-opens=java.base/${p}=ALL-UNNAMED`,
  ),
];

export interface FlinkClusterOptions {
  version?: string;
  taskManagers?: number;
  slots?: number;
  dir?: string;
  /** Extra Flink configuration applied after the defaults. */
  overrides?: Record<string, string>;
  startTimeoutMs?: number;
  killOnExit?: boolean;
  /**
   * The networked Kafka cluster's network (./network.ts): the JobManager (endpoint fjm) and each
   * TaskManager (ft<n>) in a namespace of its own on the same bridge as the brokers, so that chaos
   * can cut the JobManager from its TaskManagers, or a TaskManager from everything.
   */
  network?: ClusterNetwork;
}

export interface FlinkProcess {
  /** 'jobmanager' or 'taskmanager-<n>' */
  name: string;
  logFile: string;
  pid: number | null;
  /** Start time of pid (/proc/<pid>/stat field 22): with the pid, the identity of the process we started. */
  startTime?: number | null;
  /** In a networked cluster: the process's endpoint (role, namespace and address on the bridge). */
  endpoint?: { role: string; ns: string; addr: string };
}

export interface FlinkClusterState {
  version: string;
  lib: string;
  dir: string;
  confDir: string;
  restPort: number;
  rpcPort: number;
  jobmanager: FlinkProcess;
  taskmanagers: FlinkProcess[];
}

export interface SubmitOptions {
  bootstrap: string;
  sourceTopic: string;
  sinkTopic: string;
  /** More job arguments (see flink/job IncrementJob): checkpoint-interval-ms, tolerable-failed, unaligned… */
  args?: Record<string, string | number | boolean>;
  parallelism?: number;
  /** Restore from this checkpoint or savepoint path. */
  fromPath?: string;
}

const STATE_FILE = 'flink-cluster.json';

/** The JobManager's address: 127.0.0.1, or its own in a networked cluster. */
function jmHost(state: FlinkClusterState): string {
  return state.jobmanager.endpoint?.addr ?? '127.0.0.1';
}

export function flinkConfig(state: FlinkClusterState, slots: number, overrides: Record<string, string>): string {
  const jm = jmHost(state);
  // In its own namespace the JobManager binds every address there is (its own and loopback, which
  // the REST handlers' embedded client uses for the blob server): nothing outside the namespace.
  const bind = state.jobmanager.endpoint ? '0.0.0.0' : jm;
  const conf: Record<string, string> = {
    'jobmanager.rpc.address': jm,
    'jobmanager.rpc.port': String(state.rpcPort),
    'jobmanager.bind-host': bind,
    // A networked TaskManager gets its own address as a -D of its start (startTaskManager).
    'taskmanager.bind-host': '127.0.0.1',
    'taskmanager.host': '127.0.0.1',
    'rest.address': jm,
    'rest.bind-address': bind,
    'rest.port': String(state.restPort),
    'jobmanager.memory.process.size': '1g',
    'taskmanager.memory.process.size': '1536m',
    'taskmanager.numberOfTaskSlots': String(slots),
    'parallelism.default': '1',
    // A lost TaskManager is noticed in seconds, not the default 50 s.
    'heartbeat.interval': '2000',
    'heartbeat.timeout': '10000',
    'state.checkpoints.dir': `file://${join(state.dir, 'checkpoints')}`,
    'state.savepoints.dir': `file://${join(state.dir, 'savepoints')}`,
    'state.checkpoints.num-retained': '3',
    'io.tmp.dirs': join(state.dir, 'tmp'),
    'web.tmpdir': join(state.dir, 'web'),
    'web.upload.dir': join(state.dir, 'uploads'),
    'blob.storage.directory': join(state.dir, 'blobs'),
    ...overrides,
  };
  return Object.entries(conf)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join('\n')
    .concat('\n');
}

const LOG4J2 = [
  'rootLogger.level = INFO',
  'rootLogger.appenderRef.out.ref = OUT',
  'appender.out.type = Console',
  'appender.out.name = OUT',
  'appender.out.layout.type = PatternLayout',
  'appender.out.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n',
  'logger.kafka.name = org.apache.kafka',
  'logger.kafka.level = WARN',
  '',
].join('\n');

/** The JVM flags and dynamic -D properties BashJavaUtils derives from the memory keys, as flink-dist's scripts do. */
export function parseBashJavaUtils(output: string): { jvm: string[]; dynamic: string[] } {
  const lines = output
    .split('\n')
    .filter((l) => l.startsWith('BASH_JAVA_UTILS_EXEC_RESULT:'))
    .map((l) => l.slice('BASH_JAVA_UTILS_EXEC_RESULT:'.length).trim());
  if (lines.length < 2) throw new EosError(ErrorCodes.HARNESS_FAILED, `BashJavaUtils printed no resource parameters:\n${output.split('\n').slice(-15).join('\n')}`);
  const split = (s: string) => s.split(/\s+/).filter(Boolean);
  return { jvm: split(lines[0] ?? ''), dynamic: split(lines[1] ?? '') };
}

/** A JobManager's or TaskManager's process: its record in the state file, ours only while its command line names the cluster's config dir. */
function flinkProcess(p: FlinkProcess, confDir: string): TrackedProcess {
  return new TrackedProcess(p, { name: p.name, needle: confDir });
}

/** True only when pid is alive, has the start time we recorded, and runs with this cluster's config dir. */
function isOurProcess(p: FlinkProcess, confDir: string): boolean {
  return flinkProcess(p, confDir).alive;
}

/**
 * Waits for `probe` to answer (every 500 ms), failing at once with `exited` when it names a process
 * that exited, and with `timedOut` at the deadline. Pure waiting: the probe does the reading.
 */
async function waitStarting<T>(what: string, probe: () => Promise<T | { exited: FlinkProcess } | undefined>, timeoutMs: number, timedOut: () => string): Promise<T> {
  const answer = await pollUntil(what, probe, { timeoutMs, intervalMs: 500 }).catch((err: unknown) => {
    if (err instanceof PollTimeoutError) throw new EosError(ErrorCodes.HARNESS_FAILED, timedOut(), { cause: err });
    throw err;
  });
  if (answer && typeof answer === 'object' && 'exited' in answer) throw new EosError(ErrorCodes.HARNESS_FAILED, `${answer.exited.name === 'jobmanager' ? 'the JobManager' : answer.exited.name} exited during start-up.\n${explainLog(answer.exited.logFile)}`);
  return answer as T;
}

/** The state file's process fields (pid, start time) merged into ours: another process (the CLI) may have changed them. Pure. */
export function mergeRecordedFlink(ours: FlinkClusterState, recorded: FlinkClusterState): void {
  const take = (o: FlinkProcess, r: FlinkProcess | undefined) => {
    if (!r || r.name !== o.name) return;
    o.pid = r.pid;
    o.startTime = r.startTime ?? null;
  };
  take(ours.jobmanager, recorded.jobmanager);
  ours.taskmanagers.forEach((tm, i) => take(tm, recorded.taskmanagers[i]));
}

export class LocalFlinkCluster {
  /** Removes the exit hook that kills what the state file names (armed at the first start of a process). */
  private disarmExit: (() => void) | undefined;

  private constructor(
    readonly state: FlinkClusterState,
    private readonly killOnExit: boolean,
  ) {}

  get restUrl(): string {
    return `http://${jmHost(this.state)}:${this.state.restPort}`;
  }

  /** The network endpoint (fjm, ft<n>) of a process of a networked cluster. */
  role(p: FlinkProcess): string {
    if (!p.endpoint) throw new EosError(ErrorCodes.HARNESS_FAILED, `the Flink cluster in ${this.state.dir} is not networked: ${p.name} has no endpoint of its own`);
    return p.endpoint.role;
  }

  get dir(): string {
    return this.state.dir;
  }

  static async start(opts: FlinkClusterOptions = {}): Promise<LocalFlinkCluster> {
    const line = resolveFlinkLine(opts.version ?? process.env.EOSWATCH_FLINK_VERSION);
    const lib = await ensureFlink(line.version);
    const dir = resolve(opts.dir ?? (await mkdtemp(join(tmpdir(), 'eoswatch-flink-'))));
    if (existsSync(join(dir, STATE_FILE))) {
      const prev = await LocalFlinkCluster.load(dir);
      if ([prev.state.jobmanager, ...prev.state.taskmanagers].some((p) => isOurProcess(p, prev.state.confDir))) {
        throw new EosError(ErrorCodes.HARNESS_FAILED, `a Flink cluster is already running in ${dir} (${prev.restUrl}); stop it first with 'down'`);
      }
    }
    await rm(dir, { recursive: true, force: true });
    const confDir = join(dir, 'conf');
    await mkdir(confDir, { recursive: true });
    const tms = opts.taskManagers ?? 1;
    const state: FlinkClusterState = {
      version: line.version,
      lib,
      dir,
      confDir,
      restPort: await freePort(),
      rpcPort: await freePort(),
      jobmanager: { name: 'jobmanager', logFile: join(dir, 'jobmanager.log'), pid: null },
      taskmanagers: Array.from({ length: tms }, (_, i) => ({ name: `taskmanager-${i + 1}`, logFile: join(dir, `taskmanager-${i + 1}.log`), pid: null })),
    };
    if (opts.network) {
      const net = opts.network;
      const endpoint = async (role: string) => {
        const e = await net.endpoint(role);
        return { role, ns: e.ns, addr: e.addr };
      };
      // Each process has an address of its own: the ports chosen free on loopback are free there.
      state.jobmanager.endpoint = await endpoint('fjm');
      for (const [i, tm] of state.taskmanagers.entries()) tm.endpoint = await endpoint(`ft${i + 1}`);
    }
    await writeFile(join(confDir, 'config.yaml'), flinkConfig(state, opts.slots ?? 2, opts.overrides ?? {}));
    await writeFile(join(confDir, 'log4j2.properties'), LOG4J2);
    const cluster = new LocalFlinkCluster(state, opts.killOnExit ?? true);
    try {
      await cluster.startJobManager();
      for (let i = 1; i <= tms; i++) await cluster.startTaskManager(i, { wait: false });
      await cluster.waitSlots(tms * (opts.slots ?? 2), opts.startTimeoutMs ?? 120_000);
    } catch (err) {
      // A directory the caller chose keeps the logs; a temporary one goes.
      await cluster.down({ keepData: opts.dir !== undefined });
      throw err;
    }
    return cluster;
  }

  static async load(dir: string, killOnExit = false): Promise<LocalFlinkCluster> {
    const file = join(resolve(dir), STATE_FILE);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw new EosError(ErrorCodes.HARNESS_FAILED, `no Flink cluster state at ${file}: start one with 'up'`);
    }
    return new LocalFlinkCluster(JSON.parse(text) as FlinkClusterState, killOnExit);
  }

  private async save(): Promise<void> {
    await writeFile(join(this.state.dir, STATE_FILE), JSON.stringify(this.state, null, 2));
  }

  /** Reads the state file again (another process may have started or killed a process); a missing file changes nothing. */
  refreshSync(): void {
    let recorded: FlinkClusterState;
    try {
      recorded = JSON.parse(readFileSync(join(this.state.dir, STATE_FILE), 'utf8')) as FlinkClusterState;
    } catch {
      return;
    }
    if (recorded.confDir !== this.state.confDir || recorded.restPort !== this.state.restPort) return;
    mergeRecordedFlink(this.state, recorded);
  }

  private async resourceParams(kind: 'JM' | 'TM'): Promise<{ jvm: string[]; dynamic: string[] }> {
    const { stdout, stderr } = await execFileP('java', [...TOOL_JVM_FLAGS, '-cp', `${this.state.lib}/*`, 'org.apache.flink.runtime.util.bash.BashJavaUtils', `GET_${kind}_RESOURCE_PARAMS`, '--configDir', this.state.confDir], {
      maxBuffer: 8 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new EosError(ErrorCodes.HARNESS_FAILED, `BashJavaUtils GET_${kind}_RESOURCE_PARAMS failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    return parseBashJavaUtils(`${stdout}\n${stderr}`);
  }

  private spawnProcess(p: FlinkProcess, mainClass: string, params: { jvm: string[]; dynamic: string[] }, extra: string[]): void {
    const ns = p.endpoint?.ns;
    TrackedProcess.spawn(
      'java',
      [
        ...params.jvm,
        ...JAVA17_OPENS,
        '-XX:+UseG1GC',
        '-Djava.awt.headless=true',
        `-Dlog4j.configurationFile=${join(this.state.confDir, 'log4j2.properties')}`,
        '-cp',
        `${this.state.lib}/*`,
        mainClass,
        '--configDir',
        this.state.confDir,
        ...extra,
        ...params.dynamic,
      ],
      {
        name: p.name,
        needle: this.state.confDir,
        record: p,
        logFile: p.logFile,
        // Detached: the processes of a cluster the CLI's `up` started outlive it; else the cluster's exit hook kills (and records) them.
        detached: true,
        atExit: this.killOnExit ? 'owner' : 'outlive',
        // In a networked cluster the JVM runs in its endpoint's namespace; `ip netns exec` execs it, so the pid stays java's.
        ...(ns ? { wrap: netnsWrap(ns) } : {}),
      },
    );
    if (p.pid === null) throw new EosError(ErrorCodes.HARNESS_FAILED, `could not start java for ${p.name}`);
    if (this.killOnExit) this.disarmExit ??= atExit(() => this.killAllSync({ record: true }));
  }

  async startJobManager(timeoutMs = 120_000): Promise<void> {
    this.refreshSync();
    const jm = this.state.jobmanager;
    if (isOurProcess(jm, this.state.confDir)) throw new EosError(ErrorCodes.HARNESS_FAILED, `the JobManager is already running (pid ${jm.pid})`);
    this.spawnProcess(jm, 'org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint', await this.resourceParams('JM'), ['--executionMode', 'cluster']);
    await this.save();
    await this.waitRest(timeoutMs);
  }

  taskManager(n: number): FlinkProcess {
    const tm = this.state.taskmanagers[n - 1];
    if (!tm) throw new EosError(ErrorCodes.USAGE, `no TaskManager ${n} (there are ${this.state.taskmanagers.length})`);
    return tm;
  }

  async startTaskManager(n: number, opts: { wait?: boolean; timeoutMs?: number } = {}): Promise<void> {
    this.refreshSync();
    const tm = this.taskManager(n);
    if (isOurProcess(tm, this.state.confDir)) throw new EosError(ErrorCodes.HARNESS_FAILED, `TaskManager ${n} is already running (pid ${tm.pid})`);
    // A fresh resource id per start: the JobManager may still list the previous, dead one.
    const resourceId = `${tm.name}-${Date.now()}`;
    const params = await this.resourceParams('TM');
    const host = tm.endpoint ? ['-D', `taskmanager.host=${tm.endpoint.addr}`, '-D', 'taskmanager.bind-host=0.0.0.0'] : [];
    this.spawnProcess(tm, 'org.apache.flink.runtime.taskexecutor.TaskManagerRunner', { jvm: params.jvm, dynamic: [...params.dynamic, '-D', `taskmanager.resource-id=${resourceId}`, ...host] }, []);
    await this.save();
    if (opts.wait !== false) await this.waitTaskManager(tm, resourceId, opts.timeoutMs ?? 120_000);
  }

  /** What a recorded process is now, checked against its recorded identity (the state file is read first). */
  status(p: FlinkProcess): 'running' | 'paused' | 'stopped' {
    this.refreshSync();
    return flinkProcess(p, this.state.confDir).status();
  }

  /** A REST call; job submission (upload, run) on a loaded machine takes tens of seconds. */
  async rest<T>(path: string, init?: RequestInit, timeoutMs = 120_000): Promise<T> {
    const res = await fetch(`${this.restUrl}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (!res.ok) throw new EosError(ErrorCodes.FLINK_API_FAILED, `Flink REST ${init?.method ?? 'GET'} ${path}: HTTP ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async waitRest(timeoutMs: number): Promise<void> {
    const jm = this.state.jobmanager;
    let last = '';
    await waitStarting(
      'the Flink REST API',
      async () => {
        if (!isOurProcess(jm, this.state.confDir)) return { exited: jm };
        try {
          await this.rest('/overview', undefined, 10_000);
          return true;
        } catch (err) {
          last = (err as Error).message;
          return undefined;
        }
      },
      timeoutMs,
      () => `Flink REST not answering after ${timeoutMs} ms (last: ${last}).\n${explainLog(jm.logFile)}`,
    );
  }

  private async waitTaskManager(tm: FlinkProcess, resourceId: string, timeoutMs: number): Promise<void> {
    await waitStarting(
      `${tm.name} to register`,
      async () => {
        if (!isOurProcess(tm, this.state.confDir)) return { exited: tm };
        const list = await this.rest<{ taskmanagers: { id: string }[] }>('/taskmanagers', undefined, 10_000).catch(() => ({ taskmanagers: [] }));
        return list.taskmanagers.some((t) => t.id === resourceId) || undefined;
      },
      timeoutMs,
      () => `${tm.name} (resource id ${resourceId}) not registered with the JobManager after ${timeoutMs} ms`,
    );
  }

  private async waitSlots(slots: number, timeoutMs: number): Promise<void> {
    await waitStarting(
      `${slots} Flink slots`,
      async () => {
        const exited = this.state.taskmanagers.find((tm) => !isOurProcess(tm, this.state.confDir));
        if (exited) return { exited };
        const o = await this.rest<{ 'slots-total': number }>('/overview').catch(() => ({ 'slots-total': 0 }));
        return o['slots-total'] >= slots || undefined;
      },
      timeoutMs,
      () => `Flink cluster has fewer than ${slots} slots after ${timeoutMs} ms`,
    );
  }

  /** SIGKILL one process (the JobManager or TaskManager n). */
  async kill(p: FlinkProcess): Promise<void> {
    this.refreshSync();
    await flinkProcess(p, this.state.confDir).end(0);
    await this.save();
  }

  /** Uploads the seed's job (built for this cluster's Flink line) once and returns its jar id. */
  async uploadJob(): Promise<string> {
    const jarPath = await ensureFlinkJob(this.state.version);
    const form = new FormData();
    form.append('jarfile', new Blob([await readFile(jarPath)], { type: 'application/java-archive' }), basename(jarPath));
    const res = await this.rest<{ filename: string; status: string }>('/jars/upload', { method: 'POST', body: form });
    return basename(res.filename);
  }

  /** Submits the seed's job and returns its job id. */
  async submit(opts: SubmitOptions): Promise<string> {
    const jarId = await this.uploadJob();
    const args: Record<string, string | number | boolean> = {
      bootstrap: opts.bootstrap,
      'source-topic': opts.sourceTopic,
      'sink-topic': opts.sinkTopic,
      ...opts.args,
    };
    const programArgsList = Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]);
    const body: Record<string, unknown> = { entryClass: 'eoswatch.flink.IncrementJob', programArgsList };
    if (opts.parallelism) body.parallelism = opts.parallelism;
    if (opts.fromPath) body.savepointPath = opts.fromPath;
    const res = await this.rest<{ jobid: string }>(`/jars/${jarId}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.jobid;
  }

  async cancel(jobId: string): Promise<void> {
    await this.rest(`/jobs/${jobId}?mode=cancel`, { method: 'PATCH' });
  }

  /** Waits until the job is RUNNING with every task RUNNING (a RUNNING job whose tasks are only scheduled is not). */
  async waitJobRunning(jobId: string, timeoutMs = 120_000): Promise<void> {
    let last = '';
    const state = await pollUntil(
      `job ${jobId} running`,
      async () => {
        try {
          const j = await this.rest<{ state: string; vertices: { status: string }[] }>(`/jobs/${jobId}`, undefined, 10_000);
          last = `${j.state}, tasks ${j.vertices.map((v) => v.status).join(',')}`;
          if (j.state === 'RUNNING' && j.vertices.every((v) => v.status === 'RUNNING')) return 'RUNNING';
          // A job that ended will not run: the wait is over.
          if (['FAILED', 'CANCELED', 'FINISHED'].includes(j.state)) return j.state;
        } catch (err) {
          last = (err as Error).message;
        }
        return undefined;
      },
      { timeoutMs, intervalMs: 500 },
    ).catch((err: unknown) => {
      if (!(err instanceof PollTimeoutError)) throw err;
      throw new EosError(ErrorCodes.HARNESS_FAILED, `job ${jobId} not running after ${timeoutMs} ms (last: ${last})`);
    });
    if (state !== 'RUNNING') throw new EosError(ErrorCodes.HARNESS_FAILED, `job ${jobId} is ${state}`);
  }

  /** The newest retained checkpoint of a job on disk (for a resubmit after a JobManager loss without HA). */
  async latestRetainedCheckpoint(jobId: string): Promise<string | null> {
    const jobDir = join(this.state.dir, 'checkpoints', jobId);
    let entries: string[];
    try {
      entries = await readdir(jobDir);
    } catch {
      return null;
    }
    const done: { path: string; n: number }[] = [];
    for (const e of entries) {
      const m = /^chk-(\d+)$/.exec(e);
      if (m && (await stat(join(jobDir, e, '_metadata')).catch(() => null))) done.push({ path: join(jobDir, e), n: Number(m[1]) });
    }
    done.sort((a, b) => b.n - a.n);
    return done[0]?.path ?? null;
  }

  /**
   * SIGKILL every process the state file names (read first: a TaskManager may have been started
   * by another process), each checked by identity. `record`: also write the state file (the exit
   * hook), so `status` tells the truth afterwards.
   */
  killAllSync(opts: { record?: boolean } = {}): void {
    this.refreshSync();
    const confDir = this.state.confDir;
    killAllSync(
      [...this.state.taskmanagers, this.state.jobmanager].map((p) => flinkProcess(p, confDir)),
      opts.record ? { file: join(this.state.dir, STATE_FILE), state: this.state } : undefined,
    );
  }

  /** Long-running processes still naming this cluster's config dir (ours or not): none may be left after down. */
  survivors(): { pid: number; cmdline: string }[] {
    return processesReferencing([this.state.confDir]).filter((p) => !/BashJavaUtils/.test(p.cmdline));
  }

  /**
   * Kills every process of this cluster (those the state file names, by identity) and, unless
   * keepData, removes its directory. Throws naming any process of the cluster still running, and
   * then keeps the directory and the state file.
   */
  async down(opts: { keepData?: boolean } = {}): Promise<void> {
    this.killAllSync();
    const all = [this.state.jobmanager, ...this.state.taskmanagers];
    await Promise.all(all.map((p) => flinkProcess(p, this.state.confDir).waitExit(10_000)));
    const alive = all.filter((p) => isOurProcess(p, this.state.confDir));
    if (alive.length) throw new EosError(ErrorCodes.HARNESS_FAILED, `${alive.map((p) => `${p.name} (pid ${p.pid})`).join(', ')} did not exit after SIGKILL; directory ${this.state.dir} kept`);
    for (const p of all) {
      p.pid = null;
      p.startTime = null;
    }
    this.disarmExit?.();
    this.disarmExit = undefined;
    const left = this.survivors();
    if (left.length) {
      await this.save();
      throw new EosError(ErrorCodes.HARNESS_FAILED, `Flink cluster in ${this.state.dir}: its recorded processes are stopped, but ${left.length === 1 ? 'a process' : 'processes'} naming its config dir ${left.length === 1 ? 'is' : 'are'} still running and not in its record: ${describeSurvivors(left)}; directory kept, stop ${left.length === 1 ? 'it' : 'them'} by pid`);
    }
    if (opts.keepData) await this.save();
    else await rm(this.state.dir, { recursive: true, force: true });
  }
}
