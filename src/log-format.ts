// Log lines for people and for machines: JSON (pino's own output) unless standard output is a
// terminal or pretty is asked for; then pino-pretty renders each line. pino redacts secrets
// (src/log.ts) before a line reaches either, so pretty output is redacted the same way.
import type { DestinationStream } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LogFormat } from './config/types.js';

export function resolveLogFormat(format: LogFormat, isTTY = Boolean(process.stdout.isTTY)): 'json' | 'pretty' {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}

/** The destination for createLogger: undefined (JSON to stdout) or a pino-pretty stream. */
export function logDestination(format: LogFormat, opts: { isTTY?: boolean; destination?: NodeJS.WritableStream | number } = {}): DestinationStream | undefined {
  const isTTY = opts.isTTY ?? Boolean(process.stdout.isTTY);
  if (resolveLogFormat(format, isTTY) === 'json') return undefined;
  return pinoPretty({
    colorize: isTTY,
    sync: true,
    destination: opts.destination ?? 1,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name',
    singleLine: true,
  });
}
