// `npm run kafka -- <command>`: the local cluster for people. `up` leaves the nodes running
// (detached) until `down`; the other commands act on the nodes recorded in the state file.
// Options through src/commands/options.ts and errors through src/errors.ts, as eoswatch's own
// commands: a bad option or value is exit 2 naming it, before anything is fetched or started.
import { LocalCluster } from './cluster.js';
import { DEFAULT_KAFKA_VERSION } from './kafka-dist.js';
import { choiceOption, commandOf, keyValueOption, nodesOption, numberArgument, numberOption, parse, TOPIC_OPTIONS, topicRequestFrom, usage } from '../../src/commands/options.js';
import { runCliMain } from './cli-main.js';
import { normaliseSecurity, SECURITY_MODES, type SecurityOptions } from './security.js';
import type { AclSpec } from './acl.js';

const HELP = `Usage: npm run kafka -- <command> [options]

Commands:
  up [--nodes 1|3] [--kafka-version V] [--port BASE] [--set key=value ...] [--network]
     [--security plaintext|sasl-ssl|ssl] [--mtls] [--user NAME ...]
                   start a cluster (default 3 nodes, Kafka ${DEFAULT_KAFKA_VERSION}) and print its bootstrap servers;
                   --network: each node in a network namespace of its own on a bridge, with an
                   address of its own (root, iproute2, nftables, iptables, python3; see README);
                   --security sasl-ssl: SCRAM-SHA-512/256, PLAIN and OAUTHBEARER (unsecured JWTs,
                   for tests) over TLS (private CA), ssl: TLS with the client certificate as the
                   identity; both with ACLs deny-by-default and
                   a super user "admin"; --mtls: sasl-ssl also requires a client certificate;
                   --user: more users (no ACLs until granted). Passwords and keys stay in the
                   cluster directory (client/*.properties and client/*.yaml), never printed
  acl grant|revoke --principal User:NAME --resource R --operation OP [--operation OP ...]
  acl list [--principal User:NAME]
                   ACLs of a secured cluster, as its super user; R: topic:NAME, group:NAME,
                   transactional-id:NAME (NAME* for a prefix) or cluster; OP: Read, Write,
                   Describe, DescribeConfigs, IdempotentWrite, All, ...
  down [--keep]    kill every node of the cluster (also one started by another process) and remove
                   its data (--keep: keep data and logs); fails naming any process left running
  status           each node: pid, ports, running | paused | stopped (the live process checked
                   against the recorded pid and start time)
  kill N           SIGKILL node N          stop N      SIGTERM node N (controlled shutdown)
  pause N          SIGSTOP node N          resume N    SIGCONT node N
  start N          start a stopped node    restart N   stop then start node N
  logs N           tail of node N's log
  sweep            remove the network namespaces left behind by crashed networked clusters
  topics create [NAME ...] [--config FILE] [--partitions N] [--replication-factor N]
                [--min-insync-replicas N] [--allow-unsafe] [--dry-run]
                   create topics on this cluster: those NAMEd and those the eoswatch config
                   needs (as eoswatch topics create; RF 3 / min ISR 2 on 3 nodes, a 1-node
                   cluster needs --allow-unsafe)
  topics list      topics of this cluster with partitions and replication factor

Options:
  --dir DIR        cluster directory (default .eoswatch/cluster); data, logs and cluster.json live there
`;

const OPTIONS = {
  dir: { type: 'string', default: '.eoswatch/cluster' },
  nodes: { type: 'string' },
  'kafka-version': { type: 'string' },
  port: { type: 'string' },
  set: { type: 'string', multiple: true },
  keep: { type: 'boolean' },
  network: { type: 'boolean' },
  security: { type: 'string' },
  mtls: { type: 'boolean' },
  user: { type: 'string', multiple: true },
  principal: { type: 'string' },
  resource: { type: 'string' },
  operation: { type: 'string', multiple: true },
  config: { type: 'string', short: 'c' },
  ...TOPIC_OPTIONS,
} as const;

const COMMANDS = ['up', 'acl', 'down', 'status', 'kill', 'stop', 'start', 'restart', 'pause', 'resume', 'logs', 'sweep', 'topics'] as const;

export interface UpValues {
  nodes?: string;
  port?: string;
  set?: string[];
  security?: string;
  mtls?: boolean;
  user?: string[];
}

/** `up`'s options, checked before Kafka is fetched or a node started. */
export function upOptions(values: UpValues): { nodes: 1 | 3; basePort: number | undefined; overrides: Record<string, string>; security: SecurityOptions } {
  const nodes = nodesOption(values.nodes);
  const basePort = numberOption('port', values.port, undefined, (n) => Number.isInteger(n) && n > 0 && n <= 65535, 'a port number (1-65535)');
  const overrides = keyValueOption('set', values.set);
  const mode = values.security === undefined ? 'plaintext' : choiceOption('security', values.security, SECURITY_MODES);
  if ((values.mtls || values.user?.length) && mode === 'plaintext') throw usage('--mtls and --user need --security sasl-ssl or ssl');
  return { nodes, basePort, overrides, security: normaliseSecurity({ mode, mtls: values.mtls, users: values.user }) };
}

/** The node id argument of kill, stop, start, restart, pause, resume and logs. */
const nodeIdArgument = (cmd: string, arg: string | undefined) => numberArgument(cmd, arg, 'a node id (1, 2, 3)');

export async function kafkaCli(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, true);
  const cmd = commandOf(values, positionals, COMMANDS, HELP);
  if (typeof cmd === 'number') return cmd;
  const arg = positionals[1];
  const dir = values.dir;
  switch (cmd) {
    case 'up': {
      const { nodes, basePort, overrides, security } = upOptions(values);
      const { fetchKafkaWithProgress } = await import('./fetch.js');
      await fetchKafkaWithProgress(values['kafka-version'] ?? DEFAULT_KAFKA_VERSION);
      const t0 = Date.now();
      const c = await LocalCluster.start({
        nodes,
        version: values['kafka-version'],
        dir,
        overrides,
        basePort,
        killOnExit: false,
        network: values.network,
        security,
      });
      // The nodes outlive this process: so does their network, until `down`.
      await c.network?.detach(c.dir);
      process.stdout.write(`Kafka ${c.version} cluster up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${nodes} node${nodes > 1 ? 's' : ''}, dir ${c.dir})\n`);
      process.stdout.write(`bootstrap servers: ${c.bootstrapServers}\n`);
      if (c.security) {
        const { writeClientFiles } = await import('./client-files.js');
        const files = await writeClientFiles(c);
        process.stdout.write(`${c.security.mode === 'ssl' ? 'SSL (client certificate identity)' : `SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN, OAUTHBEARER)${c.security.mtls ? ' with client certificates' : ''}`}, ACLs deny-by-default, super user ${c.security.admin}\n`);
        process.stdout.write(`CA certificate: ${files.ca}\n`);
        for (const f of files.users) process.stdout.write(`user ${f.user}: Java client properties ${f.properties}, eoswatch kafka section ${f.eoswatch}\n`);
      }
      return 0;
    }
    case 'acl': {
      if (arg !== 'grant' && arg !== 'revoke' && arg !== 'list') throw usage(`acl: expected grant, revoke or list, found "${arg ?? ''}"`);
      const acl = await import('./acl.js');
      const principal = values.principal === undefined ? undefined : acl.parsePrincipal(values.principal);
      let specs: AclSpec[] = [];
      if (arg !== 'list') {
        if (!principal || !values.resource || !values.operation?.length) throw usage(`acl ${arg}: needs --principal User:NAME, --resource R and --operation OP`);
        const res = acl.parseResource(values.resource);
        specs = values.operation.map((o) => ({ principal, ...res, operation: acl.parseOperation(o) }));
      }
      const c = await LocalCluster.load(dir);
      if (!c.security) throw usage(`acl: the cluster in ${c.dir} is plaintext (no authorizer); start one with 'up --security sasl-ssl'`);
      const admin = (await c.kafka()).admin();
      await admin.connect();
      try {
        if (arg === 'list') {
          const list = await acl.listAcls(admin, principal);
          process.stdout.write(list.length ? `${list.map(acl.describeAcl).join('\n')}\n` : 'no ACLs\n');
          return 0;
        }
        if (arg === 'grant') {
          await acl.grantAcls(admin, specs);
          process.stdout.write(`granted: ${specs.map(acl.describeAcl).join('; ')}\n`);
        } else {
          const n = await acl.revokeAcls(admin, specs);
          process.stdout.write(`revoked ${n} ACL${n === 1 ? '' : 's'}: ${specs.map(acl.describeAcl).join('; ')}\n`);
        }
        return 0;
      } finally {
        await admin.disconnect();
      }
    }
    case 'down': {
      const c = await LocalCluster.load(dir);
      await c.down({ keepData: values.keep });
      process.stdout.write(`cluster in ${c.dir} stopped${values.keep ? ' (data kept)' : ' and removed'}\n`);
      return 0;
    }
    case 'status': {
      const c = await LocalCluster.load(dir);
      process.stdout.write(`Kafka ${c.version}, bootstrap servers ${c.bootstrapServers}\n`);
      if (c.network) process.stdout.write(`network ${c.network.id}: namespaces ${c.network.state.endpoints.map((e) => e.ns).join(', ')} on bridge ${c.network.state.bridgeNs}\n`);
      for (const n of c.nodes) {
        const host = n.host ?? '127.0.0.1';
        const st = c.status(n.id);
        // The pid shown is the live process's; a recorded one that exited (or was reused by another process) is named as such.
        const pid = st !== 'stopped' ? String(n.pid) : n.pid !== null ? `- (recorded pid ${n.pid} is gone)` : '-';
        process.stdout.write(`node ${n.id}: ${st.padEnd(7)} pid ${pid}  broker ${host}:${n.brokerPort}  controller ${host}:${n.controllerPort}  log ${n.logFile}\n`);
      }
      return 0;
    }
    case 'kill':
    case 'stop':
    case 'start':
    case 'restart': {
      const id = nodeIdArgument(cmd, arg);
      const c = await LocalCluster.load(dir);
      if (cmd === 'kill') await c.kill(id);
      else if (cmd === 'stop') await c.stop(id);
      else if (cmd === 'start') await c.start(id);
      else await c.restart(id);
      process.stdout.write(`node ${id}: ${c.status(id)}\n`);
      return 0;
    }
    case 'pause':
    case 'resume': {
      const id = nodeIdArgument(cmd, arg);
      const c = await LocalCluster.load(dir);
      if (cmd === 'pause') await c.pause(id);
      else await c.resume(id);
      process.stdout.write(`node ${id}: ${c.status(id)}\n`);
      return 0;
    }
    case 'sweep': {
      const { ClusterNetwork } = await import('./network.js');
      const removed = ClusterNetwork.sweep();
      process.stdout.write(removed.length ? `removed the leftovers of networks ${removed.join(', ')}\n` : 'no leftover network\n');
      return 0;
    }
    case 'logs': {
      const id = nodeIdArgument(cmd, arg);
      const c = await LocalCluster.load(dir);
      const { tailFile } = await import('./cluster.js');
      process.stdout.write(`${tailFile(c.node(id).logFile, 60)}\n`);
      return 0;
    }
    case 'topics': {
      if (arg !== 'create' && arg !== 'list') throw usage(`topics: expected create or list, found "${arg ?? ''}"`);
      const req = arg === 'create' ? topicRequestFrom({ ...values, topic: [...(values.topic ?? []), ...positionals.slice(2)] }) : null;
      const c = await LocalCluster.load(dir);
      const { createKafka } = await import('../../src/kafka/client.js');
      const { createLogger } = await import('../../src/log.js');
      const { validateConfig, loadConfig } = await import('../../src/config/load.js');
      const kafka = createKafka(validateConfig({ kafka: { brokers: c.brokers } }, '(local cluster)').kafka, createLogger('silent'));
      if (req === null) {
        const admin = kafka.admin();
        await admin.connect();
        try {
          const { topics } = await admin.fetchTopicMetadata();
          for (const t of topics.filter((x) => !x.name.startsWith('__')).sort((a, b) => a.name.localeCompare(b.name))) {
            process.stdout.write(`${t.name}  ${t.partitions.length} partitions  replication factor ${Math.min(...t.partitions.map((p) => p.replicas.length))}\n`);
          }
        } finally {
          await admin.disconnect();
        }
        return 0;
      }
      const { createConfiguredTopics, wantedTopics } = await import('../../src/kafka/topics.js');
      const config = values.config ? await loadConfig(values.config) : undefined;
      const { text } = await createConfiguredTopics(kafka, wantedTopics(config, req.names), req, Boolean(values['dry-run']));
      process.stdout.write(text);
      return 0;
    }
  }
}

runCliMain(import.meta.url, 'kafka', kafkaCli);
