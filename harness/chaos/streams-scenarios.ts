// The fault scenarios of `npm run chaos -- --engine streams`: faults under the seed's Kafka Streams
// app (streams/app, exactly_once_v2, a state store) run as instances on the local Kafka cluster,
// injected through the round's context (harness/chaos/streams-runner.ts). Besides the verifier's
// verdict on the output topic, each scenario says what eoswatch, watching the app as its sidecar,
// must have shown: a scenario whose faults leave no trace in the metrics fails too.
import { bounceBroker, pickScenarios, type BrokerFaults } from './scenarios.js';
import type { StreamsObservations } from './streams-observations.js';

/** The app's timeouts in the rounds: a dead member leaves the group, and a dead producer's transaction is aborted, within about this long. */
export const STREAMS_SESSION_TIMEOUT_MS = 10_000;
/** Streams' own default under exactly_once_v2. */
export const STREAMS_TRANSACTION_TIMEOUT_MS = 10_000;
/** commit.interval.ms of the rounds' app: each transaction stays open this long. */
export const STREAMS_COMMIT_INTERVAL_MS = 1000;

export interface StreamsScenarioContext extends BrokerFaults {
  /** Node ids of the Kafka brokers. */
  brokers: number[];
  /** Resolves once the app has committed this fraction of the round's input (its group's offsets). */
  waitProgress(fraction: number): Promise<void>;
  /** SIGKILL of instance n (its open transaction lingers until aborted). */
  killInstance(n: number): Promise<void>;
  /** SIGTERM of instance n (KafkaStreams.close: it leaves the group) and its exit. */
  stopInstance(n: number): Promise<void>;
  /** Starts instance n again (its state directory kept: the same process UUID), or a new one; resolves once it is RUNNING. */
  startInstance(n?: number): Promise<number>;
  /** SIGSTOP / SIGCONT of instance n. */
  pauseInstance(n: number): Promise<void>;
  resumeInstance(n: number): Promise<void>;
  leaderOf(topic: 'source' | 'sink', partition: number): Promise<number>;
  /** An open transaction of the app, as eoswatch's transactions service names it, and the broker coordinating it. */
  openTransactionCoordinator(): Promise<{ transactionalId: string; broker: number }>;
}

export interface StreamsScenario {
  name: string;
  description: string;
  /** How long the round's input is written (a steady stream), so that the faults land mid-stream. */
  seconds: number;
  /** The scenario takes brokers away: it needs a 3-node cluster. */
  needsBrokers?: boolean;
  inject(ctx: StreamsScenarioContext): Promise<void>;
  /** What eoswatch must have shown; each string a miss. */
  expect(o: StreamsObservations): string[];
}

const rebalancesAtLeast = (o: StreamsObservations, n: number): string[] => (o.rebalances >= n ? [] : [`${o.rebalances} rebalances counted (eos_streams_rebalances_total), expected at least ${n}`]);

export const STREAMS_SCENARIOS: StreamsScenario[] = [
  {
    name: 'instance-kill',
    description: 'instance 1 killed with SIGKILL at 20 %, 45 % and 70 % of the input, started again 3 s later each time (its state directory kept)',
    seconds: 90,
    async inject(ctx) {
      for (const at of [0.2, 0.45, 0.7]) {
        await ctx.waitProgress(at);
        await ctx.killInstance(1);
        await ctx.sleep(3000);
        await ctx.startInstance(1);
      }
    },
    expect(o) {
      // A kill leaves the instance's open transaction (records sent, not committed: with 1 s commits
      // nearly always one) holding its output partitions' LSO until the restarted instance
      // initialises the same transactional id (fenced) or the coordinator times it out. A kill that
      // lands between a commit and the next record leaves none: at least one of the three must show.
      const out = rebalancesAtLeast(o, 3);
      if (o.lingering.length !== 3) out.push(`3 instance kills expected, ${o.lingering.length} recorded`);
      if (!o.lingering.some((l) => l.stuckMaxSeconds >= 2 && l.clearedAfterSeconds !== null)) {
        out.push(`after no kill did the LSO monitor see the output's LSO held ≥ 2 s and then released (${o.lingering.map((l) => `${l.stuckMaxSeconds} s`).join(', ')})`);
      }
      if (o.transactions.fenced + o.transactions.abortedTimeout < 1) out.push('no transaction of the app counted fenced or aborted_timeout (eos_coordinator_transactions_total): the killed instances\' open transactions should have been ended by the coordinator');
      if (!o.appDownSeen) out.push('eos_pipeline_up{engine="streams"} never went to 0 while the group rebalanced');
      return out;
    },
  },
  {
    name: 'instance-term',
    description: 'instance 1 stopped with SIGTERM (KafkaStreams.close) at 30 %, started again 3 s later',
    seconds: 60,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      await ctx.stopInstance(1);
      await ctx.sleep(3000);
      await ctx.startInstance(1);
    },
    expect: (o) => rebalancesAtLeast(o, 1),
  },
  {
    name: 'scale-out-in',
    description: 'a third instance started at 30 % and stopped with SIGTERM at 60 %',
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      const n = await ctx.startInstance();
      await ctx.waitProgress(0.6);
      await ctx.stopInstance(n);
    },
    expect(o) {
      const out = rebalancesAtLeast(o, 2);
      if (o.membersMax < 3) out.push(`at most ${o.membersMax} members seen in the group (eos_consumer_group_members), expected 3 after the scale-out`);
      return out;
    },
  },
  {
    name: 'zombie',
    description: `instance 1 paused with SIGSTOP at 30 % past its session and transaction timeouts (${(STREAMS_SESSION_TIMEOUT_MS + STREAMS_TRANSACTION_TIMEOUT_MS) / 1000 + 5} s) while another takes over its tasks, then resumed: its transaction aborted by the coordinator, its late writes kept from read_committed readers`,
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      await ctx.pauseInstance(1);
      await ctx.sleep(STREAMS_SESSION_TIMEOUT_MS + STREAMS_TRANSACTION_TIMEOUT_MS + 5000);
      await ctx.resumeInstance(1);
    },
    expect(o) {
      const out = rebalancesAtLeast(o, 1);
      if (o.transactions.abortedTimeout < 1) out.push('no transaction of the app counted aborted_timeout (eos_coordinator_transactions_total): the paused instance\'s open transaction should have timed out');
      return out;
    },
  },
  {
    name: 'broker-kill',
    description: 'SIGKILL of the broker leading output partition 0 at 30 %, restarted after 5 s',
    seconds: 90,
    needsBrokers: true,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      const id = await ctx.leaderOf('sink', 0);
      await bounceBroker(ctx, id, 'SIGKILL', 5000, `SIGKILL broker ${id} (leader of output partition 0)`);
    },
    expect: () => [],
  },
  {
    name: 'broker-rolling-restart',
    description: 'a clean rolling restart under the app at 20 %: every broker in turn stopped with SIGTERM and started, each after the previous one is back in sync',
    seconds: 120,
    needsBrokers: true,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      for (const id of ctx.brokers) await bounceBroker(ctx, id, 'SIGTERM', 0);
    },
    expect: () => [],
  },
  {
    name: 'coordinator-kill',
    description: 'SIGKILL at 30 % of the broker coordinating an open transaction of the app, restarted after 5 s',
    seconds: 90,
    needsBrokers: true,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      const c = await ctx.openTransactionCoordinator();
      await bounceBroker(ctx, c.broker, 'SIGKILL', 5000, `SIGKILL broker ${c.broker} (transaction coordinator of ${c.transactionalId})`);
    },
    expect: () => [],
  },
];

export function findStreamsScenarios(spec: string): StreamsScenario[] {
  return pickScenarios(STREAMS_SCENARIOS, spec);
}
