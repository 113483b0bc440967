// eoswatch audit: the one-shot exactly-once configuration audit.
import type { Config } from '../config/types.js';
import { ExitCodes } from '../errors.js';
import { REPORT_FORMATS, brokersOption, choiceOption, configFileOrDefaults, kafkaWithBrokers, parse, printHelp } from './options.js';

export const help = `Usage: eoswatch audit [--config FILE] [--bootstrap-server HOST:PORT] [--producer FILE]
                     [--consumer FILE] [--streams FILE] [--flink FILE] [--topic NAME] [--all-topics]
                     [--no-cluster] [--format table|json|markdown] [--fail-on critical|warning] [--all]

Audits exactly-once safety once and exits: the live cluster (broker configuration, topics,
in-sync replicas), eoswatch's own pipeline (from --config), Java client .properties files and
Flink configuration files. Every finding says what was seen, what is expected, why and how to fix.

Options:
  -c, --config FILE          eoswatch configuration (its kafka, pipeline and audit sections)
  -b, --bootstrap-server H:P Kafka to audit (repeatable or comma-separated); overrides the config
  --producer FILE            producer .properties to audit (repeatable)
  --consumer FILE            consumer .properties to audit (repeatable)
  --streams FILE             Kafka Streams .properties to audit (repeatable)
  --flink FILE               flink-conf.yaml or config.yaml to audit (repeatable)
  --topic NAME               a topic to audit (repeatable)
  --all-topics               audit every non-internal topic
  --no-cluster               do not contact Kafka
  --format F                 table (default), json or markdown
  --fail-on S                critical (default): exit 3 on a critical finding; warning: also on warnings
  --all                      table: list passing checks too
  -h, --help                 show this help

Exit codes: 0 no violation at the --fail-on level, 1 a source could not be read (and nothing
worse), 2 usage or configuration error, 3 violation found.
`;

export async function handler(args: string[]): Promise<number> {
  const { values } = parse(args, {
    config: { type: 'string', short: 'c' },
    'bootstrap-server': { type: 'string', short: 'b', multiple: true },
    producer: { type: 'string', multiple: true },
    consumer: { type: 'string', multiple: true },
    streams: { type: 'string', multiple: true },
    flink: { type: 'string', multiple: true },
    topic: { type: 'string', multiple: true },
    'all-topics': { type: 'boolean' },
    'no-cluster': { type: 'boolean' },
    format: { type: 'string', default: 'table' },
    'fail-on': { type: 'string', default: 'critical' },
    all: { type: 'boolean' },
  });
  if (values.help) return printHelp(help);
  const format = choiceOption('format', values.format, REPORT_FORMATS);
  const failOn = choiceOption('fail-on', values['fail-on'], ['critical', 'warning']);
  const base = await configFileOrDefaults(values.config);
  const brokers = brokersOption(values['bootstrap-server']);
  const config: Config = {
    ...base,
    kafka: kafkaWithBrokers(base.kafka, brokers),
    audit: {
      ...base.audit,
      // Without a config file or a bootstrap server there is no cluster to ask.
      cluster: !values['no-cluster'] && (brokers.length > 0 || (values.config !== undefined && base.audit.cluster)),
      allTopics: Boolean(values['all-topics']) || base.audit.allTopics,
      topics: [...base.audit.topics, ...(values.topic ?? [])],
      producerConfigs: [...base.audit.producerConfigs, ...(values.producer ?? [])],
      consumerConfigs: [...base.audit.consumerConfigs, ...(values.consumer ?? [])],
      streamsConfigs: [...base.audit.streamsConfigs, ...(values.streams ?? [])],
      flinkConfigs: [...base.audit.flinkConfigs, ...(values.flink ?? [])],
    },
  };
  const { runConfiguredAudit } = await import('../audit/cli.js');
  const report = await runConfiguredAudit(config);
  const { formatJson, formatMarkdown, formatTable } = await import('../audit/report.js');
  process.stdout.write(format === 'json' ? formatJson(report) : format === 'markdown' ? formatMarkdown(report) : formatTable(report, { all: Boolean(values.all) }));
  if (report.summary.critical > 0 || (failOn === 'warning' && report.summary.warning > 0)) return ExitCodes.VIOLATION;
  if (report.sources.some((s) => !s.ok)) return ExitCodes.RUNTIME;
  return ExitCodes.OK;
}
