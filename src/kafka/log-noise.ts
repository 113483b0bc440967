// kafkajs logs every retriable protocol error at ERROR (or its Connection namespace at ERROR per
// response) before retrying it. Two kinds are not errors of a healthy pipeline:
// - CONCURRENT_TRANSACTIONS: after a commit returns, the coordinator is still writing the markers
//   for a few ms; the next transaction's first AddPartitionsToTxn meets this error and is retried
//   (Kafka's own client retries it silently). Logged at debug.
// - coordinator and leader moves while a cluster starts or fails over (coordinator loading, not
//   available, not the coordinator, no leader): logged at debug, but when they persist longer than
//   `persistAfterMs` a warn line summarises them once per `summaryEveryMs`, so a cluster that never
//   settles is still visible at the default log level. They are never dropped.

import { createRequire } from 'node:module';

/** Messages of retriable kafkajs protocol errors (node_modules/kafkajs/src/protocol/error.js). */
const CONCURRENT_TRANSACTIONS = 'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
const SETTLING: Record<string, string> = {
  "The coordinator is loading and hence can't process requests for this group": 'coordinator loading',
  'The group coordinator is not available': 'coordinator not available',
  'This is not the correct coordinator for this group': 'not the coordinator',
  'There is no leader for this topic-partition as we are in the middle of a leadership election': 'leader election',
  'This server is not the leader for that topic-partition': 'not the leader',
};

export type NoiseKind = { kind: 'concurrent-transactions' } | { kind: 'settling'; what: string } | undefined;

/** Which retriable noise a kafkajs log entry is (by its message or its `error` field), if any. */
export function classifyKafkaNoise(message: string, error: unknown): NoiseKind {
  const texts = [message, typeof error === 'string' ? error : ''];
  if (texts.some((t) => t.includes(CONCURRENT_TRANSACTIONS))) return { kind: 'concurrent-transactions' };
  for (const [text, what] of Object.entries(SETTLING)) if (texts.some((t) => t.includes(text))) return { kind: 'settling', what };
  return undefined;
}

export interface NoiseSummary {
  /** What was seen, e.g. `coordinator loading`, with counts. */
  counts: Record<string, number>;
  /** Since when the errors have been continuous (ms since epoch). */
  sinceMs: number;
  total: number;
}

/**
 * Counts settling errors; `record` returns a summary to log at warn when they have persisted
 * (no gap longer than `summaryEveryMs`) for `persistAfterMs`, at most once per `summaryEveryMs`.
 */
export class SettlingNoise {
  private streakStart = -1;
  private last = -1;
  private lastSummary = -1;
  private counts: Record<string, number> = {};

  constructor(
    private readonly persistAfterMs = 30_000,
    private readonly summaryEveryMs = 60_000,
  ) {}

  record(what: string, nowMs: number): NoiseSummary | undefined {
    if (this.last < 0 || nowMs - this.last > this.summaryEveryMs) {
      this.streakStart = nowMs;
      this.lastSummary = -1;
      this.counts = {};
    }
    this.last = nowMs;
    this.counts[what] = (this.counts[what] ?? 0) + 1;
    const persisted = nowMs - this.streakStart >= this.persistAfterMs;
    const due = this.lastSummary < 0 || nowMs - this.lastSummary >= this.summaryEveryMs;
    if (!persisted || !due) return undefined;
    const summary = { counts: this.counts, sinceMs: this.streakStart, total: Object.values(this.counts).reduce((a, b) => a + b, 0) };
    this.lastSummary = nowMs;
    this.counts = {};
    return summary;
  }
}

// Connection errors to one broker. A broker that is down makes every client of every service
// (pipeline producers, consumer, admin, LSO reader, health probe) log each failed connect and each
// rejected request, by kafkajs' Connection, Producer and BrokerPool, at ERROR with a stack trace:
// ~70 lines in 15 s for one killed broker. They are retried; the broker being down is reported by
// eos_kafka_broker_up (src/kafka/health.ts). So they are collapsed: one warning per broker per
// `windowMs`, which says how many were suppressed (each is still logged at debug). A refused
// SASL authentication is one of them: it repeats at every connect until the credential is fixed.

/** What kind of connection error a kafkajs entry is about, and the broker when its text names one. */
export interface ConnectionErrorKind {
  what: string;
  broker?: string;
}

const ERRNO = /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|EHOSTDOWN|ENOTFOUND|EAI_AGAIN)\b/;
const CONNECTION_TEXTS: [RegExp, string][] = [
  [/\bConnection timeout\b/, 'connection timeout'],
  [/\bRequest \w+\(key: \d+, version: \d+\) timed out\b/, 'request timeout'],
  [/\b(Closed connection|Connection closed by the server|Kafka server has closed connection)\b/, 'closed connection'],
  [/\b(Connection error|Failed to connect)\b/, 'connection error'],
  [/\bNot connected\b/, 'not connected'],
];
/** host:port after the errno (`connect ECONNREFUSED 127.0.0.1:9092`), IPv4, IPv6 or a name. */
const ADDRESS = /\b(?:ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EHOSTDOWN)\s+(\[?[0-9A-Za-z.:-]+?\]?:\d{1,5})\b/;

/** The connection error a kafkajs entry (its message, or its `error` field) reports, if any. */
export function classifyConnectionError(message: string, error: unknown): ConnectionErrorKind | undefined {
  for (const text of [message, typeof error === 'string' ? error : '']) {
    if (!text) continue;
    const errno = ERRNO.exec(text)?.[1];
    const what = errno ?? CONNECTION_TEXTS.find(([re]) => re.test(text))?.[1];
    if (!what) continue;
    const broker = ADDRESS.exec(text)?.[1];
    return broker ? { what, broker } : { what };
  }
  return undefined;
}

const RESPONSE_LINE = /^Response \w+\(key: (\d+), version: \d+\)$/;
const DENIED = /authorization failed|not authorized/i;
/**
 * The APIs whose refusal eoswatch's callers name themselves: Metadata (3: the log reader, the
 * audit, lag), DescribeConfigs (32: the audit), DescribeAcls (29: the audit). Any other refusal
 * (FindCoordinator, InitProducerId, Produce, JoinGroup...) stays at its level: kafkajs often hides
 * it from the caller (its coordinator lookup reports "Failed to find group coordinator"), so the
 * Connection line is the one place the missing permission is named.
 */
const NAMED_BY_CALLER = new Set([3, 29, 32]);

/**
 * kafkajs' Connection layer logs every error response ("Response DescribeAcls(key: 29, version: 1)",
 * error "Cluster authorization failed") before the caller receives the error. For an authorization
 * error that line is a duplicate: eoswatch's callers report a refusal by name themselves (the
 * audit's permission findings, the coordinator's permission gaps, eos_lag_permission_denied, a
 * failed service). So it is debug, for the APIs below only. Pure.
 */
export function isDeniedResponse(namespace: string, message: string, error: unknown): boolean {
  const key = namespace === 'Connection' ? RESPONSE_LINE.exec(message)?.[1] : undefined;
  return key !== undefined && NAMED_BY_CALLER.has(Number(key)) && typeof error === 'string' && DENIED.test(error);
}

const SASL_FAILED = /\bSASL [A-Z][A-Z0-9 ]*?(?: authentication failed|: )/;

/**
 * A refused SASL authentication (wrong password, expired or unreadable token): it fails every
 * connect the same way until the credential is fixed, and kafkajs logs it at ERROR from the
 * authenticator and the broker pool, per client and attempt. Collapsed like a connection error
 * (one warning per broker per window), but not retriable.
 */
export function classifyAuthenticationError(message: string, error: unknown): ConnectionErrorKind | undefined {
  // The Connection layer's line for the refused SaslAuthenticate response comes first, then the authenticator's and the pool's.
  const refused = message.startsWith('Response SaslAuthenticate(') || [message, typeof error === 'string' ? error : ''].some((t) => SASL_FAILED.test(t));
  return refused ? { what: 'authentication failed' } : undefined;
}

/** The verdict for a connection error that is to be logged: what was suppressed for this broker since its last warning. */
export interface ConnectionSummary {
  /** Suppressed since the last warning for this broker, by kind. */
  suppressed: Record<string, number>;
  total: number;
  /** When the last warning for this broker was logged (ms since epoch), or undefined for the first. */
  lastWarnMs: number | undefined;
}

/**
 * One warning per broker per `windowMs`: `record` returns the summary to log with the warning, or
 * undefined when this error is suppressed (counted, logged at debug). Pure: the caller gives the time.
 */
export class ConnectionNoise {
  private readonly brokers = new Map<string, { lastWarnMs: number; suppressed: Record<string, number> }>();

  constructor(
    private readonly windowMs = 60_000,
    /** Brokers remembered at once; addresses come from log text, so the map is bounded. */
    private readonly maxBrokers = 1024,
  ) {}

  record(broker: string, what: string, nowMs: number): ConnectionSummary | undefined {
    const b = this.brokers.get(broker);
    if (b && nowMs - b.lastWarnMs < this.windowMs) {
      b.suppressed[what] = (b.suppressed[what] ?? 0) + 1;
      return undefined;
    }
    const summary: ConnectionSummary = {
      suppressed: b?.suppressed ?? {},
      total: Object.values(b?.suppressed ?? {}).reduce((x, y) => x + y, 0),
      lastWarnMs: b?.lastWarnMs,
    };
    if (!b && this.brokers.size >= this.maxBrokers) this.brokers.delete(this.brokers.keys().next().value!);
    this.brokers.set(broker, { lastWarnMs: nowMs, suppressed: {} });
    return summary;
  }
}

// Retriable errors: kafkajs logs a retriable protocol error at ERROR before it retries it. The
// protocol errors kafkajs marks retriable (its own table, node_modules/kafkajs/src/protocol/error.js)
// and the coordinator and leader moves named below are at most warnings; an error that is still
// there after the retries reaches the caller, which logs or counts it itself.
const require = createRequire(import.meta.url);
const PROTOCOL_ERRORS = (require('kafkajs/src/protocol/error') as { errorCodes: { type: string; message: string; retriable: boolean }[] }).errorCodes;
/** Retriable whatever kafkajs' table says (old and new names of the same errors). */
const RETRIABLE_TYPES = new Set([
  'NOT_COORDINATOR', 'NOT_COORDINATOR_FOR_GROUP', 'COORDINATOR_LOAD_IN_PROGRESS', 'GROUP_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER', 'NOT_LEADER_FOR_PARTITION', 'CONCURRENT_TRANSACTIONS', 'LEADER_NOT_AVAILABLE',
  'REQUEST_TIMED_OUT',
]);
const RETRIABLE_MESSAGES = PROTOCOL_ERRORS.filter((e) => e.retriable || RETRIABLE_TYPES.has(e.type)).map((e) => e.message);

/** Whether a kafkajs entry reports a retriable error: a retriable protocol error or a connection error. */
export function isRetriableKafkaError(message: string, error: unknown): boolean {
  if (classifyConnectionError(message, error)) return true;
  const texts = [message, typeof error === 'string' ? error : ''];
  return RETRIABLE_MESSAGES.some((m) => texts.some((t) => t.includes(m)));
}
