// Network fault scenarios of `npm run chaos`, on the networked cluster (every broker and worker
// in a network namespace of its own: harness/localcluster/network.ts). Partitions drop packets (no
// reset, no error: the other side just goes silent), as a cable pulled or a switch gone wrong
// would. Every partition lasts past the brokers' session timeout (9 s, so the controller fences a
// broker it no longer hears) and the workers' session, request and transaction timeouts, and is
// healed before the round ends; the runner then waits for the pipeline to commit everything and
// verifies the sink.
import { pollUntil } from '../../src/runtime/poll-until.js';
import type { RoundNetwork } from './network-faults.js';
import type { Scenario, ScenarioContext } from './scenarios.js';
import type { WorkerProcess } from './worker.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

/** How long a partition lasts. */
const PARTITION_MS = 30_000;
/** The slow links of net-slow-links: netem's `delay 200ms 50ms loss 5%` on every link. */
export const SLOW_LINKS = { delayMs: 200, jitterMs: 50, lossPercent: 5 };
/** pipeline.maxBytesPerPartition of the workers over slow links. */
export const SLOW_LINK_FETCH_BYTES = 65_536;
/** The workers' timeouts for slow links (ms). */
export const SLOW_LINK_TIMEOUTS = { checkpoint: 30_000, transaction: 45_000, request: 30_000, session: 30_000 };
/** The worker's link in net-worker-flap: down for each of these (ms), up for FLAP_UP_MS between. */
const FLAP_DOWN_MS = [3000, 5000, 8000, 3000, 12_000];
const FLAP_UP_MS = 4000;

function netOf(ctx: ScenarioContext): RoundNetwork {
  const net = (ctx as ScenarioContext & { net?: RoundNetwork }).net;
  if (!net) throw new Error('a network scenario needs the networked cluster');
  return net;
}

const list = (ids: number[]) => ids.join(' and ');

/** Resolves once the worker has written `n` lines containing `text` (polled every 20 ms). */
async function nthLine(w: WorkerProcess, text: string, n: number, timeoutMs: number): Promise<void> {
  const written = () => w.output.split(text).length - 1;
  // A worker that exited writes nothing more: the wait ends at once.
  await pollUntil(`worker ${w.name} to write "${text}" ${n} times`, () => written() >= n || !w.alive, { timeoutMs, intervalMs: 20 });
  if (written() < n) throw new EosError(ErrorCodes.HARNESS_FAILED, `worker ${w.name} exited after writing "${text}" ${written()} of ${n} times`);
}

/** The checkpoints whose commit net-coordinator-isolated holds back; the cut comes at the last of them. */
const DELAYED_COMMITS = 3;

/**
 * At 20 % of the input, cuts the sides that `sides` names off from each other for PARTITION_MS,
 * then heals; when brokers were cut from brokers, waits until every partition has its full ISR.
 */
async function partitionAt20(ctx: ScenarioContext, sides: (net: RoundNetwork) => Promise<{ fault: string; a: string[]; b: string[] }>, brokersSplit = true): Promise<void> {
  const net = netOf(ctx);
  await ctx.waitProgress(0.2);
  const { fault, a, b } = await sides(net);
  await net.partition(fault, a, b);
  await ctx.sleep(PARTITION_MS);
  await net.heal();
  if (brokersSplit) await ctx.waitReplicated();
}

/** The leader of source partition 0 and the other brokers. */
async function leaderAndOthers(ctx: ScenarioContext): Promise<{ leader: number; others: number[] }> {
  const leader = await ctx.leaderOf('source', 0);
  return { leader, others: ctx.brokers.filter((b) => b !== leader) };
}

export const NETWORK_SCENARIOS: Scenario[] = [
  {
    name: 'net-leader-isolated',
    description: 'the leader of source partition 0 cut off from the other brokers (the minority side; the worker still reaches every broker) for 30 s, then healed',
    seconds: 60,
    network: true,
    inject: (ctx) =>
      partitionAt20(ctx, async (net) => {
        const { leader, others } = await leaderAndOthers(ctx);
        return { fault: `broker ${leader} (leader of source partition 0) cut off from brokers ${list(others)}`, a: [net.broker(leader)], b: others.map((b) => net.broker(b)) };
      }),
  },
  {
    name: 'net-coordinator-isolated',
    description:
      `the transaction coordinator of partition 0's transactional id cut off from every other broker and the worker between preCommit and commit of the ${DELAYED_COMMITS}rd checkpoint (held open 3 s by faultInjection.commitDelay) for 30 s, then healed`,
    seconds: 40,
    network: true,
    faultInjection: { commitDelay: '3s', commitDelayTimes: DELAYED_COMMITS },
    async inject(ctx) {
      const net = netOf(ctx);
      const held = 'fault injection: pre-committed, waiting before commit';
      // Only the first checkpoints wait, so the rest of the round runs at its pace. Transactions
      // have begun by the one before the last (on a new cluster __transaction_state exists only then).
      await nthLine(ctx.worker('main'), held, DELAYED_COMMITS - 1, 180_000);
      const coordinator = await ctx.transactionCoordinatorOf(0);
      const others = ctx.brokers.filter((b) => b !== coordinator);
      // Pre-committed, now waiting to commit.
      await nthLine(ctx.worker('main'), held, DELAYED_COMMITS, 180_000);
      await net.partition(
        `broker ${coordinator} (transaction coordinator) cut off from brokers ${list(others)} and the worker, between preCommit and commit`,
        [net.broker(coordinator)],
        [...others.map((b) => net.broker(b)), net.worker('main')],
      );
      await ctx.sleep(PARTITION_MS);
      await net.heal();
      await ctx.waitReplicated();
    },
  },
  {
    name: 'net-worker-cut-from-coordinator',
    description:
      "the worker cut off from one broker only, the transaction coordinator of partition 0's transactional id (asymmetric: the brokers still reach each other, the worker reaches the two others), for 30 s, then healed",
    seconds: 60,
    network: true,
    inject: (ctx) =>
      partitionAt20(
        ctx,
        async (net) => {
          const coordinator = await ctx.transactionCoordinatorOf(0);
          return { fault: `worker cut off from broker ${coordinator} (transaction coordinator) only`, a: [net.worker('main')], b: [net.broker(coordinator)] };
        },
        false,
      ),
  },
  {
    name: 'net-split-worker-minority',
    description: 'a symmetric split 1 | 2: the leader of source partition 0 and the worker on one side, the two other brokers on the other, for 30 s, then healed',
    seconds: 60,
    network: true,
    inject: (ctx) =>
      partitionAt20(ctx, async (net) => {
        const { leader, others } = await leaderAndOthers(ctx);
        return { fault: `split: broker ${leader} and the worker | brokers ${list(others)}`, a: [net.broker(leader), net.worker('main')], b: others.map((b) => net.broker(b)) };
      }),
  },
  {
    name: 'net-slow-links',
    description: `every link between brokers and worker slow and lossy for the whole round: ${SLOW_LINKS.delayMs} ms ± ${SLOW_LINKS.jitterMs} ms delay out of every endpoint, ${SLOW_LINKS.lossPercent} % loss`,
    // Every request crosses slow links: a long planned round keeps the pace within what they carry.
    seconds: 300,
    network: true,
    // A checkpoint takes several round trips of 400 ms with retransmissions on top (sends
    // acknowledged by every replica, AddOffsetsToTxn, TxnOffsetCommit, EndTxn): with the 10 s
    // checkpoint timeout of the other rounds nearly every checkpoint timed out (docs/chaos-results.md),
    // so the workers run with timeouts an operator would set for such links.
    timeouts: SLOW_LINK_TIMEOUTS,
    // The links are the throttle. A batch waits while a checkpoint runs, so each partition moves on
    // by one fetch per checkpoint (about 20 s over these links): the throttled rounds' 16 KiB
    // fetches made that about 16 records/s; 1 MiB fetches would not cross the links (some 17 KB/s
    // per connection at 5 % loss) within the request timeout. 64 KiB does both.
    // About 40-50 records/s was measured over these links (docs/chaos-results.md); 20 bounds a crawl.
    unthrottled: { maxBytesPerPartition: SLOW_LINK_FETCH_BYTES, minRecordsPerSecond: 20 },
    async setup(ctx) {
      const s = SLOW_LINKS;
      await netOf(ctx).slow(`slow links: ${s.delayMs} ms ± ${s.jitterMs} ms delay, ${s.lossPercent} % loss on every link`, s);
    },
    async inject() {
      /* the links stay slow until the round ends */
    },
  },
  {
    name: 'net-worker-flap',
    description: `the worker's link flapping: down ${FLAP_DOWN_MS.map((ms) => ms / 1000).join(', ')} s, up ${FLAP_UP_MS / 1000} s in between`,
    seconds: 80,
    network: true,
    async inject(ctx) {
      const net = netOf(ctx);
      await ctx.waitProgress(0.2);
      for (const [i, ms] of FLAP_DOWN_MS.entries()) {
        if (i > 0) await ctx.sleep(FLAP_UP_MS);
        await net.linkDown(`worker link down (${ms / 1000} s)`, net.worker('main'));
        await ctx.sleep(ms);
        await net.heal('worker link up');
      }
    },
  },
];
