// A service is one job of the daemon (pipeline, audit, canary, Kafka health…), composed by
// src/daemon.ts. start() resolves once the service runs; ready() is cheap and in-memory (it is
// read by /readyz and by a scrape); stop() releases everything the service holds. A service must
// start again after stop(): the supervisor restarts a failed one that way.
import type { Registry } from 'prom-client';
import type { Logger } from './log.js';

export interface ServiceHealth {
  ready: boolean;
  /** Why it is not ready, or a short state description. */
  detail?: string;
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
