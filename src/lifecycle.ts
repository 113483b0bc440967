// The life of a long-running command (run, demo, demo --flink): start, wait for a signal or a
// fatal service error, stop within the grace period, and turn the outcome into an exit code.
//
// Shutdown is bounded. A service that did not stop within shutdown.gracePeriod (a broker that
// is paused: kafkajs requests that never answer) still holds sockets and timers that keep the
// event loop alive, and would go on serving HTTP, reading LSOs and writing canary records. So
// once the daemon's stop() is over without being clean, the process exits at once, the reason
// logged as its last line; the exit hooks of the harnesses kill what they started. After a clean
// stop the command's own clean-up (the demo's seed producer and cluster) gets `cleanupMs` more,
// then the process exits anyway, again saying why.
import { ExitCodes, errorMessage } from './errors.js';
import type { Logger } from './log.js';

export interface StopReason {
  signal?: string;
  error?: Error;
}

export interface Outcome {
  code: number;
  /** Why the command ended, for its last line: "SIGINT", "fatal service error: …". */
  why: string;
  /** The daemon stopped within its grace period. */
  clean: boolean;
}

export interface LifecycleOptions {
  /** shutdown.gracePeriod: what the daemon's stop() may take. */
  gracePeriodMs: number;
  /** After a clean stop, what the command's own clean-up may take before the process exits anyway (default 15 s). */
  cleanupMs?: number;
  /** How the process ends when shutdown overran (tests pass their own). */
  exit?: (code: number) => void;
}

const DEFAULT_CLEANUP_MS = 15_000;

/** The reason a command stopped, in words. Pure. */
export function describeReason(reason: StopReason): string {
  if (reason.signal) return reason.signal;
  return `fatal service error: ${errorMessage(reason.error)}`;
}

/** Runs until SIGTERM/SIGINT or a fatal service error; a second signal exits at once. */
export async function runUntilStopped(
  start: () => Promise<{ stop: () => Promise<boolean>; fatal: Promise<Error> }>,
  logger: Logger,
  opts: LifecycleOptions,
): Promise<number> {
  return (await runUntilStoppedOutcome(start, logger, opts)).code;
}

/** runUntilStopped, also saying why it ended (for a command that logs its own last line after its clean-up). */
export async function runUntilStoppedOutcome(
  start: () => Promise<{ stop: () => Promise<boolean>; fatal: Promise<Error> }>,
  logger: Logger,
  opts: LifecycleOptions,
): Promise<Outcome> {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const { stop, fatal } = await start();
  const reason = await new Promise<StopReason>((resolve) => {
    process.once('SIGTERM', () => resolve({ signal: 'SIGTERM' }));
    process.once('SIGINT', () => resolve({ signal: 'SIGINT' }));
    void fatal.then((error) => resolve({ error }));
  });
  const why = describeReason(reason);
  const again = (signal: string) => {
    logger.error({ signal, exitCode: ExitCodes.RUNTIME }, `exiting at once: ${signal} during shutdown (after ${why})`);
    exit(ExitCodes.RUNTIME);
  };
  process.once('SIGTERM', () => again('SIGTERM'));
  process.once('SIGINT', () => again('SIGINT'));
  if (reason.signal) logger.info({ signal: reason.signal }, 'shutting down');
  else logger.error({ err: errorMessage(reason.error) }, 'fatal service error; shutting down');
  const clean = await stop();
  const code = reason.error || !clean ? ExitCodes.RUNTIME : ExitCodes.OK;
  if (!clean) {
    // What did not stop keeps the event loop alive (sockets, timers of clients that never
    // disconnected) and would keep serving: exit now, saying why.
    logger.error(
      { clean, reason: why, gracePeriodMs: opts.gracePeriodMs, exitCode: code },
      `exiting: shutdown after ${why} did not finish within the grace period of ${opts.gracePeriodMs / 1000} s (shutdown.gracePeriod); services still stopping are cut off`,
    );
    exit(code);
    return { code, why, clean };
  }
  logger.info({ clean, reason: why }, 'stopped');
  // The command's own clean-up comes next; bound it too. Unref'd: it fires only while something
  // still keeps the process alive.
  const cleanupMs = opts.cleanupMs ?? DEFAULT_CLEANUP_MS;
  setTimeout(() => {
    logger.error({ reason: why, cleanupMs, exitCode: ExitCodes.RUNTIME }, `exiting: clean-up after ${why} did not finish within ${cleanupMs / 1000} s; what is left is cut off`);
    exit(ExitCodes.RUNTIME);
  }, cleanupMs).unref();
  return { code, why, clean };
}
