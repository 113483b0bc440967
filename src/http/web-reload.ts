// Picks up a changed web configuration file without a restart, as the exporter toolkit does (it
// reads the file again for every new connection): every http.webConfigReloadInterval the file,
// and the certificate, key and client CA files it names, are read again through loadWebConfig
// (src/http/web-config.ts). A renewed certificate (cert-manager, a rotated Kubernetes Secret) is
// presented to new connections from then on (server.setSecureContext; open connections keep
// theirs); users, headers, the rate limit and the excluded paths apply from the next request.
// A file that does not load (a key that does not match its certificate yet, a bad hash, a missing
// file), or a change that needs a new listener (TLS turned on or off, client certificates asked
// for or not), is logged once and the running configuration is kept.
import type { Server } from 'node:http';
import type { Server as TlsServer } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import { EosError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { redactText } from '../redact.js';
import { loadWebConfig, secureContextOptions, type WebConfig } from './web-config.js';

export type ReloadOutcome = 'unchanged' | 'applied' | 'failed' | 'needs-restart';

export interface WebReloader {
  /** Reads the file once now (the timer does the same); what came of it. */
  check(): Promise<ReloadOutcome>;
  stop(): void;
}

/** Everything a reload can change, as one comparable string (the users map in order). */
function fingerprint(web: WebConfig): string {
  return JSON.stringify({ ...web, users: [...web.users] });
}

/** Why `next` cannot replace `running` on the same listener, or undefined when it can. */
export function needsRestart(running: WebConfig, next: WebConfig): string | undefined {
  if (Boolean(running.tls) !== Boolean(next.tls)) return `tls_server_config ${next.tls ? 'added' : 'removed'}: turning TLS on or off needs a restart`;
  const asks = (w: WebConfig) => w.tls !== undefined && w.tls.clientAuth !== 'NoClientCert';
  if (asks(running) !== asks(next)) return `client_auth_type ${running.tls!.clientAuth} → ${next.tls!.clientAuth}: asking for client certificates or not needs a restart`;
  return undefined;
}

/** The certificate a log line names: subject, serial, end of validity (never key material). */
function describeCertificate(pem: string): Record<string, string> {
  try {
    const c = new X509Certificate(pem);
    return { subject: c.subject.replace(/\n/g, ', '), serial: c.serialNumber, validTo: c.validTo };
  } catch {
    return {};
  }
}

/** The web configuration reload's gauge, defined into `registry` (the reloader, and docs/metrics.md's generator). */
export function defineWebReloadMetrics(registry: Registry): Gauge {
  return new Gauge({
    name: 'eos_web_config_last_reload_successful',
    help: '1 when the last read of the web configuration file (http.webConfigFile) loaded and applies, 0 when it failed or needs a restart (the running configuration is kept).',
    registers: [registry],
  });
}

export function reloadWebConfig(opts: {
  initial: WebConfig;
  server: Server;
  intervalMs: number;
  registry?: Registry;
  logger?: Logger;
  /** Makes `web` the configuration requests are judged by. */
  apply(web: WebConfig): void;
}): WebReloader {
  const { server, logger } = opts;
  let running = opts.initial;
  let runningPrint = fingerprint(running);
  /** The last problem logged, so that a file that stays bad is logged once, not every interval. */
  let lastProblem: string | undefined;
  const ok = opts.registry ? defineWebReloadMetrics(opts.registry) : undefined;
  ok?.set(1);
  const problem = (outcome: ReloadOutcome, text: string, details: string[] = []): ReloadOutcome => {
    ok?.set(0);
    const key = [text, ...details].join('\n');
    if (key !== lastProblem) {
      lastProblem = key;
      logger?.error({ file: running.file, err: redactText(text), details: details.map(redactText) }, 'web configuration file not reloaded; the running configuration is kept');
    }
    return outcome;
  };
  let inFlight: Promise<ReloadOutcome> | undefined;
  const check = (): Promise<ReloadOutcome> =>
    (inFlight ??= (async (): Promise<ReloadOutcome> => {
      let next: WebConfig;
      try {
        next = await loadWebConfig(running.file);
      } catch (err) {
        return problem('failed', errorMessage(err), err instanceof EosError ? err.details : []);
      }
      const print = fingerprint(next);
      if (print === runningPrint) {
        ok?.set(1);
        if (lastProblem !== undefined) logger?.info({ file: running.file }, 'web configuration file loads again; unchanged from the running one');
        lastProblem = undefined;
        return 'unchanged';
      }
      const why = needsRestart(running, next);
      if (why) return problem('needs-restart', why);
      if (next.tls) {
        try {
          (server as unknown as TlsServer).setSecureContext(secureContextOptions(next.tls));
        } catch (err) {
          return problem('failed', `the new TLS settings were refused: ${errorMessage(err)}`);
        }
      }
      running = next;
      runningPrint = print;
      lastProblem = undefined;
      opts.apply(next);
      ok?.set(1);
      logger?.info({ file: next.file, ...(next.tls ? { certificate: describeCertificate(next.tls.cert) } : {}) }, 'web configuration file reloaded');
      return 'applied';
    })().finally(() => {
      inFlight = undefined;
    }));
  const timer = setInterval(() => void check(), opts.intervalMs);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
