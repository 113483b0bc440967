// Builds the daemon from a config: every service of the registry (src/services.ts) that its
// configuration switches on, in the registry's order, the way node_exporter builds its enabled
// collectors. Each gets its context (a logger with its name, the registry, fatal/failed), kafkajs
// clients of its own and the services built before it; the daemon supervises them and serves
// their routes. Nothing service-specific is written here.
import type { WebConfig } from './http/web-config.js';
import type { Config } from './config/types.js';
import { Daemon } from './daemon.js';
import { createKafka } from './kafka/client.js';
import type { Logger } from './log.js';
import { createRegistry } from './metrics/registry.js';
import { SERVICES } from './services.js';
import type { Peers, Service, ServiceContext, ServiceDefinition, ServiceRoute } from './service.js';

export interface BuiltDaemon {
  daemon: Daemon;
  /** Resolves with the error of the first service that declared itself fatal. */
  fatal: Promise<Error>;
}

/** `web`: the web configuration file already loaded (src/commands/options.ts webSettings); else the daemon reads http.webConfigFile. */
export function createDaemon(config: Config, logger: Logger, web?: WebConfig, registryOfServices: readonly ServiceDefinition[] = SERVICES): BuiltDaemon {
  const registry = createRegistry();
  let reportFatal: (err: Error) => void = () => undefined;
  const fatal = new Promise<Error>((resolve) => {
    reportFatal = resolve;
  });
  let daemon: Daemon | undefined;
  const context = (name: string): ServiceContext => ({
    logger: logger.child({ service: name }),
    registry,
    fatal: (err) => reportFatal(err),
    failed: (err) => daemon?.serviceFailed(name, err),
  });
  const built = new Map<ServiceDefinition, Service>();
  const peers: Peers = { get: <S extends Service>(def: ServiceDefinition<S>) => built.get(def) as S | undefined };
  const services: Service[] = [];
  const routes: ServiceRoute[] = [];
  for (const def of registryOfServices) {
    if (!def.enabled(config)) continue;
    const ctx = context(def.name);
    const made = def.create({
      config,
      ctx,
      kafka: (overrides = {}, retry) => createKafka({ ...config.kafka, ...overrides }, ctx.logger, retry ? { retry } : {}),
      peers,
      readiness: () => daemon!.readiness(),
    });
    // The name is the service's label and /readyz key: a definition and its service agree on it.
    if (made.service.name !== def.name) throw new Error(`service definition ${def.name} built a service named ${made.service.name}`);
    built.set(def, made.service);
    services.push(made.service);
    routes.push(...(made.routes ?? []));
  }
  daemon = new Daemon({ config, ...(web ? { web } : {}), logger, registry, services, routes });
  return { daemon, fatal };
}
