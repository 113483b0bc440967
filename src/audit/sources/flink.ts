// The live audit of watched Flink jobs: the checkpoint checks that read Flink config files
// (src/audit/checks/checkpoint.ts) run on each job's own /jobs/<id>/checkpoints/config, the
// settings the job actually runs with. One audit source (own success and duration metrics:
// eos_audit_source_success, eos_audit_source_duration_seconds); a job whose answer fails is a
// problem of this source, the other jobs are still audited.
import type { FlinkConfig } from '../../config/types.js';
import type { AuditSource } from '../runner.js';
import type { CheckpointFacts } from '../types.js';
import { selectJobs, TERMINAL } from '../../flink/poller.js';
import { FlinkRestClient, shownUrl } from '../../flink/rest-client.js';
import type { CheckpointConfigInfo, JobOverview, JobsOverview } from '../../flink/rest-types.js';

/** The audit target of a job: its name and id. */
export function jobTarget(job: Pick<JobOverview, 'name' | 'jid'>): string {
  return `flink-job:${job.name} (${job.jid})`;
}

/** Checkpoint facts from a job's live checkpoint config; null = checkpointing disabled (REST 404). */
export function liveCheckpointFacts(job: Pick<JobOverview, 'name' | 'jid'>, cfg: CheckpointConfigInfo | null): CheckpointFacts {
  const facts: CheckpointFacts = { origin: 'flink', target: jobTarget(job) };
  if (!cfg) return facts;
  // Flink reports a disabled periodic checkpoint as Long.MAX_VALUE.
  if (cfg.interval > 0 && cfg.interval < Number.MAX_SAFE_INTEGER) {
    facts.intervalMs = cfg.interval;
    facts.mode = cfg.mode.toUpperCase();
  }
  facts.timeoutMs = cfg.timeout;
  facts.minPauseMs = cfg.min_pause;
  facts.maxConcurrent = cfg.max_concurrent;
  if (cfg.tolerable_failed_checkpoints !== undefined) facts.tolerableFailed = cfg.tolerable_failed_checkpoints;
  if (cfg.unaligned_checkpoints !== undefined) facts.unaligned = cfg.unaligned_checkpoints;
  if (cfg.externalization) facts.retainOnCancellation = cfg.externalization.enabled && !cfg.externalization.delete_on_cancellation;
  return facts;
}

export function flinkJobsSource(config: FlinkConfig, client = new FlinkRestClient(config)): AuditSource {
  return {
    name: `flink-jobs:${config.restUrls.map(shownUrl).join(',')}`,
    async gather(facts) {
      const overview = await client.get<JobsOverview>('/jobs/overview');
      const jobs = selectJobs(overview.jobs, config.jobs).filter((j) => !TERMINAL.has(j.state));
      const problems: string[] = [];
      for (const job of jobs) {
        try {
          const cfg = await client.getOrNull<CheckpointConfigInfo>(`/jobs/${job.jid}/checkpoints/config`);
          facts.checkpoints.push(liveCheckpointFacts(job, cfg));
        } catch (err) {
          problems.push(`${jobTarget(job)}: ${(err as Error).message}`);
        }
      }
      return problems;
    },
  };
}
