// The HTTP face of the daemon: /metrics renders the registry (no Kafka call in a scrape; gzip to
// clients that accept it), /healthz says the process lives, /readyz says whether every enabled
// service is ready, and / links them. Services can mount more routes (e.g. /audit) through `routes`.
// Hardening: a wrong method is 405 with Allow; a request must arrive whole within
// http.requestTimeout (a trickled body or header is cut with 408); at most http.maxConnections
// sockets are open at once. TLS, client certificates and basic auth come from the exporter
// toolkit's web configuration file (src/http/web-config.ts, src/http/auth.ts), read again while
// running so that a renewed certificate is served without a restart (src/http/web-reload.ts).
import express, { type Express, type RequestHandler } from 'express';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Readiness, ServiceRoute } from '../service.js';
import type { HttpConfig } from '../config/types.js';
import { EosError, ErrorCodes } from '../errors.js';
import { rendererFor } from '../metrics/render.js';
import { redactText } from '../redact.js';
import { acceptsGzip } from './accept-encoding.js';
import { VERSION } from '../version.js';
import { authMiddleware, isAuthenticated } from './auth.js';
import { loadWebConfig, secureContextOptions, type WebConfig } from './web-config.js';
import { reloadWebConfig, type ReloadOutcome } from './web-reload.js';
import type { Logger } from '../log.js';

export type { Readiness } from '../service.js';

export interface HttpDeps {
  registry: Registry;
  readiness(): Readiness;
  /** Extra routes, each with a line for the landing page. */
  routes?: ServiceRoute[];
  /** TLS and authentication, as it is now (a reload replaces it); none: plain HTTP, open. */
  web?: () => WebConfig;
}

const ALLOW = 'GET, HEAD';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const methodNotAllowed: RequestHandler = (req, res) => {
  res.set('Allow', ALLOW).status(405).type('text/plain').send(`method ${req.method} not allowed on ${req.path}; allowed: ${ALLOW}\n`);
};

export function createApp(deps: HttpDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  const links = [
    { path: '/metrics', description: 'Prometheus metrics' },
    { path: '/healthz', description: 'liveness: the process is up' },
    { path: '/readyz', description: 'readiness: every enabled service is ready' },
    ...(deps.routes ?? []).map(({ path, description }) => ({ path, description })),
  ];
  if (deps.web) app.use(authMiddleware(deps.web));
  const renderer = rendererFor(deps.registry);

  app
    .route('/metrics')
    .get(async (req, res) => {
      try {
        // Scrapes that arrive during a render share it (src/metrics/render.ts); the body is sent as
        // it is, without an ETag (express would hash every body, and every scrape differs anyway).
        // Gzip to a client that accepts it: the renderer keeps the compressed body beside the text.
        const gzip = acceptsGzip(req.headers['accept-encoding']);
        const body = gzip ? await renderer.renderGzipBytes() : await renderer.renderBytes();
        res.set('Content-Type', renderer.contentType).set('Vary', 'Accept-Encoding');
        if (gzip) res.set('Content-Encoding', 'gzip');
        res.set('Content-Length', String(body.length)).end(body);
      } catch (err) {
        res.status(500).type('text/plain').send(`# metrics collection failed: ${redactText((err as Error).message)}\n`);
      }
    })
    .all(methodNotAllowed);

  app
    .route('/healthz')
    .get((_req, res) => {
      res.type('text/plain').send('ok\n');
    })
    .all(methodNotAllowed);

  app
    .route('/readyz')
    .get((_req, res) => {
      const r = deps.readiness();
      const status = r.ready ? 'ready' : 'not ready';
      // Open to probes without credentials (src/http/web-config.ts); what is wrong, only with them.
      if (!isAuthenticated(res)) {
        res.status(r.ready ? 200 : 503).json({ status });
        return;
      }
      const notReady = Object.entries(r.services)
        .filter(([, h]) => !h.ready)
        .map(([name, h]) => redactText(`${name}: ${h.detail ?? 'not ready'}`));
      const services = Object.fromEntries(Object.entries(r.services).map(([name, h]) => [name, h.detail === undefined ? h : { ...h, detail: redactText(h.detail) }]));
      res.status(r.ready ? 200 : 503).json({ status, notReady, services });
    })
    .all(methodNotAllowed);

  for (const r of deps.routes ?? []) {
    app.use(r.path, r.router);
    app.all(r.path, methodNotAllowed);
  }

  app
    .route('/')
    .get((_req, res) => {
      const items = links.map((l) => `<li><a href="${escapeHtml(l.path)}">${escapeHtml(l.path)}</a> — ${escapeHtml(l.description)}</li>`).join('\n');
      res.type('html').send(`<!doctype html>
<html><head><meta charset="utf-8"><title>eoswatch ${escapeHtml(VERSION)}</title></head>
<body><h1>eoswatch ${escapeHtml(VERSION)}</h1>
<p>Exactly-once watchdog for Kafka transactional pipelines.</p>
<ul>
${items}
</ul></body></html>
`);
    })
    .all(methodNotAllowed);

  app.use((_req, res) => {
    res.status(404).json({ error: 'not found', see: links.map((l) => l.path) });
  });
  return app;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  tls: boolean;
  /** Stops accepting connections and waits for open requests up to timeoutMs, then cuts them. */
  close(timeoutMs: number): Promise<void>;
  /** With a web configuration file: reads it again now (it is also read every http.webConfigReloadInterval). */
  reloadWebConfig?: () => Promise<ReloadOutcome>;
}

/** Node checks request and header deadlines on this period (its default, 30 s, would stretch every deadline by up to that). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 500;

export async function listen(app: Express, http: Pick<HttpConfig, 'host' | 'port' | 'requestTimeout' | 'maxConnections'>, web?: WebConfig): Promise<RunningServer> {
  const { host, port } = http;
  const limits = {
    requestTimeout: http.requestTimeout,
    // A request's headers must arrive within the same bound as the whole request.
    headersTimeout: http.requestTimeout,
    connectionsCheckingInterval: Math.min(CONNECTIONS_CHECKING_INTERVAL_MS, http.requestTimeout),
  };
  const keepAliveTimeout = 5000;
  const tls = web?.tls;
  const server: Server = tls
    ? createHttpsServer(
        {
          ...limits,
          ...secureContextOptions(tls),
          // Certificates are asked for in the handshake and judged per request (src/http/auth.ts),
          // so that auth_excluded_paths (the probes) work without one, as in the exporter toolkit.
          requestCert: tls.clientAuth !== 'NoClientCert',
          rejectUnauthorized: false,
        },
        app,
      )
    : createHttpServer(limits, app);
  server.maxConnections = http.maxConnections;
  server.keepAliveTimeout = keepAliveTimeout;
  // A socket that says nothing for this long (before or between requests) is closed.
  server.timeout = http.requestTimeout + keepAliveTimeout;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err) =>
      reject(new EosError(ErrorCodes.HTTP_LISTEN_FAILED, `cannot listen on ${host}:${port}: ${(err as NodeJS.ErrnoException).code ?? err.message}`, { cause: err })),
    );
    server.listen(port, host);
  });
  const addr = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    port: addr.port,
    tls: Boolean(tls),
    url: `${tls ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${addr.port}`,
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

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * Reads http.webConfigFile (exit 2 on any problem in it), builds the app and listens; warns when
 * /metrics and /audit are open to the network without authentication.
 */
export async function startHttpServer(deps: Omit<HttpDeps, 'web'> & { logger?: Logger }, http: HttpConfig, loaded?: WebConfig): Promise<RunningServer> {
  const web = loaded ?? (http.webConfigFile ? await loadWebConfig(http.webConfigFile) : undefined);
  const { logger, ...appDeps } = deps;
  let current = web;
  const running = await listen(createApp({ ...appDeps, ...(web ? { web: () => current! } : {}) }), http, web);
  if (web) {
    // A renewed certificate (or changed users) without a restart.
    const reloader = reloadWebConfig({ initial: web, server: running.server, intervalMs: http.webConfigReloadInterval, registry: deps.registry, ...(logger ? { logger } : {}), apply: (next) => (current = next) });
    const close = running.close;
    running.close = (timeoutMs) => {
      reloader.stop();
      return close(timeoutMs);
    };
    running.reloadWebConfig = () => reloader.check();
  }
  const authenticated = Boolean(web && (web.users.size > 0 || (web.tls && web.tls.clientAuth !== 'NoClientCert' && web.tls.clientAuth !== 'RequestClientCert')));
  if (!authenticated && !LOOPBACK.test(http.host)) {
    logger?.warn({ host: http.host }, 'HTTP endpoints (/metrics, /audit) are served without authentication on a network address; see http.webConfigFile');
  }
  return running;
}

/** `--web.listen-address` as the exporter toolkit takes it: [host]:port, host optional (all interfaces), IPv6 in brackets. */
export function parseListenAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]*)):([0-9]{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new EosError(ErrorCodes.USAGE, `expected [HOST]:PORT (e.g. :7395, 127.0.0.1:7395, [::1]:7395), found "${text}"`);
  const host = m[1] ?? (m[2] || '0.0.0.0');
  return { host, port };
}
