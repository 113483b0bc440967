// The pino root logger. Services log through a child (`{ service: name }`); secrets are
// redacted by path so that a config object or a client option set can be logged whole.
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from './config/types.js';

export type { Logger } from 'pino';

const SECRET_KEYS = ['password', 'passphrase', 'key', 'cert', 'ca', 'token', 'secret', 'authorization'];

/** pino redaction paths for a secret key at the top and up to three levels deep. */
export const REDACT_PATHS = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]);

export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { name: 'eoswatch' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
