// Every scheduled run of every service, measured in one place and one way, the way node_exporter
// emits node_scrape_collector_success and _duration_seconds for each collector: a service hands
// its periodic work to every() (or a run it schedules otherwise to measured()) and writes none of
// these series itself.
//
//   eos_service_run_success{service,task}                 1 when the last run succeeded, else 0
//   eos_service_run_duration_seconds{service,task}        how long the last run took
//   eos_service_runs_total{service,task,result}           runs, by result "ok" or "failed"
//   eos_service_last_success_timestamp_seconds{service,task}  when a run last succeeded (unix s)
//   eos_service_errors_total{service,task,what,kind}      failures inside the runs (failures())
//
// A run fails when it throws, or returns false: a run that met a failure it handled itself (counted
// it with failures(), logged it, dropped stale series) and has nothing to throw. What failed inside
// a run (the whole reading, one group, one topic, the log, the poll...) and its kind (permission:
// the brokers refused; error: anything else) are labels of the one errors family, never a family of
// the service's own; the log line names the topic or group. A run succeeds
// when it got what it went for (an answer from the cluster, a reading of every topic); what it
// read (a hanging transaction, a lag of a million) is not its result.
import { Counter, Gauge, type Registry } from 'prom-client';
import { systemClock, type Clock } from './clock.js';
import { Periodic } from './periodic.js';

export type RunResult = void | boolean;

interface RunFamilies {
  success: Gauge;
  duration: Gauge;
  runs: Counter;
  lastSuccess: Gauge;
  errors: Counter;
}

const families = new WeakMap<Registry, RunFamilies>();

/** The run families on a registry, registered on first use. */
export function runFamilies(registry: Registry): RunFamilies {
  let f = families.get(registry);
  if (f) return f;
  const labelNames = ['service', 'task'] as const;
  f = {
    success: new Gauge({ name: 'eos_service_run_success', help: 'Whether the last run of a service\'s scheduled task succeeded (1) or failed (0).', labelNames, registers: [registry] }),
    duration: new Gauge({ name: 'eos_service_run_duration_seconds', help: 'How long the last run of a service\'s scheduled task took.', labelNames, registers: [registry] }),
    runs: new Counter({ name: 'eos_service_runs_total', help: 'Runs of a service\'s scheduled task, by result (ok, failed).', labelNames: [...labelNames, 'result'], registers: [registry] }),
    lastSuccess: new Gauge({ name: 'eos_service_last_success_timestamp_seconds', help: 'When a run of a service\'s scheduled task last succeeded, in seconds since the epoch.', labelNames, registers: [registry] }),
    errors: new Counter({
      name: 'eos_service_errors_total',
      help: 'Failures inside the runs of a service\'s scheduled task, by what failed (the whole reading, one group, one topic, the log, the poll, offsets, producers) and kind (permission: the brokers refused; error: anything else).',
      labelNames: [...labelNames, 'what', 'kind'],
      registers: [registry],
    }),
  };
  families.set(registry, f);
  return f;
}

export interface RunTarget {
  registry: Registry;
  /** The service's name (its `service` label). */
  service: string;
  /** What runs, e.g. "probe", "reading", "pass" (its `task` label). */
  task: string;
  clock?: Clock;
}

/**
 * `run` wrapped so each call is measured; the wrapper resolves or rejects as `run` does. A call that
 * resolves succeeded unless `ok` says otherwise (default: unless it resolved with false).
 */
export function measured<T>(target: RunTarget, run: () => Promise<T> | T, ok: (result: T) => boolean = (r) => r !== false): () => Promise<T> {
  const f = runFamilies(target.registry);
  const clock = target.clock ?? systemClock;
  const labels = { service: target.service, task: target.task };
  // Present from the start, so a task that never ran once is told from one that never succeeded.
  f.runs.inc({ ...labels, result: 'ok' }, 0);
  f.runs.inc({ ...labels, result: 'failed' }, 0);
  return async () => {
    const started = clock.now();
    let succeeded = false;
    try {
      const result = await run();
      succeeded = ok(result);
      return result;
    } finally {
      const end = clock.now();
      f.duration.set(labels, Math.max(0, end - started) / 1000);
      f.success.set(labels, succeeded ? 1 : 0);
      f.runs.inc({ ...labels, result: succeeded ? 'ok' : 'failed' });
      if (succeeded) f.lastSuccess.set(labels, end / 1000);
    }
  };
}

export interface EveryOptions extends RunTarget {
  /** Named in a bad interval's error, e.g. the configuration key (default "<service> <task>"). */
  name?: string;
  intervalMs: number;
  /** Delay before the first run (default 0: at once). */
  firstDelayMs?: number;
  /** A run threw: called with what it threw (a run that returned false has reported itself). */
  onError?: (err: unknown) => void;
}

/** A Periodic (src/runtime/periodic.ts: one drift rule, no overlap) whose runs are measured. */
export function every(run: () => Promise<RunResult> | RunResult, opts: EveryOptions): Periodic {
  const task = measured(opts, run);
  return new Periodic(async () => void (await task()), {
    name: opts.name ?? `${opts.service} ${opts.task}`,
    intervalMs: opts.intervalMs,
    firstDelayMs: opts.firstDelayMs ?? 0,
    clock: opts.clock ?? systemClock,
    onError: opts.onError ?? (() => undefined),
  });
}

export const FAILURE_KINDS = ['permission', 'error'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/**
 * Counts one failure inside a run of the target's task in eos_service_errors_total: what failed
 * (one of `whats`) and its kind (default "error"). Every what and kind is present at 0 from the
 * start, so an increase is seen from the first failure on.
 */
export function failures<W extends string>(target: RunTarget, whats: readonly W[]): (what: W, kind?: FailureKind) => void {
  const f = runFamilies(target.registry);
  const labels = (what: W, kind: FailureKind) => ({ service: target.service, task: target.task, what, kind });
  for (const what of whats) for (const kind of FAILURE_KINDS) f.errors.inc(labels(what, kind), 0);
  return (what, kind = 'error') => f.errors.inc(labels(what, kind));
}
