// `npm run streams -- <command>`: instances of the seed's Kafka Streams app (streams/app) for
// people and tests. `start` leaves the instances running (detached) until `stop`; every command
// acts on the instances recorded in the run directory's state file. Bad options exit 2.
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { ensureTopics } from '../kafka/admin.js';
import { StreamsRun, sameApp, type StreamsAppOptions } from './streams-app.js';

const HELP = `Usage: npm run streams -- <command> [options]

Commands:
  start            start instances of the app (the first start of a run needs the app options
                   below and creates missing topics); --instance N starts instance N again
                   (keeping its state directory) or as a new one; --instances K starts K new ones;
                   waits until each is RUNNING (--no-wait: does not)
  stop             SIGTERM (KafkaStreams.close) every instance, or only --instance N; SIGKILL after
                   --grace-ms (40000); stopping all fails naming any process left that names the
                   run directory; --remove: also delete the run directory (state, logs)
  kill --instance N     SIGKILL instance N
  pause --instance N    SIGSTOP instance N        resume --instance N   SIGCONT instance N
  status           each instance: running | paused | stopped, pid, last Streams state, log

App options (first start):
  --bootstrap HOST:PORT[,…]  --application-id ID  --input TOPIC  --output TOPIC
  [--threads N] [--stateful] [--commit-interval-ms MS] [--set key=value ...] [--properties FILE]
  [--partitions N (topics created, default 3)] [--log-level error|warn|info|debug]

Options:
  --dir DIR        run directory (default .eoswatch/streams); streams.json, logs and state dirs live there
`;

export class UsageError extends Error {}

function positiveInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag}: expected a positive integer, found "${v}"`);
  return n;
}

/** The key=value pairs of a repeatable option (--set). */
function keyValues(list: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list ?? []) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new UsageError(`${flag}: expected key=value, found "${kv}"`);
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

export async function streamsCli(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        dir: { type: 'string', default: '.eoswatch/streams' },
        instance: { type: 'string' },
        instances: { type: 'string' },
        bootstrap: { type: 'string' },
        'application-id': { type: 'string' },
        input: { type: 'string' },
        output: { type: 'string' },
        threads: { type: 'string' },
        stateful: { type: 'boolean' },
        'commit-interval-ms': { type: 'string' },
        set: { type: 'string', multiple: true },
        properties: { type: 'string' },
        partitions: { type: 'string', default: '3' },
        'log-level': { type: 'string' },
        'no-wait': { type: 'boolean' },
        'grace-ms': { type: 'string' },
        remove: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const [cmd, extra] = positionals;
  if (values.help || !cmd) {
    process.stdout.write(HELP);
    return cmd || values.help ? 0 : 2;
  }
  if (extra !== undefined) throw new UsageError(`${cmd}: unexpected argument "${extra}" (instances are named with --instance N)`);
  const dir = values.dir!;
  const instance = positiveInt(values.instance, '--instance');
  const needInstance = (): number => {
    if (instance === undefined) throw new UsageError(`${cmd} needs --instance N`);
    return instance;
  };
  const line = (r: StreamsRun, n: number) => {
    const i = r.instance(n);
    const st = r.status(n);
    const pid = st !== 'stopped' ? String(i.pid) : i.pid !== null ? `- (recorded pid ${i.pid} is gone)` : '-';
    const streams = st !== 'stopped' ? (r.streamsStates(n).at(-1) ?? 'starting') : '-';
    return `instance ${n}: ${st.padEnd(7)} pid ${pid}  streams ${streams}  log ${i.logFile}\n`;
  };
  switch (cmd) {
    case 'start': {
      const count = positiveInt(values.instances, '--instances');
      if (count !== undefined && instance !== undefined) throw new UsageError('start: --instance and --instances exclude each other');
      const logLevelOpt = values['log-level'];
      if (logLevelOpt !== undefined && !['error', 'warn', 'info', 'debug'].includes(logLevelOpt)) throw new UsageError(`--log-level: expected error, warn, info or debug, found "${logLevelOpt}"`);
      const given = values.bootstrap ?? values['application-id'] ?? values.input ?? values.output;
      let r: StreamsRun;
      if (given === undefined) {
        r = await StreamsRun.load(dir);
      } else {
        const missing = (['bootstrap', 'application-id', 'input', 'output'] as const).filter((k) => !values[k]);
        if (missing.length) throw new UsageError(`start: missing ${missing.map((k) => `--${k}`).join(', ')} (the app options go together)`);
        const props = keyValues(values.set, '--set');
        const app: StreamsAppOptions = {
          bootstrap: values.bootstrap!,
          applicationId: values['application-id']!,
          input: values.input!,
          output: values.output!,
          threads: positiveInt(values.threads, '--threads'),
          stateful: values.stateful ?? false,
          commitIntervalMs: positiveInt(values['commit-interval-ms'], '--commit-interval-ms'),
          properties: props,
          logLevel: logLevelOpt as StreamsAppOptions['logLevel'],
        };
        if (values.properties) {
          const { readFile } = await import('node:fs/promises');
          const text = await readFile(values.properties, 'utf8').catch((err: Error) => {
            throw new UsageError(`--properties: cannot read ${values.properties}: ${err.message}`);
          });
          // --set wins over the file.
          app.properties = { ...parseProperties(text, values.properties), ...props };
        }
        const existing = await StreamsRun.load(dir).catch(() => null);
        const running = existing?.state.instances.some((i) => existing.status(i.n) !== 'stopped');
        const diff = existing ? sameApp(existing.state.app, app) : 'no run';
        if (existing && running && diff) throw new UsageError(`start: ${dir} already runs application ${existing.state.app.applicationId} (${diff}); stop it first`);
        if (existing && !diff) {
          // The same application again: its instances keep their state directories (a stateful app its process ids).
          r = existing;
        } else {
          const partitions = positiveInt(values.partitions, '--partitions')!;
          const admin = new Kafka({ clientId: 'eoswatch-streams-cli', brokers: app.bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
          await admin.connect();
          try {
            await ensureTopics(admin, [app.input, app.output].map((topic) => ({ topic, numPartitions: partitions })));
          } finally {
            await admin.disconnect();
          }
          r = await StreamsRun.create(app, { dir, killOnExit: false });
        }
      }
      const wait = !values['no-wait'];
      const started: number[] = [];
      if (instance !== undefined) started.push((await r.start(instance, { wait })).n);
      else for (let k = 0; k < (count ?? 1); k++) started.push((await r.start(undefined, { wait })).n);
      for (const n of started) process.stdout.write(line(r, n));
      return 0;
    }
    case 'stop': {
      const r = await StreamsRun.load(dir);
      const grace = values['grace-ms'] === undefined ? 40_000 : Number(values['grace-ms']);
      if (!Number.isInteger(grace) || grace < 0) throw new UsageError(`--grace-ms: expected a non-negative integer, found "${values['grace-ms']}"`);
      if (instance !== undefined) {
        if (values.remove) throw new UsageError('stop: --remove removes the whole run; it does not go with --instance');
        await r.stop(instance, grace);
        process.stdout.write(line(r, instance));
        return 0;
      }
      await r.stopAll({ graceMs: grace, remove: values.remove });
      process.stdout.write(`every instance in ${r.dir} stopped${values.remove ? ' and the run directory removed' : ''}\n`);
      return 0;
    }
    case 'kill':
    case 'pause':
    case 'resume': {
      const n = needInstance();
      const r = await StreamsRun.load(dir);
      if (cmd === 'kill') await r.kill(n);
      else if (cmd === 'pause') await r.pause(n);
      else await r.resume(n);
      process.stdout.write(line(r, n));
      return 0;
    }
    case 'status': {
      const r = await StreamsRun.load(dir);
      const a = r.state.app;
      process.stdout.write(`application.id ${a.applicationId}: ${a.input} -> ${a.output}, bootstrap ${a.bootstrap}, ${a.threads ?? 1} thread(s), ${a.stateful ? 'stateful' : 'stateless'}\n`);
      const ns = instance !== undefined ? [instance] : r.state.instances.map((i) => i.n);
      for (const n of ns) process.stdout.write(line(r, n));
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${cmd}" (expected start, stop, kill, pause, resume or status)`);
  }
}

/** A java.util.Properties file's simple form: key=value or key: value lines, # and ! comments. */
export function parseProperties(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (!l || l.startsWith('#') || l.startsWith('!')) return;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(l);
    if (!m) throw new UsageError(`${file}:${i + 1}: expected key=value, found "${l}"`);
    out[m[1]!] = m[2]!;
  });
  return out;
}

export async function streamsCliMain(argv: string[]): Promise<number> {
  try {
    return await streamsCli(argv);
  } catch (err) {
    const usage = err instanceof UsageError;
    process.stderr.write(`streams: ${(err as Error).message}\n${usage ? 'Run npm run streams -- --help for the usage.\n' : ''}`);
    return usage ? 2 : 1;
  }
}

if (process.argv[1] && /streams-cli\.[tj]s$/.test(process.argv[1])) {
  streamsCliMain(process.argv.slice(2)).then((code) => process.exit(code));
}
