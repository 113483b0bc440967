// npm run demo: a local Kafka cluster with eoswatch (or a Flink job, or a Kafka Streams app, and eoswatch as its sidecar) running against it.
import { EosError, ErrorCodes } from '../../src/errors.js';
import { logFormatOption, nodesOption, parse, printHelp } from '../../src/commands/options.js';

export const help = `Usage: npm run demo -- [--port N] [--nodes 1|3] [--kafka-version V] [--dir DIR] [--rate N]
                    [--log-format auto|json|pretty] [--flink [--flink-version V] | --streams]

Starts a local Kafka cluster (fetched with Maven, run with java), creates the topics
demo.orders, demo.orders.enriched and demo.orders.dlq, writes seed records at a steady rate,
runs the transactional pipeline (increment) and the exporter, prints the URLs and runs until
Ctrl-C, which stops everything it started.

Options:
  --port N             HTTP port of eoswatch (default 7395)
  --nodes N            1 or 3 Kafka nodes (default 3)
  --kafka-version V    Kafka version (default: the latest supported 4.x)
  --dir DIR            cluster data and logs (default .eoswatch/demo)
  --rate N             seed records per second (default 200)
  --log-format F       auto (default: pretty on a terminal, else json), json or pretty
  --flink              instead of eoswatch's own pipeline, start a local Flink session cluster, submit
                       the seed's job (demo.orders -> value + 1 -> demo.orders.enriched, KafkaSink
                       EXACTLY_ONCE) and run eoswatch as its sidecar (flink: only; dir .eoswatch/demo-flink)
  --flink-version V    with --flink: 1.20 (default) or 2.2
  --streams            instead of eoswatch's own pipeline, run two instances of the seed's Kafka
                       Streams app (demo.orders -> value + 1 -> demo.orders.enriched, exactly_once_v2,
                       a state store; built with Maven) and eoswatch as their sidecar (streams:,
                       transactions:; dir .eoswatch/demo-streams)
  -h, --help           show this help
`;

export async function handler(args: string[]): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    nodes: { type: 'string' },
    'kafka-version': { type: 'string' },
    dir: { type: 'string' },
    rate: { type: 'string' },
    'log-format': { type: 'string' },
    flink: { type: 'boolean' },
    'flink-version': { type: 'string' },
    streams: { type: 'boolean' },
  });
  if (values.help) return printHelp(help);
  const port = values.port === undefined ? 7395 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new EosError(ErrorCodes.USAGE, `--port: expected 0-65535, found "${values.port}"`);
  const nodes = nodesOption(values.nodes);
  const rate = values.rate === undefined ? 200 : Number(values.rate);
  if (!Number.isFinite(rate) || rate <= 0) throw new EosError(ErrorCodes.USAGE, `--rate: expected a positive number, found "${values.rate}"`);
  const version = values['kafka-version'];
  if (values.flink && values.streams) throw new EosError(ErrorCodes.USAGE, '--flink and --streams: one engine at a time');
  if (values['flink-version'] !== undefined && !values.flink) throw new EosError(ErrorCodes.USAGE, '--flink-version: only with --flink');
  if (values.streams) {
    const { runStreamsDemo } = await import('../demo/streams.js');
    return runStreamsDemo({ port, nodes, rate, logFormat: logFormatOption(values['log-format'], 'auto'), version, dir: values.dir ?? '.eoswatch/demo-streams' });
  }
  if (values.flink) {
    const { runFlinkDemo } = await import('../demo/flink.js');
    return runFlinkDemo({ port, nodes, rate, logFormat: logFormatOption(values['log-format'], 'auto'), version, flinkVersion: values['flink-version'], dir: values.dir ?? '.eoswatch/demo-flink' });
  }
  const { runDemo } = await import('../demo/kafka.js');
  return runDemo({ port, nodes, rate, logFormat: logFormatOption(values['log-format'], 'auto'), version, dir: values.dir ?? '.eoswatch/demo' });
}
