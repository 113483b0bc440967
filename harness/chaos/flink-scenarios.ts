// The fault scenarios of `npm run chaos -- --engine flink`: faults under the seed's Flink job
// (flink/job, KafkaSink EXACTLY_ONCE) on a local Flink session cluster and the local 3-node Kafka
// cluster, injected through the round's context (harness/chaos/flink-runner.ts). Besides the
// verifier's verdict on the sink, each scenario says what eoswatch, watching the job as its
// sidecar, must have shown: a scenario whose faults leave no trace in the metrics fails too.
import type { FlinkObservations } from './flink-observations.js';
import { bounceBroker, pickScenarios, type BrokerFaults } from './scenarios.js';
import { lingeringSeen } from './observed.js';

export interface FlinkScenarioContext extends BrokerFaults {
  /** Node ids of the Kafka brokers. */
  brokers: number[];
  /** Resolves once the job has committed this fraction of the round's input (its source offsets, committed on checkpoints). */
  waitProgress(fraction: number): Promise<void>;
  /** SIGKILL of the TaskManager running the job, and its start again (resolves once it registered). */
  killTaskManager(): Promise<void>;
  startTaskManager(): Promise<void>;
  killJobManager(): Promise<void>;
  startJobManager(): Promise<void>;
  /** Submits the job again from the newest checkpoint the lost one retained; returns that checkpoint's path. */
  resubmitFromRetainedCheckpoint(): Promise<string>;
  /** The job's checkpoint directory replaced by a file (and put back): every checkpoint fails on an I/O error. */
  blockCheckpoints(): Promise<void>;
  unblockCheckpoints(): Promise<void>;
  leaderOf(topic: 'source' | 'sink', partition: number): Promise<number>;
  /** The transaction subtask 0 of the sink writes now, and the broker coordinating it. */
  openTransactionCoordinator(): Promise<{ transactionalId: string; broker: number }>;
  /**
   * Networked clusters only (FlinkScenario.network): every packet between the JobManager and each
   * TaskManager dropped (the brokers still reachable from both); or every packet between
   * TaskManager 1 and the JobManager and the brokers. heal() ends the cuts.
   */
  isolateJobManager(): Promise<void>;
  isolateTaskManager(): Promise<void>;
  heal(): Promise<void>;
  /** The input is written no further than this fraction until the gate moves (null: no gate); see RoundProgress.gateAt. */
  gateInput(fraction: number | null): void;
}

export interface FlinkScenario {
  name: string;
  description: string;
  /** How long the round's input is written (a steady stream), so that the faults land mid-stream. */
  seconds: number;
  /** Runs on the networked cluster (the JobManager and TaskManagers in namespaces of their own). */
  network?: boolean;
  /** Records of the round when --records is not given. */
  records?: number;
  /** Every fault must land before the whole input is committed (a miss otherwise). */
  faultsMidRun?: boolean;
  /** The verifier's bounds when they are not all 0 (the seed's protocol allows 0.1 % out of order). */
  thresholds?: { maxDuplicateRate: number; maxLossRate: number; maxOutOfOrderRate: number };
  inject(ctx: FlinkScenarioContext): Promise<void>;
  /** What eoswatch must have shown; each string a miss. */
  expect(o: FlinkObservations): string[];
}

export const FLINK_SCENARIOS: FlinkScenario[] = [
  {
    name: 'tm-kill',
    description: 'the TaskManager killed with SIGKILL at 20 %, 45 % and 70 % of the input and started again each time',
    seconds: 150,
    async inject(ctx) {
      for (const at of [0.2, 0.45, 0.7]) {
        await ctx.waitProgress(at);
        await killTaskManager(ctx);
      }
    },
    expect(o) {
      const out = lingeringSeen(o.lingering, 3);
      if (o.restarts < 3) out.push(`${o.restarts} failovers counted (eos_pipeline_restarts_total), expected at least 3`);
      if (!o.jobDownSeen) out.push('eos_pipeline_up never went to 0 while the TaskManager was gone');
      if (o.prometheus && !o.alertsFired.includes('EosFlinkJobRestarting')) out.push('EosFlinkJobRestarting did not fire after 3 failovers');
      return out;
    },
  },
  {
    name: 'jm-kill',
    description: 'the JobManager killed with SIGKILL at 30 % (no HA: the job is lost), started again, the job resubmitted from its newest retained checkpoint',
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      await ctx.killJobManager();
      await ctx.startJobManager();
      await ctx.resubmitFromRetainedCheckpoint();
    },
    expect(o) {
      const out = lingeringSeen(o.lingering, 1);
      if (!o.restUnreachableSeen) out.push('eos_flink_rest_up never went to 0 while the JobManager was gone');
      if (o.restoredFromId === null || o.restoredFromId <= 0) out.push('the resubmitted job shows no restored checkpoint (eos_checkpoint_restored_id)');
      return out;
    },
  },
  {
    name: 'broker-kill',
    description: 'SIGKILL of the broker leading sink partition 0 at 30 %, restarted after 5 s',
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      const id = await ctx.leaderOf('sink', 0);
      await bounceBroker(ctx, id, 'SIGKILL', 5000, `SIGKILL broker ${id} (leader of sink partition 0)`);
    },
    expect: () => [],
  },
  {
    name: 'broker-rolling-restart',
    description: 'a clean rolling restart under the job at 20 %: every broker in turn stopped with SIGTERM and started, each after the previous one is back in sync',
    seconds: 120,
    async inject(ctx) {
      await ctx.waitProgress(0.2);
      await rollingRestart(ctx);
    },
    expect: () => [],
  },
  {
    name: 'coordinator-kill',
    description: "SIGKILL at 30 % of the broker coordinating the sink's open transaction (subtask 0), restarted after 5 s",
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      const c = await ctx.openTransactionCoordinator();
      await bounceBroker(ctx, c.broker, 'SIGKILL', 5000, `SIGKILL broker ${c.broker} (transaction coordinator of ${c.transactionalId})`);
    },
    expect: () => [],
  },
  {
    name: 'checkpoint-failure',
    description: "the job's checkpoint directory replaced by a file for 20 s at 30 %: every checkpoint fails with an I/O error (the job, 0 tolerable failures, restarts after each), then put back",
    seconds: 90,
    async inject(ctx) {
      await ctx.waitProgress(0.3);
      await ctx.blockCheckpoints();
      await ctx.sleep(20_000);
      await ctx.unblockCheckpoints();
    },
    expect(o) {
      const out: string[] = [];
      if (o.consecutiveFailuresMax < 3) out.push(`eos_checkpoint_consecutive_failures reached ${o.consecutiveFailuresMax}, expected at least 3`);
      if (!o.prometheus) out.push('no live Prometheus: EosCheckpointFailing could not be checked (install the Debian package prometheus, or set PROMETHEUS)');
      else {
        if (!o.alertsFired.includes('EosCheckpointFailing')) out.push('EosCheckpointFailing did not fire in Prometheus');
        // Its second clause also fires for the trigger failures of a job's first seconds: the first must have held.
        if (!o.consecutiveFailuresClauseSeen) out.push('Prometheus never saw eos_checkpoint_consecutive_failures > 0 (the first clause of EosCheckpointFailing)');
      }
      return out;
    },
  },
];

/**
 * How long a cut lasts: past the cluster's heartbeat.timeout (10 s, harness/localcluster/flink-cluster.ts)
 * with room for the heartbeat that was in flight, so that both sides declare the other lost.
 */
export const ISOLATION_MS = 20_000;

async function killTaskManager(ctx: FlinkScenarioContext): Promise<void> {
  await ctx.killTaskManager();
  await ctx.startTaskManager();
}

async function isolateJobManager(ctx: FlinkScenarioContext): Promise<void> {
  await ctx.isolateJobManager();
  await ctx.sleep(ISOLATION_MS);
  await ctx.heal();
}

async function isolateTaskManager(ctx: FlinkScenarioContext): Promise<void> {
  await ctx.isolateTaskManager();
  await ctx.sleep(ISOLATION_MS);
  await ctx.heal();
}

async function rollingRestart(ctx: FlinkScenarioContext): Promise<void> {
  for (const id of ctx.brokers) await bounceBroker(ctx, id, 'SIGTERM', 0);
}

/** The job restarted and was seen down, a checkpoint failed while it was, and checkpoints completed again after the last fault. */
function failedOver(o: FlinkObservations, faults: number): string[] {
  const out: string[] = [];
  if (o.restarts < faults) out.push(`${o.restarts} failovers counted (eos_pipeline_restarts_total), expected at least ${faults}`);
  if (!o.jobDownSeen) out.push('eos_pipeline_up never went to 0 while the job had lost its TaskManager');
  if (o.consecutiveFailuresMax < 1) out.push('no failed checkpoint counted (eos_checkpoint_consecutive_failures) while the job had lost its TaskManager');
  // Judged by the live Prometheus too: the first clause of EosCheckpointFailing held after the fault.
  else if (o.prometheus && !o.consecutiveFailuresClauseSeen) out.push('Prometheus never saw eos_checkpoint_consecutive_failures > 0 after the fault (the first clause of EosCheckpointFailing)');
  if (o.visibleAfterLastFault === 0) out.push('no checkpoint became visible on the sink after the last fault (eos_flink_sink_visibility_latency_seconds): the job was not seen committing again');
  return out;
}

/** The seed's fault kinds (../shared/seeds, section 5): TaskManager kill -9, JobManager network isolation, broker rolling restart. */
export const SEED_FAULTS: { name: string; inject(ctx: FlinkScenarioContext): Promise<void> }[] = [
  { name: 'tm-kill', inject: killTaskManager },
  { name: 'jm-isolated', inject: isolateJobManager },
  { name: 'broker-rolling-restart', inject: rollingRestart },
];

/** The seed's table: 1,000,000 records, 12 faults (four of each kind), 0 duplicated, 0 lost, at most 0.1 % out of order. */
export const SEED_PROTOCOL = { records: 1_000_000, faultsPerKind: 4, thresholds: { maxDuplicateRate: 0, maxLossRate: 0, maxOutOfOrderRate: 0.001 } };

/** Where the seed protocol's faults land: fault i of n at (i + 1) / (n + 1) of the committed input, the kinds in turn. Pure. */
export function seedFaultPlan(faultsPerKind: number, kinds: readonly string[]): { at: number; kind: string }[] {
  const n = faultsPerKind * kinds.length;
  return Array.from({ length: n }, (_, i) => ({ at: (i + 1) / (n + 1), kind: kinds[i % kinds.length]! }));
}

export const FLINK_NETWORK_SCENARIOS: FlinkScenario[] = [
  {
    name: 'jm-isolated',
    network: true,
    description: `the JobManager cut off from the TaskManager (every packet dropped, the brokers still reachable) for ${ISOLATION_MS / 1000} s at 30 %, past heartbeat.timeout, then healed`,
    seconds: 90,
    inject: async (ctx) => {
      await ctx.waitProgress(0.3);
      await isolateJobManager(ctx);
    },
    expect: (o) => failedOver(o, 1),
  },
  {
    name: 'tm-isolated',
    network: true,
    description: `the TaskManager cut off from the JobManager and every broker for ${ISOLATION_MS / 1000} s at 30 %, then healed: its open transactions hold the sink's LSO until the restored job aborts them`,
    seconds: 90,
    inject: async (ctx) => {
      await ctx.waitProgress(0.3);
      await isolateTaskManager(ctx);
    },
    expect: (o) => [...failedOver(o, 1), ...lingeringSeen(o.lingering, 1)],
  },
  {
    name: 'seed-protocol',
    network: true,
    records: SEED_PROTOCOL.records,
    thresholds: SEED_PROTOCOL.thresholds,
    faultsMidRun: true,
    description: `the seed's own run: ${SEED_PROTOCOL.faultsPerKind * SEED_FAULTS.length} faults spread over the input, in turn ${SEED_FAULTS.map((f) => f.name).join(', ')} (${SEED_PROTOCOL.faultsPerKind} of each)`,
    seconds: 600,
    async inject(ctx) {
      const plan = seedFaultPlan(SEED_PROTOCOL.faultsPerKind, SEED_FAULTS.map((f) => f.name));
      for (const [i, step] of plan.entries()) {
        // A rolling restart takes minutes: without a gate the writer, and then the job, would be done
        // before the last faults. The gate halfway to the next fault's point: each fault meets input
        // still being written and not yet committed, and the job never idles at the gate before it.
        // The last fault too (a rolling restart's third broker would otherwise meet a finished job).
        ctx.gateInput(step.at + ((plan[i + 1]?.at ?? 1) - step.at) / 2);
        await ctx.waitProgress(step.at);
        await SEED_FAULTS.find((f) => f.name === step.kind)!.inject(ctx);
      }
      ctx.gateInput(null);
    },
    expect(o) {
      const kills = SEED_PROTOCOL.faultsPerKind;
      // Each TaskManager kill and each JobManager isolation fails the job over.
      return [...failedOver(o, 2 * kills), ...lingeringSeen(o.lingering, kills)];
    },
  },
];

export function findFlinkScenarios(spec: string): FlinkScenario[] {
  const all = [...FLINK_SCENARIOS, ...FLINK_NETWORK_SCENARIOS];
  // `all` stays what it was (no root needed); `network` and the named network scenarios need the networked cluster.
  return pickScenarios(all, spec, {
    all: () => FLINK_SCENARIOS,
    process: () => FLINK_SCENARIOS,
    network: () => FLINK_NETWORK_SCENARIOS.filter((s) => s.name !== 'seed-protocol'),
  });
}
