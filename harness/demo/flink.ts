// `npm run demo -- --flink`: a local Kafka cluster and a local Flink session cluster started here,
// the seed's job (flink/job: demo.orders -> value + 1 -> demo.orders.enriched, EXACTLY_ONCE)
// submitted to it, a steady stream of seed records, and eoswatch watching the job as a sidecar
// (flink: only, no own pipeline). On Ctrl-C everything it started is stopped by pid.
import { join } from 'node:path';
import type { Outcome } from '../../src/lifecycle.js';
import { validateConfig } from '../../src/config/load.js';
import { createEngineTopics, demoExitLine, demoTerminal, exitCodeOf, seedStream, serveDemo, type DemoOptions } from './kafka.js';
import { LocalCluster } from '../localcluster/cluster.js';
import { LocalFlinkCluster } from '../localcluster/flink-cluster.js';

export interface FlinkDemoOptions extends DemoOptions {
  flinkVersion?: string;
}

const PARTITIONS = 2;
const JOB_NAME = 'demo-orders-increment';

export async function runFlinkDemo(opts: FlinkDemoOptions): Promise<number> {
  // As the demo: pretty logs and a live summary on a terminal, JSON in a captured log.
  const { out, panel, logger } = demoTerminal(opts.logFormat);
  let outcome: Outcome | undefined;
  let failure: unknown;
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
      await createEngineTopics(config, logger, PARTITIONS, opts.nodes);
      const jobId = await flink.submit({ bootstrap: cluster.bootstrapServers, sourceTopic: 'demo.orders', sinkTopic: 'demo.orders.enriched', args: { name: JOB_NAME } });
      logger.info({ jobId, rest: flink.restUrl }, 'Flink job submitted');
      const seed = seedStream(config.kafka, 'demo.orders', opts.rate, logger);
      try {
        outcome = await serveDemo(config, logger, { out, panel }, (url) => [
          `npm run demo -- --flink running (Ctrl-C stops everything)`,
          `  Kafka ${cluster.version}, ${opts.nodes} node(s): ${cluster.bootstrapServers}`,
          `  Flink ${flink.state.version}: ${flink.restUrl}  job ${JOB_NAME} (${jobId}), data and logs in ${opts.dir}`,
          `  job: demo.orders -> value + 1 -> demo.orders.enriched (KafkaSink EXACTLY_ONCE), ${opts.rate} seed records/s`,
          `  status page:   ${url}/`,
          `  metrics:       ${url}/metrics   (pipeline="${JOB_NAME}", engine="flink"; eos_flink_sink_visibility_latency_seconds: checkpoint completion to visible)`,
          `  audit:         ${url}/audit`,
          `  readiness:     ${url}/readyz`,
          `  break it:      npm run flink -- kill-tm 1 --dir ${join(opts.dir, 'flink')}   (start-tm 1 to bring it back)`,
          `  summary:       npx eoswatch status --url ${url}`,
        ]);
        return outcome.code;
      } finally {
        await seed.stop();
      }
    } finally {
      await flink.down({ keepData: true });
    }
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    await cluster.down({ keepData: true }).catch((err: unknown) => logger.error({ err: (err as Error).message }, 'stopping the Kafka cluster failed'));
    // The last line says why the demo ended.
    logger.info({ dir: opts.dir, exitCode: exitCodeOf(outcome, failure) }, demoExitLine(outcome, failure, 'demo --flink', 'Kafka and Flink clusters'));
  }
}
