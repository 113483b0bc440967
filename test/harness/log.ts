// A logger that writes into memory, for tests that read what was logged.
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
