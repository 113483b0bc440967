// `eoswatch demo --flink`: a local Kafka cluster and a local Flink session cluster started here,
// the seed's job (flink/job: demo.orders -> value + 1 -> demo.orders.enriched, EXACTLY_ONCE)
// submitted to it, a steady stream of seed records, and eoswatch watching the job as a sidecar
// (flink: only, no own pipeline). On Ctrl-C everything it started is stopped by pid.
import { join } from 'node:path';
import { runUntilStopped } from '../lifecycle.js';
import { validateConfig } from '../config/load.js';
import { seedStream } from '../demo.js';
import { ensureTopics } from '../kafka/admin.js';
import { createKafka } from '../kafka/client.js';
import { createLogger } from '../log.js';
import { LocalCluster } from '../localcluster/cluster.js';
import { LocalFlinkCluster } from '../localcluster/flink-cluster.js';
import { createDaemon } from '../create-daemon.js';

export interface FlinkDemoOptions {
  port: number;
  nodes: 1 | 3;
  version?: string;
  flinkVersion?: string;
  dir: string;
  rate: number;
}

const PARTITIONS = 2;
const JOB_NAME = 'demo-orders-increment';

export async function runFlinkDemo(opts: FlinkDemoOptions): Promise<number> {
  const logger = createLogger('info');
  logger.info({ nodes: opts.nodes, dir: opts.dir }, 'starting local Kafka and Flink clusters (first run fetches the jars with Maven)');
  const cluster = await LocalCluster.start({ nodes: opts.nodes, version: opts.version, dir: join(opts.dir, 'kafka'), killOnExit: true });
  try {
    const flink = await LocalFlinkCluster.start({ version: opts.flinkVersion, dir: join(opts.dir, 'flink'), taskManagers: 1, slots: 2, killOnExit: true });
    try {
      const config = validateConfig(
        {
          http: { host: '127.0.0.1', port: opts.port },
          kafka: { brokers: cluster.brokers, healthCheckInterval: '5s' },
          pipeline: { enabled: false },
          flink: { enabled: true, restUrls: [flink.restUrl], pollInterval: '2s', sinks: [{ job: JOB_NAME, topics: ['demo.orders.enriched'] }] },
          lsoMonitor: { interval: '1s' },
        },
        '(demo --flink)',
      );
      const admin = createKafka(config.kafka, logger).admin();
      await admin.connect();
      await ensureTopics(
        admin,
        ['demo.orders', 'demo.orders.enriched'].map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: Math.min(3, opts.nodes) })),
      );
      await admin.disconnect();
      const jobId = await flink.submit({ bootstrap: cluster.bootstrapServers, sourceTopic: 'demo.orders', sinkTopic: 'demo.orders.enriched', args: { name: JOB_NAME } });
      logger.info({ jobId, rest: flink.restUrl }, 'Flink job submitted');
      const seed = seedStream(config.kafka, 'demo.orders', opts.rate, logger);
      try {
        return await runUntilStopped(async () => {
          const { daemon, fatal } = createDaemon(config, logger);
          await daemon.start();
          process.stdout.write(
            [
              '',
              `eoswatch demo --flink running (Ctrl-C stops everything)`,
              `  Kafka ${cluster.version}, ${opts.nodes} node(s): ${cluster.bootstrapServers}`,
              `  Flink ${flink.state.version}: ${flink.restUrl}  job ${JOB_NAME} (${jobId}), data and logs in ${opts.dir}`,
              `  job: demo.orders -> value + 1 -> demo.orders.enriched (KafkaSink EXACTLY_ONCE), ${opts.rate} seed records/s`,
              `  metrics:       ${daemon.url}/metrics   (pipeline="${JOB_NAME}", engine="flink"; eos_flink_sink_visibility_latency_seconds: checkpoint completion to visible)`,
              `  audit:         ${daemon.url}/audit`,
              `  readiness:     ${daemon.url}/readyz`,
              `  break it:      npm run flink -- kill-tm 1 --dir ${join(opts.dir, 'flink')}`,
              '',
            ].join('\n'),
          );
          return { stop: () => daemon.stop(), fatal };
        }, logger);
      } finally {
        await seed.stop();
      }
    } finally {
      await flink.down({ keepData: true });
    }
  } finally {
    await cluster.down({ keepData: true });
    logger.info({ dir: opts.dir }, 'Kafka and Flink clusters stopped; data and logs kept');
  }
}
