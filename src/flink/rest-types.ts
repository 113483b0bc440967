// The parts of Flink's REST answers eoswatch reads (Flink 1.20 and 2.x share these shapes).
// Field names are Flink's own, so a reader can hold them against the REST API reference.

export type TaskCounts = Record<'running' | 'canceling' | 'canceled' | 'total' | 'created' | 'scheduled' | 'deploying' | 'reconciling' | 'finished' | 'initializing' | 'failed', number>;

/** One entry of GET /jobs/overview. */
export interface JobOverview {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  'end-time': number;
  'last-modification': number;
  tasks: Partial<TaskCounts>;
}

export interface JobsOverview {
  jobs: JobOverview[];
}

/** GET /jobs/<id>/checkpoints: one checkpoint or savepoint. */
export interface CheckpointEntry {
  id: number;
  status: 'COMPLETED' | 'FAILED' | 'IN_PROGRESS';
  is_savepoint: boolean;
  trigger_timestamp: number;
  latest_ack_timestamp: number;
  end_to_end_duration: number;
  checkpointed_size?: number;
  state_size?: number;
  failure_message?: string | null;
  external_path?: string;
}

export interface RestoredCheckpoint {
  id: number;
  restore_timestamp: number;
  is_savepoint: boolean;
  external_path?: string;
}

export interface CheckpointingStatistics {
  counts: { restored: number; total: number; in_progress: number; completed: number; failed: number };
  latest: {
    completed: CheckpointEntry | null;
    savepoint: CheckpointEntry | null;
    failed: CheckpointEntry | null;
    restored: RestoredCheckpoint | null;
  };
  history: CheckpointEntry[];
}

/** GET /jobs/<id>/checkpoints/config */
export interface CheckpointConfigInfo {
  mode: string;
  interval: number;
  timeout: number;
  min_pause: number;
  max_concurrent: number;
  externalization?: { enabled: boolean; delete_on_cancellation: boolean };
  unaligned_checkpoints?: boolean;
  tolerable_failed_checkpoints?: number;
  aligned_checkpoint_timeout?: number;
}

/** GET /jobs/<id>/exceptions */
export interface JobExceptions {
  'root-exception'?: string | null;
  timestamp?: number | null;
  exceptionHistory?: { entries: { exceptionName?: string; timestamp: number }[]; truncated: boolean };
}
