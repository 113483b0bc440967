// The life of a long-running command (run, demo, demo --flink): start, wait for a signal or a
// fatal service error, stop within the grace period, and turn the outcome into an exit code.
import { ExitCodes, errorMessage } from './errors.js';
import type { Logger } from './log.js';

/** Runs until SIGTERM/SIGINT or a fatal service error; a second signal exits at once. */
export async function runUntilStopped(
  start: () => Promise<{ stop: () => Promise<boolean>; fatal: Promise<Error> }>,
  logger: Logger,
): Promise<number> {
  const { stop, fatal } = await start();
  const reason = await new Promise<{ signal?: string; error?: Error }>((resolve) => {
    const onSignal = (signal: string) => resolve({ signal });
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    void fatal.then((error) => resolve({ error }));
  });
  process.once('SIGTERM', () => process.exit(ExitCodes.RUNTIME));
  process.once('SIGINT', () => process.exit(ExitCodes.RUNTIME));
  if (reason.signal) logger.info({ signal: reason.signal }, 'shutting down');
  else logger.error({ err: errorMessage(reason.error) }, 'fatal service error; shutting down');
  const clean = await stop();
  logger.info({ clean }, 'stopped');
  return reason.error || !clean ? ExitCodes.RUNTIME : ExitCodes.OK;
}
