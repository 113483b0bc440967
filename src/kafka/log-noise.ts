// kafkajs logs every retriable protocol error at ERROR (or its Connection namespace at ERROR per
// response) before retrying it. Two kinds are not errors of a healthy pipeline:
// - CONCURRENT_TRANSACTIONS: after a commit returns, the coordinator is still writing the markers
//   for a few ms; the next transaction's first AddPartitionsToTxn meets this error and is retried
//   (Kafka's own client retries it silently). Logged at debug.
// - coordinator and leader moves while a cluster starts or fails over (coordinator loading, not
//   available, not the coordinator, no leader): logged at debug, but when they persist longer than
//   `persistAfterMs` a warn line summarises them once per `summaryEveryMs`, so a cluster that never
//   settles is still visible at the default log level. They are never dropped.

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
