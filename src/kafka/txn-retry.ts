// The transactional producer's coordinator calls retried as Kafka's own producer retries them.
//
// kafkajs 2.2.4's transactions give up on errors that Kafka marks retriable, and a broker failover
// produces exactly those (found by the demo's own "kill 2": the pipeline FAILED on "This is not
// the correct coordinator for this group" within 14 s of one broker of three dying):
// - EndTxn (commit, abort), AddOffsetsToTxn and AddPartitionsToTxn outside a send are sent once:
//   NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS or a connection refused
//   by the dead coordinator fail the checkpoint;
// - sendOffsets' TxnOffsetCommit retries "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR" and
//   "COORDINATOR_LOAD_IN_PROGRESS", names kafkajs' own error table does not use (it says
//   GROUP_COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR_FOR_GROUP, GROUP_LOAD_IN_PROGRESS), so it
//   retries none of them (node_modules/kafkajs/src/producer/eosManager/index.js);
// - InitProducerId gives up on a connection error.
// Kafka's TransactionManager retries each of these, finding the coordinator again after
// NOT_COORDINATOR or a broken connection; EndTxn is safe to repeat (a coordinator that completed
// the commit answers a repeated commit with success). So does this module, within a time budget:
// the checkpoint's own deadline bounds it from above (checkpoint-driver.ts), and a producer that
// is disconnected or fenced stops retrying at once.
//
// The view also remembers each coordinator, as Kafka's TransactionManager does: kafkajs asks a
// broker FindCoordinator before every coordinator call (AddPartitionsToTxn, AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn: four extra round trips per transaction, one of them inside every timed
// commit). The view asks once per transactional id or group and keeps the answer until a call to
// that coordinator fails with a stale coordinator or a broken connection (the retry then asks
// again), or the broker is no longer in the producer's metadata.
//
// How: kafkajs builds one transaction manager (eosManager) per producer from the producer's
// cluster. Its module is replaced in Node's module cache (module-cache.ts, installed by
// preload.ts) by a factory that hands the original a view of the cluster whose coordinators are
// brokers with retrying transaction calls. The retry loop itself is pure (retryCoordinatorCall).
import { createRequire } from 'node:module';
import { replaceModule } from './module-cache.js';
import { classifyCoordinatorError, type CoordinatorErrorKind } from './coordinator-errors.js';

export { classifyCoordinatorError, type CoordinatorErrorKind };

export interface RetryPolicy {
  /** Longest time a call is retried, from its first attempt. */
  budgetMs: number;
  /** First pause between attempts; doubled up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** Java's TransactionManager pauses retry.backoff.ms (100 ms) between attempts, 20 ms for CONCURRENT_TRANSACTIONS; a failover takes seconds. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { budgetMs: 30_000, initialBackoffMs: 50, maxBackoffMs: 1_000 };

export interface RetryDeps {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** False once the producer disconnected: no further attempt. */
  live(): boolean;
  /** An attempt failed and another follows (for a debug line). */
  onRetry?(err: unknown, attempt: number, kind: CoordinatorErrorKind): void;
}

/**
 * Runs `call` against the coordinator `find` names, again after each retriable failure (asking
 * `find` again after a stale coordinator or a broken connection) until it succeeds, fails for
 * good, the budget is spent or the producer is gone; then the last error is thrown.
 */
export async function retryCoordinatorCall<B, T>(find: () => Promise<B>, first: B, call: (broker: B) => Promise<T>, policy: RetryPolicy, deps: RetryDeps): Promise<T> {
  const start = deps.now();
  let broker = first;
  let backoff = policy.initialBackoffMs;
  for (let attempt = 1; ; attempt++) {
    let kind: CoordinatorErrorKind;
    try {
      return await call(broker);
    } catch (err) {
      kind = classifyCoordinatorError(err);
      const wait = Math.min(backoff, policy.maxBackoffMs);
      if (kind === 'fatal' || !deps.live() || deps.now() - start + wait > policy.budgetMs) throw err;
      deps.onRetry?.(err, attempt, kind);
      await deps.sleep(wait);
      backoff = Math.min(backoff * 2, policy.maxBackoffMs);
      if (!deps.live()) throw err;
      if (kind === 'refind') {
        // Finding the coordinator may itself fail while the cluster elects one: the next attempt asks again.
        try {
          broker = await find();
        } catch (findErr) {
          if (classifyCoordinatorError(findErr) === 'fatal') throw findErr;
        }
      }
    }
  }
}

/** The broker calls of kafkajs' transaction manager that go to a coordinator. */
export const COORDINATOR_CALLS = ['initProducerId', 'addPartitionsToTxn', 'addOffsetsToTxn', 'endTxn', 'txnOffsetCommit'] as const;

interface KafkajsLogger {
  debug(message: string, extra?: Record<string, unknown>): void;
}

interface ClusterLike {
  findGroupCoordinator(args: { groupId: string; coordinatorType?: number }): Promise<Record<string, unknown>>;
  /** The broker of the producer's metadata, connected; throws when the metadata has no such node. */
  findBroker(args: { nodeId: number }): Promise<Record<string, unknown>>;
  disconnect(): Promise<void>;
}

type CoordinatorKey = { groupId: string; coordinatorType?: number };

/**
 * A view of a producer's cluster for its transaction manager: `findGroupCoordinator` answers the
 * remembered coordinator (or asks for it), a broker whose coordinator calls retry
 * (retryCoordinatorCall), asking again after a stale coordinator or a broken connection. Everything
 * else is the cluster's own.
 */
export function coordinatorRetryingCluster<C extends ClusterLike>(cluster: C, logger: KafkajsLogger | undefined, policy: RetryPolicy = DEFAULT_RETRY_POLICY): C {
  let live = true;
  const disconnect = cluster.disconnect.bind(cluster);
  // The producer disconnects its own cluster object (not this view): that ends every retry.
  cluster.disconnect = async () => {
    live = false;
    return disconnect();
  };
  const deps: RetryDeps = {
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    live: () => live,
    onRetry: (err, attempt, kind) => logger?.debug(`coordinator call failed; ${kind === 'refind' ? 'finding the coordinator again and ' : ''}retrying`, { error: (err as Error).message, attempt }),
  };
  // The node each lookup found, by coordinator type and key (see the header).
  const known = new Map<string, number>();
  const keyOf = (args: CoordinatorKey) => `${args.coordinatorType ?? 0}:${args.groupId}`;
  const lookup = async (args: CoordinatorKey) => {
    known.delete(keyOf(args));
    const broker = await cluster.findGroupCoordinator(args);
    if (typeof broker.nodeId === 'number') known.set(keyOf(args), broker.nodeId);
    return broker;
  };
  const remembered = async (args: CoordinatorKey) => {
    const nodeId = known.get(keyOf(args));
    if (nodeId === undefined) return lookup(args);
    try {
      return await cluster.findBroker({ nodeId });
    } catch {
      // Gone from the metadata or not reachable: ask who the coordinator is now.
      return lookup(args);
    }
  };
  const retrying = (args: CoordinatorKey, broker: Record<string, unknown>) =>
    new Proxy(broker, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (!(COORDINATOR_CALLS as readonly (string | symbol)[]).includes(prop)) return value.bind(target);
        return (req: unknown) =>
          retryCoordinatorCall(
            () => lookup(args),
            target,
            (b) => (b[prop as string] as (r: unknown) => Promise<unknown>).call(b, req),
            policy,
            deps,
          );
      },
    });
  return new Proxy(cluster, {
    get(target, prop, receiver) {
      if (prop === 'findGroupCoordinator') {
        return async (args: CoordinatorKey) => retrying(args, await remembered(args));
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

type EosManagerFactory = (opts: { cluster: ClusterLike; logger?: KafkajsLogger } & Record<string, unknown>) => unknown;

/** kafkajs' eosManager factory, handing each transaction manager the retrying view of its cluster. */
export function retryingEosManager(original: EosManagerFactory): EosManagerFactory {
  return (opts) => original({ ...opts, cluster: coordinatorRetryingCluster(opts.cluster, opts.logger) });
}

const WRAPPED = Symbol.for('eoswatch:txn-retry');
const EOS_MANAGER = 'kafkajs/src/producer/eosManager/index.js';

/** Puts the retrying eosManager factory where kafkajs' producer requires it. Idempotent. */
export function installTxnRetry(req: NodeJS.Require): true {
  const target = req.resolve(EOS_MANAGER);
  const cached = req.cache[target]?.exports as Record<symbol, unknown> | undefined;
  if (cached?.[WRAPPED]) return true;
  if (req.cache[req.resolve('kafkajs/src/producer/index.js')]) {
    throw new Error('src/kafka/txn-retry.ts was imported after kafkajs was loaded: it must come first (see src/kafka/module-cache.ts)');
  }
  const original = req(target) as EosManagerFactory;
  const wrapped = Object.assign(retryingEosManager(original), { [WRAPPED]: true, original });
  return replaceModule(req, { module: EOS_MANAGER, exports: wrapped, requiredBy: 'kafkajs/src/producer/index.js', installer: 'src/kafka/txn-retry.ts' });
}

/** True once kafkajs' transactional producers retry their coordinator calls (set when this module is evaluated). */
export const txnRetry = installTxnRetry(createRequire(import.meta.url));
