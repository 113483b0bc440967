// What a failed call to a coordinator (transaction or group coordinator) means: send it again,
// ask again who the coordinator is, or give up. Shared by the transactional producer's retries
// (txn-retry.ts) and the lag service's group reads (group-reader.ts). Its own module, without
// kafkajs: txn-retry.ts replaces a kafkajs module and must be loaded before kafkajs, which a
// reader of groups imported from a harness command cannot promise.

/** Kafka errors after which a coordinator call is sent again (kafkajs' names and Kafka's). */
const RETRIABLE_PROTOCOL_ERRORS = new Set([
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP',
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS',
  'CONCURRENT_TRANSACTIONS',
  'REQUEST_TIMED_OUT',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'NOT_LEADER_OR_FOLLOWER',
  'NOT_LEADER_FOR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'NETWORK_EXCEPTION',
]);

/** Of those, the ones that mean "ask again who the coordinator is". */
const STALE_COORDINATOR_ERRORS = new Set(['NOT_COORDINATOR', 'NOT_COORDINATOR_FOR_GROUP', 'COORDINATOR_NOT_AVAILABLE', 'GROUP_COORDINATOR_NOT_AVAILABLE']);

/** kafkajs errors of the connection itself: the broker is gone or did not answer in time. */
const CONNECTION_ERRORS = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSMetadataNotLoaded',
]);

export type CoordinatorErrorKind = 'retry' | 'refind' | 'fatal';

interface ErrorLike {
  name?: string;
  type?: string;
  code?: string;
  cause?: unknown;
}

/**
 * What a failed coordinator call means: `refind` (ask again who the coordinator is, then send
 * again), `retry` (send again to the same one), or `fatal` (fenced, not authorised, an invalid
 * state: the checkpoint fails). A kafkajs error that wraps another (KafkaJSNumberOfRetriesExceeded)
 * is judged by the innermost one.
 */
export function classifyCoordinatorError(err: unknown): CoordinatorErrorKind {
  let e = err as ErrorLike | undefined;
  for (let depth = 0; e && typeof e === 'object' && e.cause && depth < 8; depth++) e = e.cause as ErrorLike;
  if (!e || typeof e !== 'object') return 'fatal';
  if (e.type && STALE_COORDINATOR_ERRORS.has(e.type)) return 'refind';
  if (e.type && RETRIABLE_PROTOCOL_ERRORS.has(e.type)) return 'retry';
  if (e.name && CONNECTION_ERRORS.has(e.name)) return 'refind';
  if (e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET' || e.code === 'EPIPE' || e.code === 'ETIMEDOUT') return 'refind';
  return 'fatal';
}
