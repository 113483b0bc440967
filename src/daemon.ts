// Composes the services into one process: the HTTP server first (so /healthz and /metrics
// answer while services start), then each service. A service that fails to start, or fails
// later, costs only itself: it is reported by /readyz and eos_service_ready, and the HTTP server
// stays up. Shutdown stops services in reverse order within the grace period.
import { Gauge, type Registry } from 'prom-client';
import type { Router } from 'express';
import type { Config } from './config/types.js';
import type { Logger } from './log.js';
import type { Service, ServiceHealth } from './service.js';
import { startHttpServer, type Readiness, type RunningServer } from './http/server.js';
import { errorMessage } from './errors.js';

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  registry: Registry;
  services: Service[];
  routes?: { path: string; description: string; router: Router }[];
}

export class Daemon {
  private http: RunningServer | undefined;
  private readonly failed = new Map<string, string>();
  private readonly logger: Logger;

  constructor(private readonly opts: DaemonOptions) {
    this.logger = opts.logger;
    const daemon = this;
    new Gauge({
      name: 'eos_service_ready',
      help: '1 when the service is ready, 0 when it is not (or failed), per enabled service.',
      labelNames: ['service'],
      registers: [opts.registry],
      collect() {
        // In-memory state only: ready() is cheap by contract.
        for (const [name, h] of Object.entries(daemon.readiness().services)) this.set({ service: name }, h.ready ? 1 : 0);
      },
    });
  }

  get url(): string | undefined {
    return this.http?.url;
  }

  get port(): number | undefined {
    return this.http?.port;
  }

  readiness(): Readiness {
    const services: Readiness['services'] = {};
    for (const s of this.opts.services) {
      const failure = this.failed.get(s.name);
      let h: ServiceHealth;
      if (failure !== undefined) h = { ready: false, detail: `failed: ${failure}` };
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

  /** Marks a service failed (it stays failed until restart); the daemon keeps serving. */
  markFailed(name: string, err: unknown): void {
    this.failed.set(name, errorMessage(err));
    this.logger.error({ service: name, err: errorMessage(err) }, 'service failed');
  }

  async start(): Promise<void> {
    this.http = await startHttpServer({ registry: this.opts.registry, readiness: () => this.readiness(), routes: this.opts.routes, logger: this.logger }, this.opts.config.http);
    this.logger.info({ url: this.http.url, tls: this.http.tls }, 'HTTP server listening');
    for (const s of this.opts.services) {
      try {
        await s.start();
        this.logger.info({ service: s.name }, 'service started');
      } catch (err) {
        this.markFailed(s.name, err);
      }
    }
  }

  /** Stops every service (reverse order) and the HTTP server; resolves false if the grace period ran out first. */
  async stop(gracePeriodMs = this.opts.config.shutdown.gracePeriod): Promise<boolean> {
    const deadline = Date.now() + gracePeriodMs;
    const work = (async () => {
      for (const s of [...this.opts.services].reverse()) {
        try {
          await s.stop();
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
