// `npm run streams -- <command>`: instances of the seed's Kafka Streams app (streams/app) for
// people and tests. `start` leaves the instances running (detached) until `stop`; every command
// acts on the instances recorded in the run directory's state file. Options and errors as in
// harness/localcluster/cli.ts (npm run kafka): bad options exit 2.
import { Kafka, logLevel } from 'kafkajs';
import { ensureTopics } from '../../src/kafka/admin.js';
import { choiceOption, commandOf, keyValueOption, numberOption, parse, positiveIntegerOption, usage } from '../../src/commands/options.js';
import { EosError, ErrorCodes } from '../../src/errors.js';
import { runCliMain } from './cli-main.js';
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

const OPTIONS = {
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
  partitions: { type: 'string' },
  'log-level': { type: 'string' },
  'no-wait': { type: 'boolean' },
  'grace-ms': { type: 'string' },
  remove: { type: 'boolean' },
} as const;

const COMMANDS = ['start', 'stop', 'kill', 'pause', 'resume', 'status'] as const;

export async function streamsCli(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, true);
  const cmd = commandOf(values, positionals, COMMANDS, HELP);
  if (typeof cmd === 'number') return cmd;
  const extra = positionals[1];
  if (extra !== undefined) throw usage(`${cmd}: unexpected argument "${extra}" (instances are named with --instance N)`);
  const dir = values.dir;
  const instance = positiveIntegerOption('instance', values.instance, undefined);
  const needInstance = (): number => {
    if (instance === undefined) throw usage(`${cmd} needs --instance N`);
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
      const count = positiveIntegerOption('instances', values.instances, undefined);
      if (count !== undefined && instance !== undefined) throw usage('start: --instance and --instances exclude each other');
      const partitions = positiveIntegerOption('partitions', values.partitions, 3);
      const logLevelOpt = values['log-level'] === undefined ? undefined : choiceOption('log-level', values['log-level'], ['error', 'warn', 'info', 'debug']);
      const given = values.bootstrap ?? values['application-id'] ?? values.input ?? values.output;
      let r: StreamsRun;
      if (given === undefined) {
        r = await StreamsRun.load(dir);
      } else {
        const missing = (['bootstrap', 'application-id', 'input', 'output'] as const).filter((k) => !values[k]);
        if (missing.length) throw usage(`start: missing ${missing.map((k) => `--${k}`).join(', ')} (the app options go together)`);
        const props = keyValueOption('set', values.set);
        const app: StreamsAppOptions = {
          bootstrap: values.bootstrap!,
          applicationId: values['application-id']!,
          input: values.input!,
          output: values.output!,
          threads: positiveIntegerOption('threads', values.threads, undefined),
          stateful: values.stateful ?? false,
          commitIntervalMs: positiveIntegerOption('commit-interval-ms', values['commit-interval-ms'], undefined),
          properties: props,
          logLevel: logLevelOpt,
        };
        if (values.properties) {
          const { readFile } = await import('node:fs/promises');
          const text = await readFile(values.properties, 'utf8').catch((err: Error) => {
            throw new EosError(ErrorCodes.CONFIG_NOT_FOUND, `--properties: cannot read ${values.properties}: ${err.message}`, { cause: err });
          });
          // --set wins over the file.
          app.properties = { ...parseProperties(text, values.properties), ...props };
        }
        const existing = await StreamsRun.load(dir).catch(() => null);
        const running = existing?.state.instances.some((i) => existing.status(i.n) !== 'stopped');
        const diff = existing ? sameApp(existing.state.app, app) : 'no run';
        if (existing && running && diff) throw usage(`start: ${dir} already runs application ${existing.state.app.applicationId} (${diff}); stop it first`);
        if (existing && !diff) {
          // The same application again: its instances keep their state directories (a stateful app its process ids).
          r = existing;
        } else {
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
      const grace = numberOption('grace-ms', values['grace-ms'], 40_000, (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer');
      if (instance !== undefined && values.remove) throw usage('stop: --remove removes the whole run; it does not go with --instance');
      const r = await StreamsRun.load(dir);
      if (instance !== undefined) {
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
  }
}

/** A java.util.Properties file's simple form: key=value or key: value lines, # and ! comments. */
export function parseProperties(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (!l || l.startsWith('#') || l.startsWith('!')) return;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(l);
    if (!m) throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}:${i + 1}: expected name=value, found "${l}"`);
    out[m[1]!] = m[2]!;
  });
  return out;
}

runCliMain(import.meta.url, 'streams', streamsCli);
