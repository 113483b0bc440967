// Authentication of HTTP requests as the exporter toolkit does it: a rate limit (429), the
// configured response headers, the client certificate judged by client_auth_type (and
// client_allowed_sans), then basic auth against bcrypt hashes (401 with WWW-Authenticate: Basic).
// Paths in auth_excluded_paths skip both checks; their handlers can still ask whether the
// request carried valid credentials (isAuthenticated).
import { createHash } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { RequestHandler, Response } from 'express';
import bcrypt from 'bcryptjs';
import type { WebConfig } from './web-config.js';

/** Compared against when the user is unknown, so that timing does not tell which users exist (bcrypt of a random string, cost 10). */
const UNKNOWN_USER_HASH = '$2b$10$kVgt8yqQFcbYm3Ln9hnENuaQbi2A8mgXDrpOUkQ5h0ifSJc0s7HdC';
/** Results of bcrypt comparisons kept (a scrape every few seconds would otherwise cost a bcrypt each). */
const CACHE_ENTRIES = 1000;

export function isAuthenticated(res: Response): boolean {
  return res.locals.authenticated !== false;
}

/** Token bucket: `burst` requests at once, one more every `intervalMs` (golang.org/x/time/rate semantics). */
export function rateLimiter(burst: number, intervalMs: number, now: () => number = Date.now): () => boolean {
  let tokens = burst;
  let last = now();
  return () => {
    const t = now();
    tokens = Math.min(burst, tokens + (t - last) / intervalMs);
    last = t;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/** Subject alternative names of a peer certificate as Node reports them ("DNS:a, IP Address:10.0.0.1, URI:spiffe://x"). */
export function subjectAltNames(text: string | undefined): string[] {
  if (!text) return [];
  return text.split(/,\s*/).map((part) => part.slice(part.indexOf(':') + 1));
}

/** Why the request's client certificate is not acceptable, or undefined when it is. */
function certificateProblem(web: WebConfig, socket: TLSSocket): string | undefined {
  const tls = web.tls;
  if (!tls || tls.clientAuth === 'NoClientCert' || tls.clientAuth === 'RequestClientCert') return undefined;
  const cert = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
  const present = cert !== undefined && cert !== null && Object.keys(cert).length > 0;
  if (!present) {
    if (tls.clientAuth === 'VerifyClientCertIfGiven') return undefined;
    return 'a client certificate is required';
  }
  if ((tls.clientAuth === 'RequireAndVerifyClientCert' || tls.clientAuth === 'VerifyClientCertIfGiven') && !socket.authorized) {
    return `the client certificate is not trusted (${String(socket.authorizationError ?? 'unverified')})`;
  }
  if (tls.clientAllowedSans && !subjectAltNames(cert.subjectaltname).some((san) => tls.clientAllowedSans!.includes(san))) {
    return 'the client certificate has none of the allowed subject alternative names';
  }
  return undefined;
}

/** Verifies user:password against the bcrypt hashes, one bcrypt at a time (it is CPU-bound), remembering results. */
function basicAuthenticator(users: Map<string, string>): (header: string | undefined) => Promise<boolean> {
  const cache = new Map<string, boolean>();
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(f: () => Promise<T>): Promise<T> => {
    const p = queue.then(f);
    queue = p.catch(() => undefined);
    return p;
  };
  return async (header) => {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
    if (!m) return false;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const known = users.has(user);
    const hash = users.get(user) ?? UNKNOWN_USER_HASH;
    // The key holds no password in the clear.
    const key = createHash('sha256').update(user).update('\0').update(hash).update('\0').update(password).digest('hex');
    let ok = cache.get(key);
    if (ok === undefined) {
      ok = (await serialized(() => bcrypt.compare(password, hash))) && known;
      if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
      cache.set(key, ok);
    }
    return ok;
  };
}

/** What a web configuration makes of requests: its rate limiter, its basic-auth verifier, its excluded paths. */
interface Judge {
  web: WebConfig;
  allow: (() => boolean) | undefined;
  basic: ((header: string | undefined) => Promise<boolean>) | undefined;
  excluded: Set<string>;
}

function judgeFor(web: WebConfig): Judge {
  return {
    web,
    allow: web.rateLimit ? rateLimiter(web.rateLimit.burst, web.rateLimit.intervalMs) : undefined,
    basic: web.users.size ? basicAuthenticator(web.users) : undefined,
    excluded: new Set(web.authExcludedPaths),
  };
}

/** Judges each request by the web configuration `current()` returns (a reload replaces it: src/http/web-reload.ts). */
export function authMiddleware(current: () => WebConfig): RequestHandler {
  let judge: Judge | undefined;
  return (req, res, next) => {
    const now = current();
    if (judge?.web !== now) judge = judgeFor(now);
    const { web, allow, basic, excluded } = judge;
    if (allow && !allow()) {
      res.status(429).type('text/plain').send('Too Many Requests\n');
      return;
    }
    for (const [name, value] of Object.entries(web.headers)) res.set(name, value);
    void (async () => {
      const certProblem = certificateProblem(web, req.socket as TLSSocket);
      const basicOk = basic ? await basic(req.headers.authorization) : true;
      res.locals.authenticated = certProblem === undefined && basicOk;
      if (res.locals.authenticated || excluded.has(req.path)) {
        next();
        return;
      }
      if (certProblem) {
        res.status(401).type('text/plain').send(`Unauthorized: ${certProblem}\n`);
        return;
      }
      res.set('WWW-Authenticate', 'Basic realm="eoswatch", charset="UTF-8"').status(401).type('text/plain').send('Unauthorized\n');
    })().catch(next);
  };
}
