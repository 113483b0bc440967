// `eoswatch demo` / `npm run demo`: a local Kafka cluster started here, eoswatch running against
// it, URLs printed, and on Ctrl-C everything it started stopped by pid.
import { runUntilStopped } from './cli.js';
import { validateConfig } from './config/load.js';
import { createLogger } from './log.js';
import { LocalCluster } from './localcluster/cluster.js';
import { createDaemon } from './services.js';

export interface DemoOptions {
  port: number;
  nodes: 1 | 3;
  version?: string;
  dir: string;
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  const logger = createLogger('info');
  logger.info({ nodes: opts.nodes, dir: opts.dir }, 'starting local Kafka cluster (first run fetches the jars with Maven)');
  const started = Date.now();
  const cluster = await LocalCluster.start({ nodes: opts.nodes, version: opts.version, dir: opts.dir, killOnExit: true });
  logger.info({ bootstrap: cluster.bootstrapServers, version: cluster.version, seconds: (Date.now() - started) / 1000 }, 'Kafka cluster up');
  try {
    const config = validateConfig({ http: { host: '127.0.0.1', port: opts.port }, kafka: { brokers: cluster.brokers } }, '(demo)');
    return await runUntilStopped(async () => {
      const { daemon, fatal } = createDaemon(config, logger);
      await daemon.start();
      process.stdout.write(
        [
          '',
          `eoswatch demo running (Ctrl-C stops everything)`,
          `  Kafka bootstrap servers: ${cluster.bootstrapServers}  (Kafka ${cluster.version}, logs in ${cluster.dir})`,
          `  landing page:            ${daemon.url}/`,
          `  metrics:                 ${daemon.url}/metrics`,
          `  readiness:               ${daemon.url}/readyz`,
          '',
        ].join('\n'),
      );
      return { stop: () => daemon.stop(), fatal };
    }, logger);
  } finally {
    await cluster.down({ keepData: true });
    logger.info({ dir: cluster.dir }, 'Kafka cluster stopped; data and logs kept');
  }
}
