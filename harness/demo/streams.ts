// `npm run demo -- --streams`: a local Kafka cluster started here, two instances of the seed's Kafka
// Streams app (streams/app: demo.orders -> value + 1 -> demo.orders.enriched, exactly_once_v2,
// with a state store) run as java processes, a steady stream of seed records, and eoswatch
// watching the app as a sidecar (streams:, the transactions service, the LSO monitor; no own
// pipeline). On Ctrl-C everything it started is stopped by pid.
import { join } from 'node:path';
import type { Outcome } from '../../src/lifecycle.js';
import { validateConfig } from '../../src/config/load.js';
import { createEngineTopics, demoExitLine, demoTerminal, exitCodeOf, seedStream, serveDemo, type DemoOptions } from './kafka.js';
import { LocalCluster } from '../localcluster/cluster.js';
import { StreamsRun } from '../localcluster/streams-app.js';


const PARTITIONS = 4;
const INSTANCES = 2;
export const STREAMS_DEMO_APPLICATION = 'demo-orders-increment';

export async function runStreamsDemo(opts: DemoOptions): Promise<number> {
  const { out, panel, logger } = demoTerminal(opts.logFormat);
  let outcome: Outcome | undefined;
  let failure: unknown;
  logger.info({ nodes: opts.nodes, dir: opts.dir }, 'starting a local Kafka cluster and the Kafka Streams app (first run fetches the jars and builds the app with Maven)');
  const cluster = await LocalCluster.start({ nodes: opts.nodes, version: opts.version, dir: join(opts.dir, 'kafka'), killOnExit: true });
  try {
    const config = validateConfig(
      {
        http: { host: '127.0.0.1', port: opts.port },
        kafka: { brokers: cluster.brokers, healthCheckInterval: '5s' },
        pipeline: { enabled: false },
        streams: { enabled: true, interval: '2s', applications: [{ applicationId: STREAMS_DEMO_APPLICATION }] },
        transactions: { enabled: true, interval: '2s', idleAfter: '15s' },
        lsoMonitor: { interval: '1s', topics: ['demo.orders', 'demo.orders.enriched'] },
      },
      '(demo --streams)',
    );
    await createEngineTopics(config, logger, PARTITIONS, opts.nodes);
    const streamsDir = join(opts.dir, 'streams');
    const app = await StreamsRun.create(
      {
        bootstrap: cluster.bootstrapServers,
        applicationId: STREAMS_DEMO_APPLICATION,
        input: 'demo.orders',
        output: 'demo.orders.enriched',
        stateful: true,
        properties: {
          // Its internal topics (changelog, repartition) as safe as the demo's own.
          'replication.factor': String(Math.min(3, opts.nodes)),
          ...(opts.nodes === 3 ? { 'topic.min.insync.replicas': '2' } : {}),
          // A killed instance leaves the group when its session times out: 15 s here, so the demo's
          // "break it" shows the rebalance end soon (Kafka's default is 45 s).
          'session.timeout.ms': '15000',
        },
      },
      { dir: streamsDir, killOnExit: true },
    );
    try {
      for (let i = 0; i < INSTANCES; i++) await app.start();
      logger.info({ instances: INSTANCES, dir: streamsDir }, 'Kafka Streams instances RUNNING');
      const seed = seedStream(config.kafka, 'demo.orders', opts.rate, logger);
      try {
        outcome = await serveDemo(config, logger, { out, panel }, (url) => [
          `npm run demo -- --streams running (Ctrl-C stops everything)`,
          `  Kafka ${cluster.version}, ${opts.nodes} node(s): ${cluster.bootstrapServers}`,
          `  app: ${STREAMS_DEMO_APPLICATION}, ${INSTANCES} instances (exactly_once_v2, a state store): demo.orders -> value + 1 -> demo.orders.enriched, ${opts.rate} seed records/s`,
          `  status page:   ${url}/`,
          `  metrics:       ${url}/metrics   (pipeline="${STREAMS_DEMO_APPLICATION}", engine="streams"; eos_coordinator_*{application="${STREAMS_DEMO_APPLICATION}"})`,
          `  streams:       ${url}/streams   transactions: ${url}/transactions`,
          `  readiness:     ${url}/readyz`,
          `  break it:      npm run streams -- kill --instance 1 --dir ${streamsDir}   (start --instance 1 --dir ${streamsDir} brings it back: a rebalance, its open transaction listed until aborted)`,
          `  summary:       npx eoswatch status --url ${url}`,
        ]);
        return outcome.code;
      } finally {
        await seed.stop();
      }
    } finally {
      // The instances got SIGTERM (KafkaStreams.close) with a short grace: the demo's data is kept.
      await app.stopAll({ graceMs: 10_000 });
    }
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    await cluster.down({ keepData: true }).catch((err: unknown) => logger.error({ err: (err as Error).message }, 'stopping the Kafka cluster failed'));
    logger.info({ dir: opts.dir, exitCode: exitCodeOf(outcome, failure) }, demoExitLine(outcome, failure, 'demo --streams', 'Kafka cluster and Streams instances'));
  }
}
