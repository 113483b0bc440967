// Composes the services into one process and supervises them: the HTTP server first (so
// /healthz and /metrics answer while services start), then every service at once, each on its
// own (a slow or failing start holds up no other). A service that fails to start, or fails later
// (ServiceContext.failed), costs only itself: it is reported by /readyz and eos_service_ready, and
// is started again after a backoff (src/restart.ts), counted by eos_service_restarts_total.
// Shutdown stops services in reverse order within the grace period.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Router } from 'express';
import type { Config } from './config/types.js';
import type { Logger } from './log.js';
import type { RestartPolicy, Service, ServiceHealth } from './service.js';
import { backoffDelay, nextAttempt } from './restart.js';
import { startHttpServer, type Readiness, type RunningServer } from './http/server.js';
import type { WebConfig } from './http/web-config.js';
import { errorMessage } from './errors.js';

export interface DaemonOptions {
  config: Config;
  /** The web configuration file, already loaded; else http.webConfigFile is read at start. */
  web?: WebConfig;
  logger: Logger;
  registry: Registry;
  services: Service[];
  routes?: { path: string; description: string; router: Router }[];
}

/** The supervisor's view of one service. */
interface Supervised {
  readonly service: Service;
  /** Why it failed, until a start succeeds again. */
  failure?: string;
  /** Failures since the last reset (src/restart.ts nextAttempt). */
  attempt: number;
  startedAt?: number;
  retryAt?: number;
  /** Its restart policy gave up: it stays failed. */
  gaveUp?: boolean;
  timer?: NodeJS.Timeout;
  /** The start attempt in flight: resolves true when its start() succeeded only after stop() was called. */
  starting?: Promise<boolean>;
  stopRequested?: boolean;
}

/**
 * The supervisor's metrics, defined into `registry` (the daemon, and docs/metrics.md's generator):
 * returns the restart counter; eos_service_ready is collected from `readiness` at scrape time.
 */
export function defineSupervisorMetrics(registry: Registry, readiness: () => Readiness): Counter {
  const restarts = new Counter({
    name: 'eos_service_restarts_total',
    help: 'Times the supervisor started a service again after a failed start or a runtime failure.',
    labelNames: ['service'],
    registers: [registry],
  });
  new Gauge({
    name: 'eos_service_ready',
    help: '1 when the service is ready, 0 when it is not (or failed), per enabled service.',
    labelNames: ['service'],
    registers: [registry],
    collect() {
      // In-memory state only: ready() is cheap by contract.
      for (const [name, h] of Object.entries(readiness().services)) this.set({ service: name }, h.ready ? 1 : 0);
    },
  });
  return restarts;
}

export class Daemon {
  private http: RunningServer | undefined;
  private readonly supervised: Supervised[];
  private readonly logger: Logger;
  private readonly restarts: Counter;
  private stopping = false;
  private firstStarts: Promise<void> = Promise.resolve();

  constructor(private readonly opts: DaemonOptions) {
    this.logger = opts.logger;
    this.supervised = opts.services.map((service) => ({ service, attempt: 0 }));
    this.restarts = defineSupervisorMetrics(opts.registry, () => this.readiness());
    for (const s of opts.services) this.restarts.inc({ service: s.name }, 0);
  }

  get url(): string | undefined {
    return this.http?.url;
  }

  get port(): number | undefined {
    return this.http?.port;
  }

  readiness(): Readiness {
    const services: Readiness['services'] = {};
    for (const e of this.supervised) {
      const s = e.service;
      const failure = e.failure;
      let h: ServiceHealth;
      if (failure !== undefined) h = { ready: false, detail: `failed: ${failure}; ${this.retryDetail(e)}` };
      else {
        try {
          h = s.ready();
        } catch (err) {
          h = { ready: false, detail: `ready() threw: ${errorMessage(err)}` };
        }
      }
      services[s.name] = failure !== undefined ? { ...h, failed: true } : h;
    }
    return { ready: Object.values(services).every((h) => h.ready), services };
  }

  private retryDetail(e: Supervised): string {
    if (e.gaveUp) return 'not restarted (its restart strategy gave up)';
    if (e.starting) return `restarting (attempt ${e.attempt + 1})`;
    if (e.retryAt !== undefined) return `restart ${e.attempt} in ${Math.max(0, Math.ceil((e.retryAt - Date.now()) / 1000))} s`;
    return 'restart pending';
  }

  private entry(name: string): Supervised {
    const e = this.supervised.find((x) => x.service.name === name);
    if (!e) throw new Error(`no service named ${name}`);
    return e;
  }

  private get backoff(): RestartPolicy {
    const b = this.opts.config.supervisor;
    return { delay: (attempt) => backoffDelay(b, attempt), resetAfterMs: b.resetAfter };
  }

  /**
   * A running service failed (it has released what it holds): it is restarted after its restart
   * policy's delay, or stays failed when the policy gives up.
   */
  serviceFailed(name: string, err: unknown): void {
    const e = this.entry(name);
    if (this.stopping) return;
    this.logger.error({ service: name, err: errorMessage(err) }, 'service failed');
    e.failure = errorMessage(err);
    const policy = e.service.restartPolicy ?? this.backoff;
    e.attempt = nextAttempt(e.attempt, e.startedAt === undefined ? 0 : Date.now() - e.startedAt, policy.resetAfterMs);
    e.startedAt = undefined;
    const delay = policy.delay(e.attempt);
    if (delay === null) {
      e.gaveUp = true;
      this.logger.error({ service: name, failures: e.attempt }, 'service stays failed: its restart strategy gave up');
      return;
    }
    this.scheduleRestart(e, delay);
  }

  private scheduleRestart(e: Supervised, delay: number): void {
    clearTimeout(e.timer);
    e.retryAt = Date.now() + delay; // when the retry is due, as /readyz shows it (the timer below waits)
    this.logger.warn({ service: e.service.name, attempt: e.attempt, delayMs: delay }, 'restarting the service after a delay');
    e.timer = setTimeout(() => {
      e.timer = undefined;
      e.retryAt = undefined;
      if (this.stopping) return;
      this.restarts.inc({ service: e.service.name });
      void this.attemptStart(e, true);
    }, delay);
  }

  /** One start attempt; a failed start is retried with the supervisor's backoff. */
  private attemptStart(e: Supervised, restart: boolean): Promise<boolean> {
    const s = e.service;
    const run = (async () => {
      if (restart) {
        // Releases whatever the failed run or attempt still holds; a service starts again after stop().
        await s.stop().catch((err: unknown) => this.logger.warn({ service: s.name, err: errorMessage(err) }, 'stop before restart failed'));
      }
      if (this.stopping) return false;
      let late = false;
      try {
        await s.start().then(() => (late = e.stopRequested === true));
      } catch (err) {
        if (this.stopping) return false;
        e.failure = errorMessage(err);
        e.attempt++;
        this.logger.error({ service: s.name, err: e.failure, attempt: e.attempt }, 'service failed to start');
        this.scheduleRestart(e, this.backoff.delay(e.attempt)!);
        return false;
      }
      if (this.stopping) return late;
      e.startedAt = Date.now();
      e.gaveUp = false;
      if (e.failure !== undefined) this.logger.info({ service: s.name, attempt: e.attempt }, 'service started again');
      else this.logger.info({ service: s.name }, 'service started');
      e.failure = undefined;
      return false;
    })();
    e.starting = run;
    return run.finally(() => {
      if (e.starting === run) e.starting = undefined;
    });
  }

  /** Starts the HTTP server, then every service at once; resolves once the server listens. */
  async start(): Promise<void> {
    this.http = await startHttpServer({ registry: this.opts.registry, readiness: () => this.readiness(), routes: this.opts.routes, logger: this.logger }, this.opts.config.http, this.opts.web);
    this.logger.info({ url: this.http.url, tls: this.http.tls }, 'HTTP server listening');
    this.firstStarts = Promise.all(this.supervised.map((e) => this.attemptStart(e, false))).then(() => undefined);
  }

  /** Resolves once the first start attempt of every service has succeeded or failed. */
  firstAttempts(): Promise<void> {
    return this.firstStarts;
  }

  /** Stops every service (reverse order) and the HTTP server; resolves false if the grace period ran out first. */
  async stop(gracePeriodMs = this.opts.config.shutdown.gracePeriod): Promise<boolean> {
    // The grace period bounds the whole stop (the race below); the HTTP server's close gets what is
    // left of it. A bound on a sequence of steps, not a wait for a condition.
    const deadline = Date.now() + gracePeriodMs;
    this.stopping = true;
    for (const e of this.supervised) clearTimeout(e.timer);
    const work = (async () => {
      for (const e of [...this.supervised].reverse()) {
        const s = e.service;
        try {
          // A start still in flight is cut short by stop() (its clients disconnect), then waited
          // for; if it got through anyway, the service is stopped once more.
          const inFlight = e.starting;
          e.stopRequested = true;
          await s.stop();
          if (inFlight && (await inFlight)) await s.stop();
          this.logger.info({ service: s.name }, 'service stopped');
        } catch (err) {
          this.logger.error({ service: s.name, err: errorMessage(err) }, 'service did not stop cleanly');
        }
      }
      await this.http?.close(Math.max(0, deadline - Date.now()));
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), gracePeriodMs);
    });
    const finished = await Promise.race([work.then(() => true as const), timeout]);
    clearTimeout(timer);
    if (!finished) this.logger.error({ gracePeriodMs }, 'shutdown grace period exceeded');
    return finished;
  }
}
