#!/usr/bin/env node
// eoswatch command line: subcommand dispatch and exit codes (0 ok, 1 runtime failure, 2 usage or
// configuration error, 3 a check found a violation).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { pathToFileURL } from 'node:url';
import { loadConfig, redactConfig, validateConfig } from './config/load.js';
import type { Config, LogFormat } from './config/types.js';
import { EosError, ErrorCodes, ExitCodes, errorMessage, exitCodeFor } from './errors.js';
import { createLogger, type Logger } from './log.js';
import { redactText } from './redact.js';
import { VERSION } from './version.js';
import { runUntilStopped } from './lifecycle.js';

const MAIN_HELP = `eoswatch ${VERSION} — exactly-once watchdog for Kafka transactional pipelines

Usage: eoswatch <command> [options]

Commands:
  run               run the daemon and exporter (services enabled in the config)
  audit             one-shot exactly-once configuration audit (cluster, client and Flink files)
  verify            write verification records / check a sink for duplicates, loss and order
  chaos             fault scenarios against a local cluster and pipeline, verified end to end
  topics create     create the topics a configuration needs, replicated safely for the cluster
  status            summary of a running eoswatch (its /metrics, /readyz and /audit)
  config validate   check a configuration file against the schema
  demo              start a local 3-node Kafka cluster and run eoswatch against it

Options:
  -h, --help        show help (also after a command: eoswatch run --help)
  -v, --version     print the version

Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error,
            3 a check ran and found a violation.
`;

const RUN_HELP = `Usage: eoswatch run [--config FILE] [--start-from earliest|latest] [--log-format auto|json|pretty]
                    [--web.listen-address [HOST]:PORT] [--web.config.file FILE]

Starts the daemon: the HTTP server (/metrics, /healthz, /readyz) and every service the
configuration enables. SIGTERM or SIGINT stops it within shutdown.gracePeriod.

Options:
  -c, --config FILE        YAML configuration (default: $EOSWATCH_CONFIG, else built-in defaults)
  --start-from POSITION    this run only: partitions of the pipeline's source without a committed
                           offset start at earliest or latest (bootstrapping a new group); the
                           config's pipeline.startFrom (none: refuse) applies to every later run,
                           and is what the audit judges
  --log-format F           json (one object a line), pretty (readable lines) or auto: pretty
                           on a terminal, else json (default: the config's log.format, auto)
  --web.listen-address ADDR  where to listen, e.g. :7395, 127.0.0.1:7395, [::1]:7395 (overrides
                           http.host/port)
  --web.config.file FILE   TLS and basic auth, the Prometheus exporter toolkit's web configuration
                           file (overrides http.webConfigFile)
  -h, --help               show this help
`;

const STATUS_HELP = `Usage: eoswatch status [--url URL] [--window DURATION] [--format table|json]

Reads a running eoswatch's /metrics (twice, --window apart, for rates), /readyz and /audit and
prints one summary: records in/out, checkpoints, commit latency p50/p99, pending, LSO lag,
canary counts, audit findings, and which alert conditions of alerts/eoswatch.rules.yml hold
(without their for: durations; canary duplicates and losses count since eoswatch started).

Options:
  --url URL            eoswatch's HTTP address (default http://127.0.0.1:7395)
  --window DURATION    time between the two readings (default 5s; 0: one reading, no rates)
  --format F           table (default) or json
  -h, --help           show this help

Exit codes: 0 healthy, 1 eoswatch cannot be reached, 3 an alert condition holds.
`;

const TOPICS_HELP = `Usage: eoswatch topics create [--config FILE] [--bootstrap-server H:P] [--topic NAME ...]
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

const VALIDATE_HELP = `Usage: eoswatch config validate FILE [--print]

Validates FILE against config/schema.json, expanding \${ENV_VAR} references. Prints every
problem with file, line:column, key and what was expected; exit 2 when there is any.

Options:
  --print      print the effective configuration (defaults filled, secrets redacted) as JSON
  -h, --help   show this help
`;

const AUDIT_HELP = `Usage: eoswatch audit [--config FILE] [--bootstrap-server HOST:PORT] [--producer FILE]
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

const VERIFY_HELP = `Usage: eoswatch verify produce --topic SOURCE --records N [--run ID] [options]
       eoswatch verify check --topic SINK --run ID --records N --partitions P [options]

produce  writes N verification records ({id, ts, value, run, p, seq}: the seed record plus the
         run, the source partition and a per-partition sequence) round-robin over the source
         topic's partitions with an idempotent producer, and prints the run manifest (JSON).
check    reads the sink from the beginning to its current end (read_committed) and reports
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

const DEMO_HELP = `Usage: eoswatch demo [--port N] [--nodes 1|3] [--kafka-version V] [--dir DIR] [--rate N]
                    [--log-format auto|json|pretty] [--flink [--flink-version V]]

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
  -h, --help           show this help
`;

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, allowPositionals: boolean) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, errorMessage(err));
  }
}

function reportError(err: unknown): number {
  if (err instanceof EosError) {
    process.stderr.write(`eoswatch: ${redactText(err.message)}\n`);
    for (const d of err.details) process.stderr.write(`  ${redactText(d)}\n`);
    if (err.code === ErrorCodes.USAGE) process.stderr.write(`Run 'eoswatch --help' for usage.\n`);
  } else {
    process.stderr.write(`eoswatch: ${redactText(errorMessage(err))}\n`);
  }
  return exitCodeFor(err);
}

async function configFrom(file: string | undefined): Promise<Config> {
  const path = file ?? process.env.EOSWATCH_CONFIG;
  return path ? loadConfig(path) : validateConfig({}, '(defaults)');
}

/** `run --start-from`: a one-run bootstrap position; the configured startFrom stays what the audit judges. */
export function withStartFrom(config: Config, flag: string | undefined): Config {
  if (flag === undefined) return config;
  if (flag !== 'earliest' && flag !== 'latest') throw new EosError(ErrorCodes.USAGE, `--start-from: expected earliest or latest, found "${flag}"`);
  if (!config.pipeline.enabled) throw new EosError(ErrorCodes.USAGE, '--start-from: the configuration has no enabled pipeline');
  return { ...config, pipeline: { ...config.pipeline, startFrom: flag, configuredStartFrom: config.pipeline.startFrom } };
}

export function logFormatOption(v: unknown, dflt: LogFormat): LogFormat {
  if (v === undefined) return dflt;
  if (v !== 'auto' && v !== 'json' && v !== 'pretty') throw new EosError(ErrorCodes.USAGE, `--log-format: expected auto, json or pretty, found "${v}"`);
  return v;
}

async function cmdRun(args: string[]): Promise<number> {
  const { values } = parse(args, { config: { type: 'string', short: 'c' }, 'start-from': { type: 'string' }, 'log-format': { type: 'string' }, 'web.listen-address': { type: 'string' }, 'web.config.file': { type: 'string' } }, false);
  if (values.help) {
    process.stdout.write(RUN_HELP);
    return ExitCodes.OK;
  }
  const config = withStartFrom(await configFrom(values.config as string | undefined), values['start-from'] as string | undefined);
  const { parseListenAddress } = await import('./http/server.js');
  if (values['web.listen-address'] !== undefined) {
    try {
      Object.assign(config.http, parseListenAddress(values['web.listen-address'] as string));
    } catch (err) {
      throw new EosError(ErrorCodes.USAGE, `--web.listen-address: ${errorMessage(err)}`);
    }
  }
  if (values['web.config.file'] !== undefined) config.http.webConfigFile = values['web.config.file'] as string;
  const { logDestination } = await import('./log-format.js');
  const logger = createLogger(config.log.level, logDestination(logFormatOption(values['log-format'], config.log.format)));
  logger.info({ version: VERSION, config: redactConfig(config) }, 'eoswatch starting');
  if (config.pipeline.configuredStartFrom !== undefined) {
    logger.warn(
      { startFrom: config.pipeline.startFrom, configured: config.pipeline.configuredStartFrom },
      `this run only: partitions without a committed offset start at ${config.pipeline.startFrom} (--start-from); later runs use pipeline.startFrom: ${config.pipeline.configuredStartFrom}`,
    );
  }
  return runUntilStopped(async () => {
    // Loaded here, not at the top: one-shot commands (verify, audit) start without the daemon's modules.
    const { createDaemon } = await import('./services.js');
    const { checkTransform } = await import('./pipeline/transforms/index.js');
    await checkTransform(config.pipeline, values.config as string | undefined);
    const { daemon, fatal } = createDaemon(config, logger);
    await daemon.start();
    return { stop: () => daemon.stop(), fatal };
  }, logger);
}

async function cmdConfig(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(VALIDATE_HELP);
    return sub === undefined ? ExitCodes.USAGE : ExitCodes.OK;
  }
  if (sub !== 'validate') throw new EosError(ErrorCodes.USAGE, `unknown config command "${sub}"; expected: validate`);
  const { values, positionals } = parse(rest, { print: { type: 'boolean' } }, true);
  if (values.help) {
    process.stdout.write(VALIDATE_HELP);
    return ExitCodes.OK;
  }
  if (positionals.length !== 1) throw new EosError(ErrorCodes.USAGE, 'config validate takes exactly one FILE');
  const file = positionals[0]!;
  const config = await loadConfig(file);
  const { checkTransform } = await import('./pipeline/transforms/index.js');
  await checkTransform(config.pipeline, file);
  if (values.print) process.stdout.write(`${JSON.stringify(redactConfig(config), null, 2)}\n`);
  else process.stdout.write(`${file}: valid\n`);
  return ExitCodes.OK;
}

async function cmdAudit(args: string[]): Promise<number> {
  const { values } = parse(
    args,
    {
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
    },
    false,
  );
  if (values.help) {
    process.stdout.write(AUDIT_HELP);
    return ExitCodes.OK;
  }
  const format = values.format as string;
  if (!['table', 'json', 'markdown'].includes(format)) throw new EosError(ErrorCodes.USAGE, `--format: expected table, json or markdown, found "${format}"`);
  const failOn = values['fail-on'] as string;
  if (!['critical', 'warning'].includes(failOn)) throw new EosError(ErrorCodes.USAGE, `--fail-on: expected critical or warning, found "${failOn}"`);
  const base = values.config ? await loadConfig(values.config as string) : validateConfig({}, '(defaults)');
  const brokers = brokersOption(values['bootstrap-server']);
  const config: Config = {
    ...base,
    kafka: brokers.length ? { ...base.kafka, brokers } : base.kafka,
    audit: {
      ...base.audit,
      // Without a config file or a bootstrap server there is no cluster to ask.
      cluster: !values['no-cluster'] && (brokers.length > 0 || (values.config !== undefined && base.audit.cluster)),
      allTopics: Boolean(values['all-topics']) || base.audit.allTopics,
      topics: [...base.audit.topics, ...((values.topic as string[] | undefined) ?? [])],
      producerConfigs: [...base.audit.producerConfigs, ...((values.producer as string[] | undefined) ?? [])],
      consumerConfigs: [...base.audit.consumerConfigs, ...((values.consumer as string[] | undefined) ?? [])],
      streamsConfigs: [...base.audit.streamsConfigs, ...((values.streams as string[] | undefined) ?? [])],
      flinkConfigs: [...base.audit.flinkConfigs, ...((values.flink as string[] | undefined) ?? [])],
    },
  };
  const { runConfiguredAudit } = await import('./audit/cli.js');
  const report = await runConfiguredAudit(config);
  const { formatJson, formatMarkdown, formatTable } = await import('./audit/report.js');
  process.stdout.write(format === 'json' ? formatJson(report) : format === 'markdown' ? formatMarkdown(report) : formatTable(report, { all: Boolean(values.all) }));
  if (report.summary.critical > 0 || (failOn === 'warning' && report.summary.warning > 0)) return ExitCodes.VIOLATION;
  if (report.sources.some((s) => !s.ok)) return ExitCodes.RUNTIME;
  return ExitCodes.OK;
}

function brokersOption(v: unknown): string[] {
  const brokers = ((v as string[] | undefined) ?? []).flatMap((b) => b.split(',')).map((b) => b.trim()).filter(Boolean);
  for (const b of brokers) if (!/^[^\s:,]+:[0-9]{1,5}$/.test(b)) throw new EosError(ErrorCodes.USAGE, `--bootstrap-server: expected HOST:PORT, found "${b}"`);
  return brokers;
}

/** Options shared by `eoswatch topics create` and `npm run kafka -- topics create`. */
export const TOPIC_OPTIONS = {
  topic: { type: 'string', multiple: true },
  partitions: { type: 'string' },
  'replication-factor': { type: 'string' },
  'min-insync-replicas': { type: 'string' },
  'allow-unsafe': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
} as const;

export function topicRequestFrom(values: Record<string, unknown>): import('./kafka/topics.js').TopicRequest {
  const positive = (n: number) => Number.isInteger(n) && n > 0;
  const optional = (name: string) => (values[name] === undefined ? undefined : numberOption(name, values[name], 0, positive, 'a positive integer'));
  return {
    names: (values.topic as string[] | undefined) ?? [],
    partitions: numberOption('partitions', values.partitions, 6, positive, 'a positive integer'),
    replicationFactor: optional('replication-factor'),
    minInsyncReplicas: optional('min-insync-replicas'),
    allowUnsafe: Boolean(values['allow-unsafe']),
  };
}

async function cmdTopics(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(TOPICS_HELP);
    return sub === undefined ? ExitCodes.USAGE : ExitCodes.OK;
  }
  if (sub !== 'create') throw new EosError(ErrorCodes.USAGE, `unknown topics command "${sub}"; expected: create`);
  const { values } = parse(rest, { config: { type: 'string', short: 'c' }, 'bootstrap-server': { type: 'string', short: 'b', multiple: true }, ...TOPIC_OPTIONS }, false);
  if (values.help) {
    process.stdout.write(TOPICS_HELP);
    return ExitCodes.OK;
  }
  const base = await configFrom(values.config as string | undefined);
  const brokers = brokersOption(values['bootstrap-server']);
  const req = topicRequestFrom(values);
  const { createKafka } = await import('./kafka/client.js');
  const { createConfiguredTopics, wantedTopics } = await import('./kafka/topics.js');
  const kafka = createKafka(brokers.length ? { ...base.kafka, brokers } : base.kafka, createLogger('silent'));
  const { text } = await createConfiguredTopics(kafka, wantedTopics(base, req.names), req, Boolean(values['dry-run']));
  process.stdout.write(text);
  return ExitCodes.OK;
}

async function cmdStatus(args: string[]): Promise<number> {
  const { values } = parse(args, { url: { type: 'string', default: 'http://127.0.0.1:7395' }, window: { type: 'string', default: '5s' }, format: { type: 'string', default: 'table' } }, false);
  if (values.help) {
    process.stdout.write(STATUS_HELP);
    return ExitCodes.OK;
  }
  const url = (values.url as string).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+$/.test(url)) throw new EosError(ErrorCodes.USAGE, `--url: expected http://HOST:PORT, found "${values.url}"`);
  const format = values.format as string;
  if (!['table', 'json'].includes(format)) throw new EosError(ErrorCodes.USAGE, `--format: expected table or json, found "${format}"`);
  const { parseDuration } = await import('./config/duration.js');
  let windowMs: number;
  try {
    windowMs = parseDuration(values.window as string);
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, `--window: ${errorMessage(err)}`);
  }
  const { StatusReader } = await import('./status/reader.js');
  const { formatSummary } = await import('./status/summary.js');
  const reader = new StatusReader(url);
  let summary = await reader.read();
  if (windowMs > 0) {
    await new Promise((r) => setTimeout(r, windowMs));
    summary = await reader.read();
  }
  process.stdout.write(format === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
  return summary.alerts.length ? ExitCodes.VIOLATION : ExitCodes.OK;
}

function numberOption(name: string, v: unknown, dflt: number, check: (n: number) => boolean, what: string): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || !check(n)) throw new EosError(ErrorCodes.USAGE, `--${name}: expected ${what}, found "${v}"`);
  return n;
}

async function cmdVerify(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(VERIFY_HELP);
    return sub === undefined ? ExitCodes.USAGE : ExitCodes.OK;
  }
  if (sub !== 'produce' && sub !== 'check') throw new EosError(ErrorCodes.USAGE, `unknown verify command "${sub}"; expected: produce, check`);
  const { values } = parse(
    rest,
    {
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
    },
    false,
  );
  if (values.help) {
    process.stdout.write(VERIFY_HELP);
    return ExitCodes.OK;
  }
  const base = values.config ? await loadConfig(values.config as string) : validateConfig({}, '(defaults)');
  const brokers = brokersOption(values['bootstrap-server']);
  const kafkaConfig = brokers.length ? { ...base.kafka, brokers } : base.kafka;
  const topic = values.topic as string | undefined;
  if (!topic) throw new EosError(ErrorCodes.USAGE, '--topic is required');
  const records = numberOption('records', values.records, NaN, (n) => Number.isInteger(n) && n > 0, 'a positive integer');
  if (Number.isNaN(records)) throw new EosError(ErrorCodes.USAGE, '--records is required');
  const { createKafka } = await import('./kafka/client.js');
  const kafka = createKafka(kafkaConfig, createLogger('silent'));
  const verify = await import('./verify/verify.js');
  const { ProgressLine, countProgress } = await import('./progress.js');
  const progress = new ProgressLine();
  const t0 = Date.now();
  if (sub === 'produce') {
    const manifest = await verify.produceVerifyRecords(kafka, topic, {
      records,
      run: values.run as string | undefined,
      onProgress: (n) => progress.update(countProgress(`writing ${topic}`, n, records, Date.now() - t0)),
    });
    progress.done();
    process.stdout.write(`${JSON.stringify(manifest)}
`);
    return ExitCodes.OK;
  }
  const run = values.run as string | undefined;
  if (!run) throw new EosError(ErrorCodes.USAGE, '--run is required (printed by verify produce)');
  const partitions = numberOption('partitions', values.partitions, NaN, (n) => Number.isInteger(n) && n > 0, 'a positive integer');
  if (Number.isNaN(partitions)) throw new EosError(ErrorCodes.USAGE, '--partitions is required (printed by verify produce)');
  const rate = (name: string, dflt: number) => numberOption(name, values[name as keyof typeof values], dflt, (n) => n >= 0 && n <= 1, 'a rate between 0 and 1');
  const format = values.format as string;
  if (!['table', 'json', 'markdown'].includes(format)) throw new EosError(ErrorCodes.USAGE, `--format: expected table, json or markdown, found "${format}"`);
  const { parseDuration } = await import('./config/duration.js');
  let timeoutMs = 120_000;
  try {
    if (values.timeout !== undefined) timeoutMs = parseDuration(values.timeout as string);
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, `--timeout: ${errorMessage(err)}`);
  }
  const report = await verify.checkSinkTopic(kafka, topic, {
    run,
    records,
    partitions,
    valueDelta: numberOption('value-delta', values['value-delta'], 1, Number.isInteger, 'an integer'),
    uncommittedPass: Boolean(values.uncommitted),
    timeoutMs,
    onProgress: (pass, read, total) => progress.update(countProgress(`reading ${topic} (${pass})`, read, total, Date.now() - t0)),
    thresholds: { maxDuplicateRate: rate('max-duplicate-rate', 0), maxLossRate: rate('max-loss-rate', 0), maxOutOfOrderRate: rate('max-out-of-order-rate', 0.001) },
  });
  progress.done();
  process.stdout.write(format === 'json' ? `${JSON.stringify(report, null, 2)}
` : format === 'markdown' ? verify.formatVerifyMarkdown(report) : verify.formatVerifyTable(report));
  return report.violations.length ? ExitCodes.VIOLATION : ExitCodes.OK;
}

const chaosHelp = (scenarios: string, kafkaVersion: string) => `Usage: eoswatch chaos [--scenario NAME[,NAME...]|all] [options]

Starts a local 3-node Kafka cluster (Java and Maven needed, as for the demo) and, per round, fresh
topics, N verification records and pipeline workers (eoswatch run, as child processes); injects
the scenario's faults while the pipeline runs, then reads the sink read_committed and judges it
(duplicates, loss, order per source partition, values). Exit 3 when a round fails.

Scenarios:
${scenarios}
Options:
  --scenario LIST        comma-separated scenario names, or all (default: all)
  --records N            verification records per round (default 10000)
  --rounds N             rounds per scenario (default 1)
  --partitions N         partitions of the round's topics (default 6)
  --full-speed           do not slow the pipeline: faults hit transactions of a full-speed run
                         (give enough --records for the run to outlast the scenario's faults)
  --kafka-version V      Kafka version of the local cluster (default ${kafkaVersion})
  --dir DIR              cluster data and worker logs (default .eoswatch/chaos)
  --format FMT           table | json | markdown (default table)
  --out FILE             also write the report to FILE
`;

async function cmdChaos(args: string[]): Promise<number> {
  const { values } = parse(
    args,
    {
      scenario: { type: 'string', default: 'all' },
      records: { type: 'string' },
      rounds: { type: 'string' },
      partitions: { type: 'string' },
      'full-speed': { type: 'boolean', default: false },
      'kafka-version': { type: 'string' },
      dir: { type: 'string', default: '.eoswatch/chaos' },
      format: { type: 'string', default: 'table' },
      out: { type: 'string' },
    },
    false,
  );
  const { SCENARIOS, findScenarios } = await import('./chaos/scenarios.js');
  const { DEFAULT_KAFKA_VERSION } = await import('./localcluster/kafka-dist.js');
  if (values.help) {
    process.stdout.write(chaosHelp(SCENARIOS.map((s) => `  ${s.name.padEnd(23)}${s.description}\n`).join(''), DEFAULT_KAFKA_VERSION));
    return ExitCodes.OK;
  }
  let scenarios;
  try {
    scenarios = findScenarios(values.scenario as string);
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, `--scenario: ${errorMessage(err)}`);
  }
  const positive = (n: number) => Number.isInteger(n) && n > 0;
  const records = numberOption('records', values.records, 10_000, positive, 'a positive integer');
  const rounds = numberOption('rounds', values.rounds, 1, positive, 'a positive integer');
  const partitions = numberOption('partitions', values.partitions, 6, positive, 'a positive integer');
  const format = values.format as string;
  if (!['table', 'json', 'markdown'].includes(format)) throw new EosError(ErrorCodes.USAGE, `--format: expected table, json or markdown, found "${format}"`);
  const version = (values['kafka-version'] as string | undefined) ?? DEFAULT_KAFKA_VERSION;
  const dir = values.dir as string;
  const { resolve, join } = await import('node:path');
  const { mkdir, rm, writeFile } = await import('node:fs/promises');
  const { LocalCluster } = await import('./localcluster/cluster.js');
  const { runScenarios } = await import('./chaos/runner.js');
  const { formatChaosMarkdown, formatChaosTable } = await import('./chaos/report.js');
  const { ProgressLine, fmtDuration } = await import('./progress.js');
  const { fetchKafkaWithProgress } = await import('./localcluster/fetch.js');
  const progress = new ProgressLine();
  const log = (line: string) => progress.log(line);
  const clusterDir = resolve(dir, 'cluster');
  await rm(clusterDir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await fetchKafkaWithProgress(version);
  log(`starting a local 3-node Kafka ${version} cluster in ${clusterDir}`);
  const cluster = await LocalCluster.start({ nodes: 3, version, dir: clusterDir });
  const stop = () => void cluster.down().finally(() => process.exit(ExitCodes.RUNTIME));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const t0 = Date.now();
    const totalRounds = scenarios.length * rounds;
    const finished: number[] = [];
    let current = '';
    let roundStart = t0;
    const run = await runScenarios(cluster, scenarios, {
      records,
      rounds,
      partitions,
      fullSpeed: values['full-speed'] === true,
      workDir: resolve(dir, 'workers'),
      kafkaVersion: version,
      log,
      progress: (p) => {
        const key = `${p.scenario}#${p.round}`;
        if (key !== current) {
          if (current) finished.push(Date.now() - roundStart);
          current = key;
          roundStart = Date.now();
        }
        const index = finished.length + 1;
        const avg = finished.length ? finished.reduce((a, b) => a + b, 0) / finished.length : undefined;
        const eta = avg === undefined ? '' : `, ETA ~${fmtDuration((Math.max(0, avg - (Date.now() - roundStart)) + avg * (totalRounds - index)) / 1000)}`;
        const pct = p.total > 0 ? Math.floor((p.committed * 100) / p.total) : 0;
        progress.update(
          `[${index}/${totalRounds}] ${p.scenario} round ${p.round}: ${p.lastFault ? `${p.lastFault}; ` : 'before the fault; '}pipeline committed ${pct}% of ${p.total.toLocaleString('en-US')}, ` +
            `round ${fmtDuration((Date.now() - roundStart) / 1000)}, total ${fmtDuration((Date.now() - t0) / 1000)}${eta}`,
        );
      },
    });
    progress.done('');
    const text = format === 'json' ? `${JSON.stringify(run, null, 2)}\n` : format === 'markdown' ? formatChaosMarkdown(run) : formatChaosTable(run);
    process.stdout.write(text);
    if (values.out) await writeFile(values.out as string, text);
    log(`worker logs: ${join(resolve(dir), 'workers')}`);
    return run.passed ? ExitCodes.OK : ExitCodes.VIOLATION;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await cluster.down();
  }
}

async function cmdDemo(args: string[]): Promise<number> {
  const { values } = parse(
    args,
    {
      port: { type: 'string' },
      nodes: { type: 'string' },
      'kafka-version': { type: 'string' },
      dir: { type: 'string' },
      rate: { type: 'string' },
      'log-format': { type: 'string' },
      flink: { type: 'boolean' },
      'flink-version': { type: 'string' },
    },
    false,
  );
  if (values.help) {
    process.stdout.write(DEMO_HELP);
    return ExitCodes.OK;
  }
  const port = values.port === undefined ? 7395 : Number(values.port);
  const nodes = values.nodes === undefined ? 3 : Number(values.nodes);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new EosError(ErrorCodes.USAGE, `--port: expected 0-65535, found "${values.port}"`);
  if (nodes !== 1 && nodes !== 3) throw new EosError(ErrorCodes.USAGE, `--nodes: expected 1 or 3, found "${values.nodes}"`);
  const rate = values.rate === undefined ? 200 : Number(values.rate);
  if (!Number.isFinite(rate) || rate <= 0) throw new EosError(ErrorCodes.USAGE, `--rate: expected a positive number, found "${values.rate}"`);
  if (values.flink) {
    const { runFlinkDemo } = await import('./flink/demo.js');
    const version = values['kafka-version'] as string | undefined;
    return runFlinkDemo({ port, nodes, rate, version, flinkVersion: values['flink-version'] as string | undefined, dir: (values.dir as string | undefined) ?? '.eoswatch/demo-flink' });
  }
  const { runDemo } = await import('./demo.js');
  return runDemo({ port, nodes, rate, logFormat: logFormatOption(values['log-format'], 'auto'), version: values['kafka-version'] as string | undefined, dir: (values.dir as string | undefined) ?? '.eoswatch/demo' });
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case undefined:
        process.stderr.write(MAIN_HELP);
        return ExitCodes.USAGE;
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(MAIN_HELP);
        return ExitCodes.OK;
      case '-v':
      case '--version':
        process.stdout.write(`${VERSION}\n`);
        return ExitCodes.OK;
      case 'run':
        return await cmdRun(rest);
      case 'config':
        return await cmdConfig(rest);
      case 'demo':
        return await cmdDemo(rest);
      case 'audit':
        return await cmdAudit(rest);
      case 'verify':
        return await cmdVerify(rest);
      case 'chaos':
        return await cmdChaos(rest);
      case 'topics':
        return await cmdTopics(rest);
      case 'status':
        return await cmdStatus(rest);
      default:
        throw new EosError(ErrorCodes.USAGE, `unknown command "${cmd}"; expected one of: run, audit, verify, chaos, topics create, status, config validate, demo`);
    }
  } catch (err) {
    return reportError(err);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => process.exit(reportError(err)),
  );
}
