// Builds the daemon from a config: one entry per service, switched on by its config section,
// the way node_exporter registers collectors. Adding a service = its module + one line here.
import type { Config } from './config/types.js';
import { Daemon } from './daemon.js';
import { createKafka } from './kafka/client.js';
import { KafkaHealthService } from './kafka/health.js';
import type { Logger } from './log.js';
import { createRegistry } from './metrics/registry.js';
import type { Service, ServiceContext } from './service.js';

export interface BuiltDaemon {
  daemon: Daemon;
  /** Resolves with the error of the first service that declared itself fatal. */
  fatal: Promise<Error>;
}

export function createDaemon(config: Config, logger: Logger): BuiltDaemon {
  const registry = createRegistry();
  let reportFatal: (err: Error) => void = () => undefined;
  const fatal = new Promise<Error>((resolve) => {
    reportFatal = resolve;
  });
  const context = (name: string): ServiceContext => ({
    logger: logger.child({ service: name }),
    registry,
    fatal: (err) => reportFatal(err),
  });
  const services: Service[] = [];

  const health = context('kafka-health');
  services.push(new KafkaHealthService(createKafka(config.kafka, health.logger, { retry: { retries: 0 } }), config.kafka.healthCheckInterval, health));

  return { daemon: new Daemon({ config, logger, registry, services }), fatal };
}
