// A fix to kafkajs 2.2.4 that eoswatch applies at load time (kafkajs has had no release since).
//
// RequestQueue.scheduleCheckPendingRequests (node_modules/kafkajs/src/network/requestQueue/index.js)
// runs after every response, and when nothing is pending and the queue is not throttled it still
// arms a timer with a negative delay (`throttledUntil` is -1, minus Date.now()): Node runs it after
// 1 ms, it checks the empty queue and arms the next one. Every connection that has ever received a
// response wakes its process about 1,000 times a second for as long as it stays open (kafkajs
// issues #1556, #1604, #1704; fix proposed in PR #1667, not released). An idle daemon holding one
// admin connection spent about 6 % of a core and 850 context switches a second on it.
//
// The replacement arms a timer only when requests are waiting: at the end of the throttle, or
// after CHECK_PENDING_REQUESTS_INTERVAL (10 ms) when they wait for an in-flight slot (a response
// frees the slot and checks the queue at once anyway). Nothing waiting: nothing to check; `push`
// schedules the check when it queues a request.
import { createRequire } from 'node:module';

const CHECK_PENDING_REQUESTS_INTERVAL = 10;

/** The fields of kafkajs' RequestQueue the replacement uses. */
export interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
}

/** kafkajs' RequestQueue.prototype.scheduleCheckPendingRequests without the idle 1 ms loop. */
export function scheduleCheckPendingRequests(this: RequestQueueLike): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL,
  );
}

let applied: boolean | undefined;

/**
 * Replaces the method on kafkajs' RequestQueue class (the module instance every kafkajs client in
 * this process uses). Idempotent; false when this kafkajs has no such method (a version with a
 * different network layer), which is then left as it is.
 */
export function patchKafkajs(): boolean {
  if (applied !== undefined) return applied;
  const require = createRequire(import.meta.url);
  let RequestQueue: { prototype: Partial<RequestQueueLike> & { scheduleCheckPendingRequests?: unknown } } | undefined;
  try {
    RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as typeof RequestQueue;
  } catch {
    RequestQueue = undefined;
  }
  applied = typeof RequestQueue?.prototype.scheduleCheckPendingRequests === 'function';
  if (applied) RequestQueue!.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  return applied;
}
