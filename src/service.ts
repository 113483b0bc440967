// A service is one job of the daemon (pipeline, audit, canary, Kafka health…), composed by
// src/daemon.ts. start() resolves once the service runs; ready() is cheap and in-memory (it is
// read by /readyz and by a scrape); stop() releases everything the service holds.
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
}

/** What a service factory receives from the daemon. */
export interface ServiceContext {
  logger: Logger;
  registry: Registry;
  /** A service that cannot go on (e.g. a FAILED pipeline) asks the daemon to shut down with this error. */
  fatal(err: Error): void;
}
