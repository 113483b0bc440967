// When a failed service is tried again, pure (no timers): the supervisor's exponential backoff
// with jitter for any service (src/daemon.ts), and the pipeline's restart strategy, after Flink's
// (`none`, `fixed-delay`, `exponential-delay`).

export interface BackoffConfig {
  /** ms before the first retry */
  initialBackoff: number;
  /** ms, the longest wait between two attempts */
  maxBackoff: number;
  multiplier: number;
  /** 0..1: each delay is drawn from [d × (1 - jitter), d × (1 + jitter)], capped at maxBackoff */
  jitter: number;
  /** ms: a service that ran this long before failing starts again from initialBackoff */
  resetAfter: number;
}

export type RestartStrategyConfig =
  | { type: 'none' }
  | { type: 'fixed-delay'; delay: number; attempts: number; resetAfter: number }
  | ({ type: 'exponential-delay'; attempts: number } & BackoffConfig);

/** The delay before attempt `attempt` (1 = the first retry), jittered with `random` in [0, 1). */
export function backoffDelay(c: BackoffConfig, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(c.maxBackoff, c.initialBackoff * c.multiplier ** Math.max(0, attempt - 1));
  const spread = base * c.jitter * (2 * random() - 1);
  return Math.max(0, Math.min(c.maxBackoff, Math.round(base + spread)));
}

/** What a restart strategy does with failure number `attempt`: wait this long (ms), or give up (null). */
export function restartDelay(s: RestartStrategyConfig, attempt: number, random: () => number = Math.random): number | null {
  switch (s.type) {
    case 'none':
      return null;
    case 'fixed-delay':
      return s.attempts > 0 && attempt > s.attempts ? null : s.delay;
    case 'exponential-delay':
      return s.attempts > 0 && attempt > s.attempts ? null : backoffDelay(s, attempt, random);
  }
}

/** The attempt number of the next failure: back to 1 after a run longer than resetAfter. */
export function nextAttempt(previous: number, ranForMs: number, resetAfterMs: number): number {
  return ranForMs >= resetAfterMs ? 1 : previous + 1;
}
