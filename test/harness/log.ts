// Loggers that write into memory, for tests that read what was logged.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';

export function memoryLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger('info', sink), lines };
}

/** A logger at debug level whose records are parsed into `records`, for tests that read the fields logged. */
export function recordingLogger(): { log: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) records.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: createLogger('debug', sink), records };
}
