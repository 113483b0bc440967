// `npm run demo` / `npm run demo`: a local Kafka cluster started here, source, sink and
// dead-letter topics, a steady stream of seed records, the transactional pipeline and the
// exporter; URLs printed; on Ctrl-C everything it started is stopped by pid.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Partitioners } from 'kafkajs';
import { runUntilStoppedOutcome, type Outcome } from '../../src/lifecycle.js';
import { validateConfig } from '../../src/config/load.js';
import { createConfiguredTopics, topicsOfConfig } from '../../src/kafka/topics.js';
import { createKafka } from '../../src/kafka/client.js';
import { ensureTopics } from '../../src/kafka/admin.js';
import { createLogger, type Logger } from '../../src/log.js';
import { LocalCluster } from '../localcluster/cluster.js';
import { DEFAULT_KAFKA_VERSION } from '../localcluster/kafka-dist.js';
import { fetchKafkaWithProgress } from '../localcluster/fetch.js';
import { LivePanel } from '../../src/status/live.js';
import { StatusReader } from '../../src/status/reader.js';
import { formatSummary } from '../../src/status/summary.js';
import { createDaemon } from '../../src/create-daemon.js';
import type { Config, KafkaConfig, LogFormat } from '../../src/config/types.js';
import { logDestination } from '../../src/log-format.js';

export interface DemoOptions {
  port: number;
  nodes: 1 | 3;
  version?: string;
  dir: string;
  /** Seed records per second written to the source topic. */
  rate: number;
  logFormat: LogFormat;
}

const PARTITIONS = 6;

/** How long stopping the seed producer may take: a send stuck on a paused broker is not waited for longer. */
const SEED_STOP_MS = 5000;

/** Writes seed records {id, ts, value} at a steady rate until stopped. */
export function seedStream(kafka: KafkaConfig, topic: string, rate: number, logger: Logger): { stop: () => Promise<void> } {
  const client = createKafka(kafka, logger, { clientId: 'eoswatch-demo-seed' });
  const newProducer = () => client.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  // kafkajs' idempotent producer takes a sequence number back after a failed request even when the
  // broker wrote the batch (a request that timed out, a connection lost after the write): every
  // later batch then meets OUT_OF_ORDER_SEQUENCE_NUMBER, for as long as the producer lives (the
  // demo logged 634 of them during one shutdown). After a failed send the seed stream starts
  // over with a new producer, so a new producer id; the seed records lost with it are only input.
  let producer = newProducer();
  let connected = false;
  let running = true;
  let value = 0;
  let failed = 0;
  let lastWarnAt = 0;
  const tickMs = 100;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const n = Math.max(1, Math.round((rate * tickMs) / 1000));
      const messages = Array.from({ length: n }, () => {
        const id = randomUUID();
        return { key: id, value: JSON.stringify({ id, ts: Date.now(), value: value++ }) };
      });
      try {
        if (!connected) {
          await producer.connect();
          connected = true;
        }
        await producer.send({ topic, acks: -1, messages });
        if (failed) logger.info({ failedSends: failed }, 'demo seed producer: sends succeed again');
        failed = 0;
      } catch (err) {
        failed++;
        // One warning when sends start failing, then one every 30 s with the count.
        if (failed === 1 || Date.now() - lastWarnAt > 30_000) {
          logger.warn({ err: (err as Error).message, failedSends: failed }, 'demo seed producer: send failed; starting over with a new producer');
          lastWarnAt = Date.now();
        }
        const old = producer;
        producer = newProducer();
        connected = false;
        await Promise.race([old.disconnect().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000).unref())]);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, tickMs - (Date.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      // A send to a paused broker hangs in kafkajs' retries: give up waiting after SEED_STOP_MS.
      let timer: NodeJS.Timeout | undefined;
      const bounded = <T>(p: Promise<T>) =>
        Promise.race([p.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, SEED_STOP_MS).unref()))]).finally(() => clearTimeout(timer));
      await bounded(loop);
      await bounded(producer.disconnect());
    },
  };
}

/** The demo's eoswatch configuration; a shipped configuration like the others (test/integration/shipped-configs.test.ts). */
export function demoConfig(brokers: string[], port: number): Config {
  return validateConfig(
    {
      http: { host: '127.0.0.1', port },
      kafka: { brokers, healthCheckInterval: '5s' },
      pipeline: {
        enabled: true,
        name: 'demo',
        sourceTopic: 'demo.orders',
        sinkTopic: 'demo.orders.enriched',
        deadLetterTopic: 'demo.orders.dlq',
        groupId: 'eoswatch-demo',
        transactionalIdPrefix: 'eoswatch-demo',
        // none, as in production: the topics are created with the group's offsets at their start.
        startFrom: 'none',
        transform: 'increment',
        checkpoint: { interval: '1s', timeout: '30s' },
        // The demo is there to be broken (kill a broker, pause one): a FAILED pipeline is restarted
        // in-process and the demo keeps serving, whatever the example config says for production
        // (onFailure: exit, the orchestrator restarts the process). Restarts come quickly and keep
        // coming while a broker is down, counted by eos_service_restarts_total{service="pipeline"}.
        onFailure: 'keep-serving',
        restartStrategy: { type: 'exponential-delay', attempts: 0, initialBackoff: '1s', maxBackoff: '10s', multiplier: 2, jitter: 0.2, resetAfter: '1m' },
      },
      // 10 canary records/s through the same pipeline; the LSO monitor watches both topics.
      canary: { enabled: true, id: 'demo', rate: 10, lostAfter: '1m' },
      lsoMonitor: { interval: '2s' },
    },
    '(demo)',
  );
}

/** What to do from another terminal while the demo runs, and what the summary then shows. */
export function demoInstructions(opts: { dir: string; nodes: number; url: string }): string {
  const kafka = (cmd: string) => `npm run kafka -- ${cmd} --dir ${opts.dir}`;
  const broker = opts.nodes > 1 ? 2 : 1;
  const lines = [
    'Break it from another terminal and watch the summary below:',
    `  ${kafka(`kill ${broker}`).padEnd(48)} SIGKILL broker ${broker}${opts.nodes > 1 ? ': checkpoints slow down for a few seconds, none fails; commits go on on the other two' : ': the only broker; Kafka unreachable, checkpoints stop'}`,
    `  ${kafka(`start ${broker}`).padEnd(48)} start it again: checkpoints complete, pending returns to 0-1`,
    `  ${kafka('pause 1').padEnd(48)} SIGSTOP broker 1 (resume 1 to continue): LSO lag grows while a transaction waits`,
    `  ${kafka('status').padEnd(48)} the nodes, their pids and ports`,
    `  ${`npx eoswatch status --url ${opts.url}`.padEnd(48)} this summary once (exit 3 when an alert fires)`,
    'Whatever you break, canary duplicates and lost must stay 0: that is exactly-once.',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The demos' terminal: everything the demo and its logger write goes through `out`, so the live
 * summary knows when other lines came in between (and then prints afresh instead of overwriting
 * them); logs are pretty on a terminal (auto), JSON in a captured log.
 */
export function demoTerminal(logFormat: LogFormat): { out: Writable; panel: LivePanel; logger: Logger } {
  const tty = Boolean(process.stdout.isTTY);
  const panel = new LivePanel(process.stdout, tty);
  const out = new Writable({
    write(chunk, _enc, cb) {
      panel.touched();
      // Handed on at once, not after stdout's callback: a line logged just before process.exit
      // (the last line, saying why) must not wait in this stream's buffer.
      process.stdout.write(chunk);
      cb();
    },
  });
  const logger = createLogger('info', logDestination(logFormat, { destination: out, isTTY: tty }) ?? out);
  return { out, panel, logger };
}

/** The live summary of the daemon at url, redrawn every 5 s; returns its stop. */
export function liveSummary(url: string, panel: LivePanel): () => void {
  const reader = new StatusReader(url);
  const refresh = setInterval(() => {
    reader.read().then(
      (s) => panel.draw(formatSummary(s)),
      () => undefined,
    );
  }, 5000);
  return () => clearInterval(refresh);
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  const { out, panel, logger } = demoTerminal(opts.logFormat);
  logger.info({ nodes: opts.nodes, dir: opts.dir }, 'starting local Kafka cluster (first run fetches the jars with Maven)');
  await fetchKafkaWithProgress(opts.version ?? DEFAULT_KAFKA_VERSION);
  const started = Date.now();
  const cluster = await LocalCluster.start({ nodes: opts.nodes, version: opts.version, dir: opts.dir, killOnExit: true });
  logger.info({ bootstrap: cluster.bootstrapServers, version: cluster.version, seconds: (Date.now() - started) / 1000 }, 'Kafka cluster up');
  let outcome: Outcome | undefined;
  let failure: unknown;
  try {
    const config = demoConfig(cluster.brokers, opts.port);
    if (config.pipeline.enabled) {
      logger.info(
        { onFailure: config.pipeline.onFailure, restartStrategy: config.pipeline.restartStrategy },
        'demo pipeline: a FAILED pipeline is restarted in-process and the demo keeps serving (production: see pipeline.onFailure)',
      );
    }
    // The topics as `eoswatch topics create` makes them: RF 3 / min ISR 2 on 3 nodes (1 node: unsafe,
    // which the audit explains), the pipeline group starting at the beginning of the new source topic.
    const topics = await createConfiguredTopics(
      createKafka(config.kafka, logger),
      topicsOfConfig(config),
      { names: [], partitions: PARTITIONS, allowUnsafe: opts.nodes < 3 },
      false,
    );
    logger.info({ topics: topics.outcomes.map((o) => `${o.topic} ${o.result}`), replicationFactor: topics.plan.replicationFactor }, 'demo topics ready');
    const seed = seedStream(config.kafka, 'demo.orders', opts.rate, logger);
    try {
      outcome = await serveDemo(config, logger, { out, panel }, (url) => [
        `npm run demo running (Ctrl-C stops everything)`,
        `  Kafka ${cluster.version}, ${opts.nodes} node(s): ${cluster.bootstrapServers}  (data and logs in ${cluster.dir})`,
        `  pipeline: demo.orders -> increment -> demo.orders.enriched (dead letters: demo.orders.dlq), ${opts.rate} seed records/s`,
        `  status page:   ${url}/`,
        `  metrics:       ${url}/metrics`,
        `  readiness:     ${url}/readyz`,
        `  audit:         ${url}/audit?failing=1&pretty=1`,
        '',
        demoInstructions({ dir: opts.dir, nodes: opts.nodes, url }),
      ]);
      return outcome.code;
    } finally {
      await seed.stop();
    }
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    await cluster.down({ keepData: true }).catch((err: unknown) => logger.error({ err: (err as Error).message }, 'stopping the Kafka cluster failed'));
    // The demo's last line says why it ended.
    logger.info({ dir: cluster.dir, exitCode: exitCodeOf(outcome, failure) }, demoExitLine(outcome, failure));
  }
}

/** The topics an engine's demo (Flink, Streams) reads and writes: demo.orders and demo.orders.enriched, RF up to 3. */
export async function createEngineTopics(config: Config, logger: Logger, partitions: number, nodes: number): Promise<void> {
  const admin = createKafka(config.kafka, logger).admin();
  await admin.connect();
  try {
    await ensureTopics(admin, ['demo.orders', 'demo.orders.enriched'].map((topic) => ({ topic, numPartitions: partitions, replicationFactor: Math.min(3, nodes) })));
  } finally {
    await admin.disconnect();
  }
}

/**
 * A demo's daemon until Ctrl-C or a fatal error: started, its banner printed (the URLs, what to
 * try: `banner` gets the daemon's URL), the live summary every 5 s on a terminal, every 30 s in a
 * captured log. Resolves with why it ended.
 */
export function serveDemo(config: Config, logger: Logger, term: { out: Writable; panel: LivePanel }, banner: (url: string) => string[]): Promise<Outcome> {
  return runUntilStoppedOutcome(async () => {
    const { daemon, fatal } = createDaemon(config, logger);
    await daemon.start();
    term.out.write(['', ...banner(daemon.url!), ''].join('\n'));
    const stopSummary = liveSummary(daemon.url!, term.panel);
    return {
      stop: () => {
        stopSummary();
        return daemon.stop();
      },
      fatal,
    };
  }, logger, { gracePeriodMs: config.shutdown.gracePeriod });
}

export function exitCodeOf(outcome: Outcome | undefined, failure: unknown): number {
  return outcome?.code ?? (failure === undefined ? 0 : 1);
}

/** A demo's last line: why it ended, and what it stopped (`demo --flink`: the Kafka and Flink clusters). Pure. */
export function demoExitLine(outcome: Outcome | undefined, failure: unknown, demo = 'demo', stopped = 'Kafka cluster'): string {
  const why = outcome ? outcome.why : failure !== undefined ? `error: ${failure instanceof Error ? failure.message.split('\n')[0] : String(failure)}` : 'unknown reason';
  return `${demo} exiting (${why}, exit code ${exitCodeOf(outcome, failure)}): ${stopped} stopped, data and logs kept`;
}
