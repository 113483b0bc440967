// eoswatch topics create: the topics a configuration needs, replicated safely for the cluster.
import { ExitCodes } from '../errors.js';
import { createLogger } from '../log.js';
import { TOPIC_OPTIONS, brokersOption, configFrom, kafkaWithBrokers, parse, printHelp, subcommand, topicRequestFrom } from './options.js';

export const help = `Usage: eoswatch topics create [--config FILE] [--bootstrap-server H:P] [--topic NAME ...]
                             [--partitions N] [--replication-factor N] [--min-insync-replicas N]
                             [--allow-unsafe] [--dry-run]

Creates the topics the configuration needs (the enabled pipeline's source, sink and dead-letter
topic, the canary's) and those named with --topic; existing topics are left as they are.
Replication factor 3 and min.insync.replicas 2 when the cluster has 3 or more brokers; settings
that are not exactly-once safe (fewer replicas, min ISR 1) are refused unless --allow-unsafe.
A pipeline source topic created here gets the pipeline group's offsets committed at its start,
so the pipeline starts with pipeline.startFrom: none and no bootstrap run is needed.
For the local cluster: npm run kafka -- topics create ...

Options:
  -c, --config FILE              eoswatch configuration (its kafka, pipeline and canary sections)
  -b, --bootstrap-server H:P     Kafka (repeatable or comma-separated); overrides the config
  --topic NAME                   another topic to create (repeatable)
  --partitions N                 partitions of new topics (default 6)
  --replication-factor N         default: 3, or the broker count when smaller (then unsafe)
  --min-insync-replicas N        default: 2 with 3 or more replicas, else 1 (then unsafe)
  --allow-unsafe                 create even when not exactly-once safe (local development)
  --dry-run                      print what would be created, create nothing
  -h, --help                     show this help
`;

export async function handler(args: string[]): Promise<number> {
  const cmd = subcommand('topics', args, ['create'], help);
  if (typeof cmd === 'number') return cmd;
  const { values } = parse(cmd.rest, { config: { type: 'string', short: 'c' }, 'bootstrap-server': { type: 'string', short: 'b', multiple: true }, ...TOPIC_OPTIONS });
  if (values.help) return printHelp(help);
  const base = await configFrom(values.config);
  const brokers = brokersOption(values['bootstrap-server']);
  const req = topicRequestFrom(values);
  const { createKafka } = await import('../kafka/client.js');
  const { createConfiguredTopics, wantedTopics } = await import('../kafka/topics.js');
  const kafka = createKafka(kafkaWithBrokers(base.kafka, brokers), createLogger('silent'));
  const { text } = await createConfiguredTopics(kafka, wantedTopics(base, req.names), req, Boolean(values['dry-run']));
  process.stdout.write(text);
  return ExitCodes.OK;
}
