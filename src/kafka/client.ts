// The one place kafkajs clients are built: brokers, client id, timeouts, TLS and SASL from the
// config, and kafkajs' own logging routed into pino. Key material is read from files here and
// never appears in a log line or an error message.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kafka, logLevel as KafkaLogLevel, type KafkaConfig as KafkaJsConfig, type LogEntry, type SASLOptions } from 'kafkajs';
import type { ConnectionOptions } from 'node:tls';
import type { KafkaConfig } from '../config/types.js';
import { EosError, ErrorCodes } from '../errors.js';
import type { Logger } from '../log.js';
import { patchKafkajs } from './kafkajs-patches.js';
import { tokenFileProvider } from './oauth-token.js';
import { classifyAuthenticationError, classifyConnectionError, classifyKafkaNoise, isDeniedResponse, ConnectionNoise, isRetriableKafkaError, SettlingNoise } from './log-noise.js';

// kafkajs prints a partitioner migration notice on every producer; eoswatch picks its partitioner explicitly.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';
// Without it every open kafkajs connection wakes the process every millisecond (src/kafka/kafkajs-patches.ts).
patchKafkajs();

function readPem(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new EosError(ErrorCodes.CONFIG_INVALID, `kafka.ssl.${key}: cannot read ${file} (${code}); expected a readable PEM file`, {
      cause: code,
    });
  }
}

export function tlsOptions(cfg: KafkaConfig): ConnectionOptions | undefined {
  const ssl = cfg.ssl;
  if (!ssl.enabled) return undefined;
  const opts: ConnectionOptions = { rejectUnauthorized: ssl.rejectUnauthorized };
  if (ssl.caFile) opts.ca = [readPem(ssl.caFile, 'caFile')];
  if (ssl.certFile) opts.cert = readPem(ssl.certFile, 'certFile');
  if (ssl.keyFile) opts.key = readPem(ssl.keyFile, 'keyFile');
  if (ssl.passphrase) opts.passphrase = ssl.passphrase;
  return opts;
}

/**
 * Why a client certificate cannot be accepted by any broker, by its validity dates alone (an
 * expired or not yet valid certificate), or undefined. The broker's TLS alert for it is terse
 * ("certificate expired", or a closed connection), so eoswatch says it itself, once. Pure.
 */
export function certificateProblem(certPem: Buffer | string, file: string, now: number): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return undefined;
  }
  const notAfter = Date.parse(cert.validTo);
  const notBefore = Date.parse(cert.validFrom);
  if (notAfter < now) return `the client certificate ${file} (kafka.ssl.certFile) expired at ${new Date(notAfter).toISOString()}: brokers that require client certificates refuse the connection; renew it`;
  if (notBefore > now) return `the client certificate ${file} (kafka.ssl.certFile) is not valid before ${new Date(notBefore).toISOString()}: brokers that require client certificates refuse the connection until then`;
  return undefined;
}

/** Certificate problems already logged by this process: one warning each, however many clients are built. */
const certificateWarnings = new Set<string>();

export function saslOptions(cfg: KafkaConfig): SASLOptions | undefined {
  const s = cfg.sasl;
  if (!s) return undefined;
  if (s.mechanism === 'oauthbearer') return { mechanism: 'oauthbearer', oauthBearerProvider: tokenFileProvider(s.tokenFile) };
  return { mechanism: s.mechanism, username: s.username, password: s.password } as SASLOptions;
}

/** pino level for a kafkajs entry. kafkajs logs every retriable protocol error of a connection at ERROR before retrying; those are warnings. */
export function pinoLevelFor(level: number, namespace: string): 'error' | 'warn' | 'info' | 'debug' {
  if (level === KafkaLogLevel.ERROR) return namespace === 'Connection' ? 'warn' : 'error';
  if (level === KafkaLogLevel.WARN) return 'warn';
  if (level === KafkaLogLevel.INFO) return 'info';
  return 'debug';
}

export function kafkaLogLevelFor(logger: Logger): KafkaLogLevel {
  switch (logger.level) {
    case 'trace':
    case 'debug':
      return KafkaLogLevel.DEBUG;
    case 'info':
      return KafkaLogLevel.INFO;
    case 'warn':
      return KafkaLogLevel.WARN;
    case 'silent':
      return KafkaLogLevel.NOTHING;
    default:
      return KafkaLogLevel.ERROR;
  }
}

/**
 * kafkajs debug entries carry request payloads (Buffers, typed arrays): the redaction walk of
 * pino cannot traverse those, so entries are flattened to primitives and short JSON first.
 */
export function plainLogFields(extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extra)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
    else if (v instanceof Error) out[k] = v.message;
    else if (Buffer.isBuffer(v) || ArrayBuffer.isView(v)) out[k] = `<${(v as ArrayBufferView).byteLength} bytes>`;
    else if (v !== undefined) {
      const json = JSON.stringify(v, (_key, x: unknown) =>
        Buffer.isBuffer(x) || ArrayBuffer.isView(x) || (x as { type?: string })?.type === 'Buffer' ? '<bytes>' : typeof x === 'bigint' ? String(x) : x,
      );
      out[k] = json && json.length > 500 ? `${json.slice(0, 500)}...` : json;
    }
  }
  return out;
}

/** kafkajs entries that say a consumer crashed or restarts: never collapsed away, whatever error they carry. */
const NEVER_COLLAPSED = /^(Crash: |Restarting the consumer)/;

/** Shared by every kafkajs client of the process: one warning per broker per minute, whichever service's client saw it. */
const processConnectionNoise = new ConnectionNoise();

export function kafkaLogCreator(logger: Logger, now: () => number = Date.now, connections: ConnectionNoise = processConnectionNoise): KafkaJsConfig['logCreator'] {
  const child = logger.child({ component: 'kafkajs' });
  const settling = new SettlingNoise();
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _ts, logger: _l, stack, ...extra } = log as { message: string; timestamp?: string; logger?: string; stack?: unknown; [k: string]: unknown };
      // Retriable noise of a healthy or settling cluster is debug; persisting settling errors are
      // summarised at warn (src/kafka/log-noise.ts says which and why).
      const noise = level <= KafkaLogLevel.WARN ? classifyKafkaNoise(message, extra.error) : undefined;
      const connection = level <= KafkaLogLevel.WARN && !noise ? (classifyConnectionError(message, extra.error) ?? classifyAuthenticationError(message, extra.error)) : undefined;
      // kafkajs warns about any finite retry count on an idempotent producer; eos pipelines abort the
      // transaction of a send that failed after its retries, so nothing can be duplicated: not a warning.
      // "Response without match": the answer to a request kafkajs already gave up on (its request
      // timeout passed, and it retried elsewhere): nothing is lost or wrong, so debug.
      // An authorization error response: its caller names the missing permission (isDeniedResponse).
      let lvl =
        noise || message.startsWith('Limiting retries for the idempotent producer') || message === 'Response without match' || isDeniedResponse(namespace, message, extra.error)
          ? 'debug'
          : pinoLevelFor(level, namespace);
      // kafkajs retries a retriable error after logging it at ERROR: a warning at most.
      if (lvl === 'error' && isRetriableKafkaError(message, extra.error)) lvl = 'warn';
      // kafkajs restarts a crashed consumer only after a retriable crash (its "Crash:" line says
      // which): a self-healing restart is a warning, not an error (the demo's "kill 2" logged one).
      if (lvl === 'error' && message.startsWith('Restarting the consumer')) lvl = 'warn';
      const fields: Record<string, unknown> = { namespace, ...plainLogFields(extra) };
      // A stack trace only on an error line (kafkajs attaches one to connection errors).
      if (lvl === 'error' && stack !== undefined) fields.stack = plainLogFields({ stack }).stack;
      if (connection && !NEVER_COLLAPSED.test(message)) {
        // One warning per broker per minute; the rest at debug, counted in the next warning.
        const broker = typeof extra.broker === 'string' ? extra.broker : (connection.broker ?? 'unknown');
        const summary = lvl === 'debug' ? undefined : connections.record(broker, connection.what, now());
        if (!summary) {
          child.debug(fields, message);
          return;
        }
        const since = summary.lastWarnMs === undefined ? '' : ` in the last ${Math.round((now() - summary.lastWarnMs) / 1000)} s`;
        // kafkajs' producer names no broker in "Failed to send messages: Closed connection".
        const to = broker === 'unknown' ? 'brokers kafkajs did not name' : broker;
        child.warn(
          { ...fields, broker, suppressed: summary.suppressed },
          summary.total > 0
            ? `${message} (${summary.total} more connection errors to ${to}${since}, at debug; one warning per broker per minute)`
            : `${message} (further connection errors to ${to} for a minute at debug)`,
        );
        return;
      }
      child[lvl](fields, message);
      if (noise?.kind !== 'settling') return;
      const summary = settling.record(noise.what, now());
      if (summary) {
        child.warn(
          { errors: summary.counts, since: new Date(summary.sinceMs).toISOString() },
          `Kafka has not settled for ${Math.round((now() - summary.sinceMs) / 1000)} s: ${summary.total} retriable coordinator/leader errors since the last summary (each at debug)`,
        );
      }
    };
}

export interface ClientOverrides {
  clientId?: string;
  /** kafkajs client-level retry; producers and consumers may set their own. */
  retry?: KafkaJsConfig['retry'];
}

export function kafkaClientConfig(cfg: KafkaConfig, logger: Logger, overrides: ClientOverrides = {}): KafkaJsConfig {
  const ssl = tlsOptions(cfg);
  const problem = ssl?.cert && cfg.ssl.certFile ? certificateProblem(ssl.cert as Buffer, cfg.ssl.certFile, Date.now()) : undefined;
  if (problem && !certificateWarnings.has(problem)) {
    certificateWarnings.add(problem);
    logger.warn(problem);
  }
  return {
    clientId: overrides.clientId ?? cfg.clientId,
    brokers: cfg.brokers,
    connectionTimeout: cfg.connectionTimeout,
    requestTimeout: cfg.requestTimeout,
    ssl,
    sasl: saslOptions(cfg),
    logLevel: kafkaLogLevelFor(logger),
    logCreator: kafkaLogCreator(logger),
    ...(overrides.retry ? { retry: overrides.retry } : {}),
  };
}

export function createKafka(cfg: KafkaConfig, logger: Logger, overrides: ClientOverrides = {}): Kafka {
  return new Kafka(kafkaClientConfig(cfg, logger, overrides));
}

/** A periodic reader's request timeout: kafka.requestTimeout, at most two of its intervals, never below 2 s. */
export function periodicRequestTimeout(requestTimeoutMs: number, intervalMs: number): number {
  return Math.min(requestTimeoutMs, Math.max(2_000, 2 * intervalMs));
}
