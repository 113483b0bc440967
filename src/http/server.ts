// The HTTP face of the daemon: /metrics renders the registry (no Kafka call in a scrape),
// /healthz says the process lives, /readyz says whether every enabled service is ready, and /
// links them. Services can mount more routes (e.g. /audit) through `routes`.
import express, { type Express, type Router } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { ServiceHealth } from '../service.js';
import { EosError, ErrorCodes } from '../errors.js';
import { VERSION } from '../version.js';

export interface Readiness {
  ready: boolean;
  services: Record<string, ServiceHealth & { failed?: boolean }>;
}

export interface HttpDeps {
  registry: Registry;
  readiness(): Readiness;
  /** Extra routes, each with a line for the landing page. */
  routes?: { path: string; description: string; router: Router }[];
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function createApp(deps: HttpDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  const links = [
    { path: '/metrics', description: 'Prometheus metrics' },
    { path: '/healthz', description: 'liveness: the process is up' },
    { path: '/readyz', description: 'readiness: every enabled service is ready' },
    ...(deps.routes ?? []).map(({ path, description }) => ({ path, description })),
  ];

  app.get('/metrics', async (_req, res) => {
    try {
      const body = await deps.registry.metrics();
      res.set('Content-Type', deps.registry.contentType).send(body);
    } catch (err) {
      res.status(500).type('text/plain').send(`# metrics collection failed: ${(err as Error).message}\n`);
    }
  });

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok\n');
  });

  app.get('/readyz', (_req, res) => {
    const r = deps.readiness();
    const notReady = Object.entries(r.services)
      .filter(([, h]) => !h.ready)
      .map(([name, h]) => `${name}: ${h.detail ?? 'not ready'}`);
    res.status(r.ready ? 200 : 503).json({ status: r.ready ? 'ready' : 'not ready', notReady, services: r.services });
  });

  for (const r of deps.routes ?? []) app.use(r.path, r.router);

  app.get('/', (_req, res) => {
    const items = links.map((l) => `<li><a href="${escapeHtml(l.path)}">${escapeHtml(l.path)}</a> — ${escapeHtml(l.description)}</li>`).join('\n');
    res.type('html').send(`<!doctype html>
<html><head><meta charset="utf-8"><title>eoswatch ${escapeHtml(VERSION)}</title></head>
<body><h1>eoswatch ${escapeHtml(VERSION)}</h1>
<p>Exactly-once watchdog for Kafka transactional pipelines.</p>
<ul>
${items}
</ul></body></html>
`);
  });

  app.use((_req, res) => {
    res.status(404).json({ error: 'not found', see: links.map((l) => l.path) });
  });
  return app;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  /** Stops accepting connections and waits for open requests up to timeoutMs, then cuts them. */
  close(timeoutMs: number): Promise<void>;
}

export async function listen(app: Express, host: string, port: number): Promise<RunningServer> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host);
    s.once('listening', () => resolve(s));
    s.once('error', (err) =>
      reject(new EosError(ErrorCodes.HTTP_LISTEN_FAILED, `cannot listen on ${host}:${port}: ${(err as NodeJS.ErrnoException).code ?? err.message}`, { cause: err })),
    );
  });
  server.keepAliveTimeout = 5000;
  const addr = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    port: addr.port,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${addr.port}`,
    close: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
