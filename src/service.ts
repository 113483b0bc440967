// A service is one job of the daemon (pipeline, audit, canary, Kafka health…), composed by
// src/daemon.ts. start() resolves once the service runs; ready() is cheap and in-memory (it is
// read by /readyz and by a scrape); stop() releases everything the service holds. A service must
// start again after stop(): the supervisor restarts a failed one that way.
import { Router } from 'express';
import type { Kafka, RetryOptions } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Config, KafkaConfig } from './config/types.js';
import type { Logger } from './log.js';
import { redactValue } from './redact.js';

export interface ServiceHealth {
  ready: boolean;
  /** Why it is not ready, or a short state description. */
  detail?: string;
}

/** Every service's health, as /readyz serves it. */
export interface Readiness {
  ready: boolean;
  services: Record<string, ServiceHealth & { failed?: boolean }>;
}

export interface Service {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  ready(): ServiceHealth;
  /**
   * How a runtime failure (reported with ServiceContext.failed) is restarted. Without it the
   * supervisor's backoff applies; start failures always use the supervisor's backoff.
   */
  readonly restartPolicy?: RestartPolicy;
}

export interface RestartPolicy {
  /** ms to wait before restarting after failure number `attempt` (1-based), or null to stay failed. */
  delay(attempt: number): number | null;
  /** A service that ran this long before failing counts its failures from 1 again. */
  resetAfterMs: number;
}

/** What a service factory receives from the daemon. */
export interface ServiceContext {
  logger: Logger;
  registry: Registry;
  /** A service that cannot go on (e.g. a FAILED pipeline) asks the daemon to shut down with this error. */
  fatal(err: Error): void;
  /** A running service failed and has released what it holds: the supervisor restarts it later (absent outside the daemon, e.g. in tests). */
  failed?(err: Error): void;
}

/** A route a service serves on the daemon's HTTP server (listed on the index page). */
export interface ServiceRoute {
  path: string;
  description: string;
  router: Router;
}

/** What a service definition's factory receives. */
export interface ServiceEnv {
  config: Config;
  /** The service's context: its logger (with `service: <name>`), the registry, fatal/failed. */
  ctx: ServiceContext;
  /**
   * A kafkajs client of its own on the configured cluster (kafka.*), with the logger of its
   * service: `overrides` replace settings of the kafka section (e.g. a shorter requestTimeout),
   * `retry` is kafkajs' retry of this client.
   */
  kafka(overrides?: Partial<KafkaConfig>, retry?: RetryOptions): Kafka;
  /** The services built before this one (earlier in src/services.ts), by their definition. */
  peers: Peers;
  /** The daemon's readiness of every service (the status page reads it; call it once the daemon runs). */
  readiness(): Readiness;
}

export interface Peers {
  /** The instance of a definition built earlier, or undefined when it is switched off (or later in the registry). */
  get<S extends Service>(def: ServiceDefinition<S>): S | undefined;
}

/**
 * One service of the daemon, the way node_exporter registers a collector: declared in the
 * service's own file, listed once in src/services.ts. The daemon (src/create-daemon.ts) builds the
 * enabled ones in the registry's order, supervises them (restarts, readiness: src/daemon.ts) and
 * serves their routes; their scheduled runs are measured by src/runtime/runs.ts.
 */
export interface ServiceDefinition<S extends Service = Service> {
  /** Its name: the `service` label, the logger's `service` field, its key in /readyz. */
  readonly name: string;
  /** The configuration section that configures it (named in docs and errors). */
  readonly section: string;
  /** Whether the configuration switches it on. */
  enabled(config: Config): boolean;
  /** Builds it (no I/O: start() does that); routes it serves, if any. */
  create(env: ServiceEnv): { service: S; routes?: ServiceRoute[] };
}

/** A service definition, typed by the service it builds. */
export function defineService<S extends Service>(def: ServiceDefinition<S>): ServiceDefinition<S> {
  return def;
}

/**
 * A service's last report as a JSON route (GET /, `?pretty=1` indents it for people): 503 with what
 * is awaited until the first report, then 200 with the report, redacted (src/redact.ts).
 */
export function jsonReportRouter(report: () => unknown, pending: () => string): Router {
  const r = Router();
  r.get('/', (req, res) => {
    const pretty = ['1', 'true', ''].includes(String(req.query.pretty ?? 'no'));
    const send = (status: number, body: unknown) => res.status(status).type('application/json').send(`${JSON.stringify(redactValue(body), null, pretty ? 2 : undefined)}\n`);
    const body = report();
    if (body === undefined) send(503, { status: pending() });
    else send(200, body);
  });
  return r;
}
