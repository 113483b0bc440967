// eoswatch verify produce | check: verification records in, a sink judged for duplicates, loss and order.
import { EosError, ErrorCodes, ExitCodes } from '../errors.js';
import { createLogger } from '../log.js';
import {
  REPORT_FORMATS,
  brokersOption,
  choiceOption,
  configFileOrDefaults,
  durationOption,
  kafkaWithBrokers,
  numberOption,
  parse,
  printHelp,
  requiredPositiveInteger,
  subcommand,
} from './options.js';

export const help = `Usage: eoswatch verify produce --topic SOURCE --records N [--run ID] [options]
       eoswatch verify check --topic SINK --run ID --records N --partitions P [options]

produce  writes N verification records ({id, ts, value, run, p, seq}: the seed record plus the
         run, the source partition and a per-partition sequence) round-robin over the source
         topic's partitions with an idempotent producer, and prints the run manifest (JSON).
check    waits until no transaction is open below the sink's end (every partition's last stable
         offset has reached the high watermark it had at the start; --timeout bounds the wait and
         the read, and a timeout names the partitions held), then reads the sink from the
         beginning to that end (read_committed) and reports
         duplicates, lost, unexpected and wrong-value records (value must be input + delta),
         order violations per source partition, and end-to-end latency percentiles. Exit 3
         when a threshold is exceeded.

Options:
  -b, --bootstrap-server H:P   Kafka (repeatable or comma-separated; default: the config's)
  -c, --config FILE            eoswatch configuration (its kafka section)
  --topic NAME                 source (produce) or sink (check) topic
  --records N                  records written by the run
  --run ID                     run id (produce: default random; check: required)
  --partitions P               check: partitions of the source topic the run wrote to
  --value-delta D              check: output value = input value + D (default 1: increment)
  --max-duplicate-rate R       check: default 0
  --max-loss-rate R            check: default 0
  --max-out-of-order-rate R    check: default 0.001 (0.1 %)
  --uncommitted                check: also count records of aborted transactions (read_uncommitted
                               pass); records of transactions still open when the check began are
                               counted apart, never called aborted
  --timeout DURATION           check: give up reading after this long (default 2m)
  --format F                   check: table (default), json or markdown
  -h, --help                   show this help
`;

export async function handler(args: string[]): Promise<number> {
  const cmd = subcommand('verify', args, ['produce', 'check'], help);
  if (typeof cmd === 'number') return cmd;
  const { values } = parse(cmd.rest, {
    config: { type: 'string', short: 'c' },
    'bootstrap-server': { type: 'string', short: 'b', multiple: true },
    topic: { type: 'string' },
    records: { type: 'string' },
    run: { type: 'string' },
    partitions: { type: 'string' },
    'value-delta': { type: 'string' },
    'max-duplicate-rate': { type: 'string' },
    'max-loss-rate': { type: 'string' },
    'max-out-of-order-rate': { type: 'string' },
    uncommitted: { type: 'boolean' },
    timeout: { type: 'string' },
    format: { type: 'string', default: 'table' },
  });
  if (values.help) return printHelp(help);
  const base = await configFileOrDefaults(values.config);
  const kafkaConfig = kafkaWithBrokers(base.kafka, brokersOption(values['bootstrap-server']));
  const topic = values.topic;
  if (!topic) throw new EosError(ErrorCodes.USAGE, '--topic is required');
  const records = requiredPositiveInteger('records', values.records);
  const { createKafka } = await import('../kafka/client.js');
  const kafka = createKafka(kafkaConfig, createLogger('silent'));
  const verify = await import('../verify/verify.js');
  const { ProgressLine, countProgress } = await import('../progress.js');
  const progress = new ProgressLine();
  const t0 = Date.now();
  if (cmd.sub === 'produce') {
    const manifest = await verify.produceVerifyRecords(kafka, topic, {
      records,
      run: values.run,
      onProgress: (n) => {
        const ms = Date.now() - t0;
        progress.update(() => countProgress(`writing ${topic}`, n, records, ms));
      },
    });
    progress.done();
    process.stdout.write(`${JSON.stringify(manifest)}\n`);
    return ExitCodes.OK;
  }
  const run = values.run;
  if (!run) throw new EosError(ErrorCodes.USAGE, '--run is required (printed by verify produce)');
  const partitions = requiredPositiveInteger('partitions', values.partitions, ' (printed by verify produce)');
  const rate = (name: 'max-duplicate-rate' | 'max-loss-rate' | 'max-out-of-order-rate', dflt: number) =>
    numberOption(name, values[name], dflt, (n) => n >= 0 && n <= 1, 'a rate between 0 and 1');
  const format = choiceOption('format', values.format, REPORT_FORMATS);
  const timeoutMs = values.timeout === undefined ? 120_000 : await durationOption('timeout', values.timeout);
  const report = await verify.checkSinkTopic(kafka, topic, {
    run,
    records,
    partitions,
    valueDelta: numberOption('value-delta', values['value-delta'], 1, Number.isInteger, 'an integer'),
    uncommittedPass: Boolean(values.uncommitted),
    timeoutMs,
    // The line is formatted only when it is written (ProgressLine.update), not at every fetch.
    onProgress: (pass, read, total) => {
      const ms = Date.now() - t0;
      progress.update(() => countProgress(`reading ${topic} (${pass})`, read, total, ms));
    },
    // A transaction open below the end: the read waits for it, never calls its records lost.
    onWaiting: (pending, waitedMs) =>
      progress.update(
        `waiting ${(waitedMs / 1000).toFixed(1)} s for ${topic} to be stable: ${pending.length} partition${pending.length === 1 ? '' : 's'} held by an open transaction (${pending
          .slice(0, 3)
          .map((p) => `${p.partition}: LSO ${p.lso} < HW ${p.target}`)
          .join(', ')}${pending.length > 3 ? ', …' : ''})`,
      ),
    thresholds: { maxDuplicateRate: rate('max-duplicate-rate', 0), maxLossRate: rate('max-loss-rate', 0), maxOutOfOrderRate: rate('max-out-of-order-rate', 0.001) },
  });
  progress.done();
  process.stdout.write(
    format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : format === 'markdown' ? verify.formatVerifyMarkdown(report) : verify.formatVerifyTable(report),
  );
  return report.violations.length ? ExitCodes.VIOLATION : ExitCodes.OK;
}
