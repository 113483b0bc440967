// The fault scenarios of `npm run chaos`. Each one injects its faults into a running round (the
// pipeline workers and the local 3-node cluster) through the round's context, and returns when
// the last fault is over; the runner then waits for the pipeline to finish and verifies the sink.
import type { AvailabilityExpectation } from './availability.js';
import type { WorkerProcess } from './worker.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

export interface ScenarioContext {
  /** Node ids of the cluster's brokers. */
  brokers: number[];
  /** The worker that runs the round's pipeline (the latest one started under this name). */
  worker(name?: string): WorkerProcess;
  startWorker(name?: string): WorkerProcess;
  /** Stops a worker on purpose: the supervisor does not restart it. */
  killWorker(name: string, how: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Resolves once the pipeline has committed this fraction of the input. */
  waitProgress(fraction: number): Promise<void>;
  /** Records a fault (with the progress at that moment) for the report. */
  fault(what: string): void;
  killBroker(id: number): Promise<void>;
  stopBroker(id: number): Promise<void>;
  startBroker(id: number): Promise<void>;
  pauseBroker(id: number): Promise<void>;
  resumeBroker(id: number): Promise<void>;
  /** Waits until every partition of the round's topics and of the internal topics has its full ISR. */
  waitReplicated(): Promise<void>;
  /** Broker leading the __transaction_state partition of a partition task's transactional id. */
  transactionCoordinatorOf(sourcePartition: number): Promise<number>;
  leaderOf(topic: 'source' | 'sink', partition: number): Promise<number>;
  sleep(ms: number): Promise<void>;
  /** Transaction, session, request and checkpoint timeouts the round's workers run with (ms). */
  timeouts: { transaction: number; session: number; request: number; checkpoint: number };
}

export interface Scenario {
  name: string;
  description: string;
  /** Roughly how long the round should last, so that its faults fall inside the pipeline's run. */
  seconds: number;
  /** Needs the networked cluster (each broker and worker in a network namespace: harness/localcluster/network.ts). */
  network?: boolean;
  /** The workers' timeouts (ms) where the runner's short ones do not fit the scenario, e.g. slow links. */
  timeouts?: Partial<ScenarioContext['timeouts']>;
  /** pipeline.faultInjection settings of the round's workers, beside the rate the runner sets. */
  faultInjection?: { commitDelay?: string; commitDelayTimes?: number };
  /**
   * The round's pipeline runs unthrottled (as with --full-speed) with this pipeline.maxBytesPerPartition:
   * for faults that slow the pipeline themselves for the whole round (slow links), where the
   * runner's throttle would only add to them.
   */
  unthrottled?: {
    maxBytesPerPartition: number;
    /** The slowest pace still expected (records/s): the round's overall limit is the input at that pace. */
    minRecordsPerSecond: number;
  };
  /**
   * What the pipeline's availability must be (worker exits, failed checkpoints, ...: harness/chaos/availability.ts),
   * reported as met / not met beside the exactly-once verdict; it fails the round only with `enforce`.
   */
  availability?: AvailabilityExpectation;
  /** How long a broker the scenario stopped may take to start again, retries of a node that exits during start-up included (ms; default 240 s). */
  brokerStartBudgetMs?: number;
  /** Faults in place before the first worker starts (after the input is written), e.g. for the whole round. */
  setup?(ctx: ScenarioContext): Promise<void>;
  inject(ctx: ScenarioContext): Promise<void>;
}

/** What bounceBroker needs of a round (the Flink rounds of harness/chaos/flink-runner.ts have it too). */
export type BrokerFaults = Pick<ScenarioContext, 'fault' | 'killBroker' | 'stopBroker' | 'startBroker' | 'sleep' | 'waitReplicated'>;

/** A broker taken down (SIGKILL, or SIGTERM for a clean stop), started again after `downMs`, and back in sync. */
export async function bounceBroker(ctx: BrokerFaults, id: number, how: 'SIGKILL' | 'SIGTERM', downMs: number, label = `${how} broker ${id}`): Promise<void> {
  ctx.fault(label);
  if (how === 'SIGKILL') await ctx.killBroker(id);
  else await ctx.stopBroker(id);
  if (downMs > 0) await ctx.sleep(downMs);
  await ctx.startBroker(id);
  await ctx.waitReplicated();
}

/** Process faults that take one broker away at a time on a 3-node cluster: no worker exit, no failed checkpoint (a miss fails the round). */
export const BROKER_AWAY_EXPECTATION: AvailabilityExpectation = { workerExits: 0, failedCheckpoints: 0, minBrokers: 3, enforce: true };

/**
 * The workers' timeouts for those faults: the pipeline's defaults (30 s checkpoints, 60 s
 * transactions). A killed broker is declared dead after the broker session timeout (9 s) and only
 * then do its partitions and coordinators move; the runner's short 10 s checkpoints (kept short for
 * the scenarios that wait for a timeout) would fail on that wait alone, where a production
 * checkpoint timeout only slows down.
 */
export const BROKER_AWAY_TIMEOUTS = { checkpoint: 30_000, transaction: 60_000 };

export const SCENARIOS: Scenario[] = [
  {
    name: 'worker-kill',
    description: 'the worker killed with SIGKILL at 20 %, 40 % and 60 % of the input, restarted each time',
    seconds: 30,
    async inject(ctx) {
      for (const at of [0.2, 0.4, 0.6]) {
        await ctx.waitProgress(at);
        ctx.fault('SIGKILL worker');
        await ctx.killWorker('main', 'SIGKILL');
        ctx.startWorker('main');
      }
    },
  },
  {
    name: 'worker-term',
    description: 'the worker stopped with SIGTERM at 30 % (final checkpoint, clean leave) and started again',
    seconds: 25,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      ctx.fault('SIGTERM worker');
      await ctx.killWorker('main', 'SIGTERM');
      ctx.startWorker('main');
    },
  },
  {
    name: 'broker-kill',
    // One broker away on a 3-node cluster (RF 3, min ISR 2) leaves every partition writable: the
    // pipeline rides it out without a failed checkpoint or a worker exit.
    availability: BROKER_AWAY_EXPECTATION,
    timeouts: BROKER_AWAY_TIMEOUTS,
    description: 'every broker in turn killed with SIGKILL and restarted, each after the previous one is back in sync',
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      for (const id of ctx.brokers) await bounceBroker(ctx, id, 'SIGKILL', 5000);
    },
  },
  {
    name: 'broker-rolling-restart',
    // One broker away on a 3-node cluster (RF 3, min ISR 2) leaves every partition writable: the
    // pipeline rides it out without a failed checkpoint or a worker exit.
    availability: BROKER_AWAY_EXPECTATION,
    timeouts: BROKER_AWAY_TIMEOUTS,
    description: 'a clean rolling restart: every broker in turn stopped with SIGTERM and started, each after the previous one is back in sync',
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      for (const id of ctx.brokers) await bounceBroker(ctx, id, 'SIGTERM', 0);
    },
  },
  {
    name: 'coordinator-kill',
    // One broker away on a 3-node cluster (RF 3, min ISR 2) leaves every partition writable: the
    // pipeline rides it out without a failed checkpoint or a worker exit.
    availability: BROKER_AWAY_EXPECTATION,
    timeouts: BROKER_AWAY_TIMEOUTS,
    description: 'SIGKILL of the broker leading the transaction coordinator partition of partition 0\'s transactional id, restarted after 5 s',
    seconds: 40,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      const id = await ctx.transactionCoordinatorOf(0);
      await bounceBroker(ctx, id, 'SIGKILL', 5000, `SIGKILL broker ${id} (transaction coordinator)`);
    },
  },
  {
    name: 'zombie',
    description: 'the worker paused (SIGSTOP) past its session and transaction timeouts while a second worker takes over, then resumed: it must be fenced',
    seconds: 45,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      const zombie = ctx.worker('main');
      ctx.fault('SIGSTOP worker main');
      zombie.signal('SIGSTOP');
      const pausedAt = Date.now();
      const b = ctx.startWorker('b');
      await b.waitFor(/partition task initialised/, 120_000).catch(() => undefined);
      const pause = Math.max(ctx.timeouts.transaction, ctx.timeouts.session) + 3000;
      await ctx.sleep(Math.max(0, pausedAt + pause - Date.now()));
      ctx.fault('SIGCONT worker main');
      zombie.signal('SIGCONT');
      const fenced = await zombie.waitFor(/producer fenced by a newer epoch|fenced/, 60_000).then(
        () => true,
        () => false,
      );
      ctx.fault(fenced ? 'zombie reported itself fenced' : 'zombie did not report itself fenced within 60 s');
    },
  },
  {
    name: 'broker-pause',
    // The pause outlasts the checkpoint timeout: checkpoints may fail, but the pipeline must recover without exiting.
    availability: { workerExits: 0, minBrokers: 3 },
    description: 'the leader of source partition 0 paused (SIGSTOP) for longer than the request timeout, then resumed',
    seconds: 45,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      const id = await ctx.leaderOf('source', 0);
      ctx.fault(`SIGSTOP broker ${id}`);
      await ctx.pauseBroker(id);
      await ctx.sleep(ctx.timeouts.request + 5000);
      ctx.fault(`SIGCONT broker ${id}`);
      await ctx.resumeBroker(id);
      await ctx.waitReplicated();
    },
  },
];
/**
 * The entries of `list` named in a comma-separated spec of names and groups (by default only
 * "all"), each once, in the list's order.
 */
export function pickScenarios<T extends { name: string }>(list: T[], spec: string, groups: Record<string, () => T[]> = { all: () => list }): T[] {
  const chosen = new Set<T>();
  for (const raw of spec.split(',')) {
    const name = raw.trim();
    const group = groups[name];
    if (group) {
      for (const s of group()) chosen.add(s);
      continue;
    }
    const s = list.find((x) => x.name === name);
    if (!s) throw new EosError(ErrorCodes.USAGE, `unknown scenario "${name}"; expected one of: ${[...list.map((x) => x.name), ...Object.keys(groups)].join(', ')}`);
    chosen.add(s);
  }
  return list.filter((s) => chosen.has(s));
}
