// `eoswatch demo` / `npm run demo`: a local Kafka cluster started here, source, sink and
// dead-letter topics, a steady stream of seed records, the transactional pipeline and the
// exporter; URLs printed; on Ctrl-C everything it started is stopped by pid.
import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { runUntilStopped } from './cli.js';
import { validateConfig } from './config/load.js';
import { ensureTopics } from './kafka/admin.js';
import { createKafka } from './kafka/client.js';
import { createLogger, type Logger } from './log.js';
import { LocalCluster } from './localcluster/cluster.js';
import { createDaemon } from './services.js';
import type { KafkaConfig } from './config/types.js';

export interface DemoOptions {
  port: number;
  nodes: 1 | 3;
  version?: string;
  dir: string;
  /** Seed records per second written to the source topic. */
  rate: number;
}

const PARTITIONS = 6;

/** Writes seed records {id, ts, value} at a steady rate until stopped. */
export function seedStream(kafka: KafkaConfig, topic: string, rate: number, logger: Logger): { stop: () => Promise<void> } {
  const producer = createKafka(kafka, logger, { clientId: 'eoswatch-demo-seed' }).producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  let running = true;
  let value = 0;
  const tickMs = 100;
  const loop = (async () => {
    await producer.connect();
    while (running) {
      const started = Date.now();
      const n = Math.max(1, Math.round((rate * tickMs) / 1000));
      const messages = Array.from({ length: n }, () => {
        const id = randomUUID();
        return { key: id, value: JSON.stringify({ id, ts: Date.now(), value: value++ }) };
      });
      try {
        await producer.send({ topic, acks: -1, messages });
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'demo seed producer: send failed');
      }
      await new Promise((r) => setTimeout(r, Math.max(0, tickMs - (Date.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop.catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    },
  };
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  const logger = createLogger('info');
  logger.info({ nodes: opts.nodes, dir: opts.dir }, 'starting local Kafka cluster (first run fetches the jars with Maven)');
  const started = Date.now();
  const cluster = await LocalCluster.start({ nodes: opts.nodes, version: opts.version, dir: opts.dir, killOnExit: true });
  logger.info({ bootstrap: cluster.bootstrapServers, version: cluster.version, seconds: (Date.now() - started) / 1000 }, 'Kafka cluster up');
  const rf = Math.min(3, opts.nodes);
  try {
    const config = validateConfig(
      {
        http: { host: '127.0.0.1', port: opts.port },
        kafka: { brokers: cluster.brokers, healthCheckInterval: '5s' },
        pipeline: {
          enabled: true,
          name: 'demo',
          sourceTopic: 'demo.orders',
          sinkTopic: 'demo.orders.enriched',
          deadLetterTopic: 'demo.orders.dlq',
          groupId: 'eoswatch-demo',
          transactionalIdPrefix: 'eoswatch-demo',
          // A fresh cluster has no committed offsets: bootstrap from the beginning (logged as a warning).
          startFrom: 'earliest',
          transform: 'increment',
          checkpoint: { interval: '1s', timeout: '30s' },
        },
        // 10 canary records/s through the same pipeline; the LSO monitor watches both topics.
        canary: { enabled: true, id: 'demo', rate: 10, lostAfter: '1m' },
        lsoMonitor: { interval: '2s' },
      },
      '(demo)',
    );
    const admin = createKafka(config.kafka, logger).admin();
    await admin.connect();
    await ensureTopics(
      admin,
      ['demo.orders', 'demo.orders.enriched', 'demo.orders.dlq'].map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: rf })),
    );
    await admin.disconnect();
    const seed = seedStream(config.kafka, 'demo.orders', opts.rate, logger);
    try {
      return await runUntilStopped(async () => {
        const { daemon, fatal } = createDaemon(config, logger);
        await daemon.start();
        process.stdout.write(
          [
            '',
            `eoswatch demo running (Ctrl-C stops everything)`,
            `  Kafka ${cluster.version}, ${opts.nodes} node(s): ${cluster.bootstrapServers}  (data and logs in ${cluster.dir})`,
            `  pipeline: demo.orders -> increment -> demo.orders.enriched (dead letters: demo.orders.dlq), ${opts.rate} seed records/s`,
            `  landing page:  ${daemon.url}/`,
            `  metrics:       ${daemon.url}/metrics`,
            `  readiness:     ${daemon.url}/readyz`,
            '',
          ].join('\n'),
        );
        return { stop: () => daemon.stop(), fatal };
      }, logger);
    } finally {
      await seed.stop();
    }
  } finally {
    await cluster.down({ keepData: true });
    logger.info({ dir: cluster.dir }, 'Kafka cluster stopped; data and logs kept');
  }
}
