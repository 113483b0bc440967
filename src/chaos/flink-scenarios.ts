// The fault scenarios of `eoswatch chaos --engine flink`: faults under the seed's Flink job
// (flink/job, KafkaSink EXACTLY_ONCE) on a local Flink session cluster and the local 3-node Kafka
// cluster, injected through the round's context (src/chaos/flink-runner.ts). Besides the
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
}

export interface FlinkScenario {
  name: string;
  description: string;
  /** How long the round's input is written (a steady stream), so that the faults land mid-stream. */
  seconds: number;
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
        await ctx.killTaskManager();
        await ctx.startTaskManager();
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
      for (const id of ctx.brokers) await bounceBroker(ctx, id, 'SIGTERM', 0);
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

export function findFlinkScenarios(spec: string): FlinkScenario[] {
  return pickScenarios(FLINK_SCENARIOS, spec);
}
