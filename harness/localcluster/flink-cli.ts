// `npm run flink -- <command>`: the local Flink session cluster for people. `up` leaves the
// processes running (detached) until `down`; the other commands act on the processes recorded in
// the state file. Options and errors as in harness/localcluster/cli.ts (npm run kafka).
import { Kafka, logLevel } from 'kafkajs';
import { ensureTopics } from '../../src/kafka/admin.js';
import { commandOf, keyValueOption, numberArgument, parse, positiveIntegerOption, usage } from '../../src/commands/options.js';
import { LocalFlinkCluster } from './flink-cluster.js';
import { DEFAULT_FLINK_LINE, FLINK_LINES } from './flink-dist.js';
import { runCliMain } from './cli-main.js';

const HELP = `Usage: npm run flink -- <command> [options]

Commands:
  up [--flink-version V] [--taskmanagers N] [--set key=value ...]
                   start a standalone session cluster (default Flink ${FLINK_LINES[DEFAULT_FLINK_LINE]?.version}, 1 TaskManager)
  down [--keep]    kill the JobManager and every TaskManager (also one started by another process)
                   and remove the data (--keep: keep it); fails naming any process left running
  status           JobManager and TaskManagers: pid, running | stopped; the REST URL; jobs
  kill-tm N        SIGKILL TaskManager N          start-tm N   start TaskManager N again
  kill-jm          SIGKILL the JobManager         start-jm     start the JobManager again
  submit --bootstrap HOST:PORT --source TOPIC --sink TOPIC [--partitions N] [--from PATH|latest:JOBID]
         [--arg key=value ...]
                   submit the seed's job (flink/job): TOPIC -> value + 1 -> TOPIC, EXACTLY_ONCE;
                   creates missing topics; --from restores from a checkpoint (latest:JOBID = the
                   newest retained checkpoint of that job, for a resubmit after kill-jm)
  cancel JOBID     cancel a job

Options:
  --dir DIR        cluster directory (default .eoswatch/flink)
`;

const OPTIONS = {
  dir: { type: 'string', default: '.eoswatch/flink' },
  'flink-version': { type: 'string' },
  taskmanagers: { type: 'string' },
  set: { type: 'string', multiple: true },
  keep: { type: 'boolean' },
  bootstrap: { type: 'string' },
  source: { type: 'string' },
  sink: { type: 'string' },
  partitions: { type: 'string' },
  from: { type: 'string' },
  arg: { type: 'string', multiple: true },
} as const;

const COMMANDS = ['up', 'down', 'status', 'kill-tm', 'start-tm', 'kill-jm', 'start-jm', 'submit', 'cancel'] as const;

/** The TaskManager number argument of kill-tm and start-tm. */
const tmNumber = (cmd: string, arg: string | undefined) => numberArgument(cmd, arg, 'a TaskManager number (1, 2, …)');

export async function flinkCli(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, true);
  const cmd = commandOf(values, positionals, COMMANDS, HELP);
  if (typeof cmd === 'number') return cmd;
  const arg = positionals[1];
  const dir = values.dir;
  switch (cmd) {
    case 'up': {
      const tms = positiveIntegerOption('taskmanagers', values.taskmanagers, 1);
      const overrides = keyValueOption('set', values.set);
      const t0 = Date.now();
      const c = await LocalFlinkCluster.start({ version: values['flink-version'], taskManagers: tms, dir, overrides, killOnExit: false });
      process.stdout.write(`Flink ${c.state.version} session cluster up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${tms} TaskManager${tms > 1 ? 's' : ''}, dir ${c.dir})\n`);
      process.stdout.write(`REST: ${c.restUrl}\n`);
      return 0;
    }
    case 'down': {
      const c = await LocalFlinkCluster.load(dir);
      await c.down({ keepData: values.keep });
      process.stdout.write(`Flink cluster in ${c.dir} stopped${values.keep ? ' (data kept)' : ' and removed'}\n`);
      return 0;
    }
    case 'status': {
      const c = await LocalFlinkCluster.load(dir);
      process.stdout.write(`Flink ${c.state.version}, REST ${c.restUrl}\n`);
      for (const p of [c.state.jobmanager, ...c.state.taskmanagers]) {
        const st = c.status(p);
        const pid = st !== 'stopped' ? String(p.pid) : p.pid !== null ? `- (recorded pid ${p.pid} is gone)` : '-';
        process.stdout.write(`${p.name.padEnd(14)} ${st.padEnd(7)} pid ${pid}  log ${p.logFile}\n`);
      }
      const jobs = await c.rest<{ jobs: { jid: string; name: string; state: string }[] }>('/jobs/overview').catch(() => null);
      for (const j of jobs?.jobs ?? []) process.stdout.write(`job ${j.jid} ${j.state.padEnd(10)} ${j.name}\n`);
      return 0;
    }
    case 'kill-tm': {
      const n = tmNumber(cmd, arg);
      const c = await LocalFlinkCluster.load(dir);
      const tm = c.taskManager(n);
      await c.kill(tm);
      process.stdout.write(`${tm.name}: ${c.status(tm)}\n`);
      return 0;
    }
    case 'start-tm': {
      const n = tmNumber(cmd, arg);
      const c = await LocalFlinkCluster.load(dir);
      await c.startTaskManager(n);
      process.stdout.write(`${c.taskManager(n).name}: ${c.status(c.taskManager(n))}\n`);
      return 0;
    }
    case 'kill-jm': {
      const c = await LocalFlinkCluster.load(dir);
      await c.kill(c.state.jobmanager);
      process.stdout.write(`jobmanager: ${c.status(c.state.jobmanager)}\n`);
      return 0;
    }
    case 'start-jm': {
      const c = await LocalFlinkCluster.load(dir);
      await c.startJobManager();
      process.stdout.write(`jobmanager: ${c.status(c.state.jobmanager)}, REST ${c.restUrl}\n`);
      return 0;
    }
    case 'submit': {
      const { bootstrap, source, sink } = values;
      if (!bootstrap || !source || !sink) throw usage('submit needs --bootstrap, --source and --sink');
      const partitions = positiveIntegerOption('partitions', values.partitions, 3);
      const args = keyValueOption('arg', values.arg);
      const c = await LocalFlinkCluster.load(dir);
      const admin = new Kafka({ clientId: 'eoswatch-flink-cli', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        await ensureTopics(admin, [source, sink].map((topic) => ({ topic, numPartitions: partitions })));
      } finally {
        await admin.disconnect();
      }
      let fromPath = values.from;
      if (fromPath?.startsWith('latest:')) {
        const found = await c.latestRetainedCheckpoint(fromPath.slice('latest:'.length));
        if (!found) throw usage(`--from: no retained checkpoint of job ${fromPath.slice('latest:'.length)} under ${c.dir}/checkpoints`);
        fromPath = found;
      }
      const jobId = await c.submit({ bootstrap, sourceTopic: source, sinkTopic: sink, args, fromPath });
      await c.waitJobRunning(jobId);
      process.stdout.write(`job ${jobId} running${fromPath ? ` (restored from ${fromPath})` : ''}\n`);
      return 0;
    }
    case 'cancel': {
      if (!arg) throw usage('cancel needs a job id');
      const c = await LocalFlinkCluster.load(dir);
      await c.cancel(arg);
      process.stdout.write(`job ${arg}: cancel requested\n`);
      return 0;
    }
  }
}

runCliMain(import.meta.url, 'flink', flinkCli);
