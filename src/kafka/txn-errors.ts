// The errors of the transaction coordinator's admin APIs (txn-protocol.ts encodes them, txn-admin.ts
// sends them): Kafka's codes, their names and what to do about each (retry where the coordinator or
// leader moved or loads; permission where an ACL is missing), and the error an entry of an answer
// carries (a broker, a transactional id, a partition), from a code or from what was thrown. Pure.

/** The error codes these APIs (and a Fetch of the transaction log) answer with (org.apache.kafka.common.protocol.Errors). */
export const ERRORS = {
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  REPLICA_NOT_AVAILABLE: 9,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  TOPIC_AUTHORIZATION_FAILED: 29,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  UNSUPPORTED_VERSION: 35,
  INVALID_REQUEST: 42,
  INVALID_PRODUCER_EPOCH: 47,
  CONCURRENT_TRANSACTIONS: 51,
  KAFKA_STORAGE_ERROR: 56,
  TRANSACTION_COORDINATOR_FENCED: 52,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  OFFSET_NOT_AVAILABLE: 78,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
  INVALID_REGULAR_EXPRESSION: 128,
} as const;

const ERROR_NAMES = new Map<number, string>(Object.entries(ERRORS).map(([name, code]) => [code, name]));

export function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? `ERROR_${code}`;
}

/**
 * What a caller does with an error code: `retry` after re-finding the coordinator or leader
 * (it moved, or it is still loading), `permission` (an ACL is missing: say so, never page as if
 * the cluster were broken), `error` anything else.
 */
export type ErrorKind = 'none' | 'retry' | 'permission' | 'error';

export function errorKind(code: number): ErrorKind {
  switch (code) {
    case ERRORS.NONE:
      return 'none';
    case ERRORS.COORDINATOR_LOAD_IN_PROGRESS:
    case ERRORS.COORDINATOR_NOT_AVAILABLE:
    case ERRORS.NOT_COORDINATOR:
    case ERRORS.NOT_LEADER_OR_FOLLOWER:
    case ERRORS.REQUEST_TIMED_OUT:
      return 'retry';
    case ERRORS.TOPIC_AUTHORIZATION_FAILED:
    case ERRORS.CLUSTER_AUTHORIZATION_FAILED:
    case ERRORS.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return 'permission';
    default:
      return 'error';
  }
}

/** Why an entry has no answer. `code` is Kafka's error code (-1 for a client-side failure such as a lost connection). */
export interface TxnApiError {
  code: number;
  /** Kafka's name for the code, or CLIENT_ERROR / UNSUPPORTED_VERSION. */
  name: string;
  /** permission: an ACL is missing (not a broken cluster); unsupported: the broker lacks the API or the version the request needs. */
  kind: 'retry' | 'permission' | 'unsupported' | 'error';
  message: string;
}

/** Kafka's error code (and message, when the answer has one) as an entry's error. */
export function kafkaError(code: number, message?: string | null): TxnApiError {
  const kind = errorKind(code);
  const name = errorName(code);
  return { code, name, kind: kind === 'none' ? 'error' : code === ERRORS.UNSUPPORTED_VERSION ? 'unsupported' : kind, message: message ?? name };
}

/** A thrown error (kafkajs' protocol errors carry Kafka's code) as an entry's error. */
export function thrownError(e: unknown): TxnApiError {
  const err = e as { code?: unknown; message?: string; type?: string };
  if (typeof err.code === 'number' && Number.isInteger(err.code)) return kafkaError(err.code, err.message ?? null);
  return { code: -1, name: 'CLIENT_ERROR', kind: 'error', message: err.message ?? String(e) };
}

/** A broker without the API or the version a request needs. */
export const unsupported = (message: string): TxnApiError => ({ code: ERRORS.UNSUPPORTED_VERSION, name: 'UNSUPPORTED_VERSION', kind: 'unsupported', message });
