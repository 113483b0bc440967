// The pino root logger. Services log through a child (`{ service: name }`). Every record goes
// through src/redact.ts, the redaction every other output uses too: values under secret keys at
// any depth, and secrets inside strings (a JAAS line in an error message, a URL with a password,
// a bearer token), whatever the nesting.
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from './config/types.js';
import { redactText, redactValue } from './redact.js';

export type { Logger } from 'pino';

/** Stdout, written synchronously: a line logged just before a crash or a SIGKILL is not lost. */
export function stdoutDestination(): DestinationStream & { fd: number; sync: boolean } {
  return pino.destination({ dest: 1, sync: true }) as unknown as DestinationStream & { fd: number; sync: boolean };
}

const ERROR_LEVEL = 50;

/** An Error as pino would log it, without its stack (or its causes' stacks). */
function errorWithoutStack(e: Error, depth = 0): Record<string, unknown> {
  const out = redactValue(e) as Record<string, unknown>;
  delete out.stack;
  const cause = (e as { cause?: unknown }).cause;
  // At most 8 causes deep: a deeper (or cyclic) chain is cut there, never shown with its stacks.
  if (cause instanceof Error && depth < 8) out.cause = errorWithoutStack(cause, depth + 1);
  else delete out.cause;
  return out;
}

/** The merging object of a line below error: no `stack` field, Errors (at its top level) without stacks. */
export function withoutStacks(obj: unknown): unknown {
  if (obj instanceof Error) return { err: errorWithoutStack(obj) };
  if (typeof obj !== 'object' || obj === null) return obj;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'stack') continue;
    out[k] = v instanceof Error ? errorWithoutStack(v) : v;
  }
  return out;
}

export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { name: 'eoswatch' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        bindings: (bindings) => redactValue(bindings) as Record<string, unknown>,
        log: (object) => redactValue(object) as Record<string, unknown>,
      },
      // redactValue already turned Errors into {type, message, stack, cause}.
      serializers: { err: (e: unknown) => e },
      hooks: {
        // The message and its printf arguments: strings are redacted, objects by formatters.log.
        // Below error, a line carries no stack trace: Errors in it are logged by type and message.
        logMethod(args, method, level) {
          const safe = args.map((a, i) => (typeof a === 'string' ? redactText(a) : i === 0 && level < ERROR_LEVEL ? withoutStacks(a) : a)) as Parameters<typeof method>;
          return method.apply(this, safe);
        },
      },
    },
    destination ?? stdoutDestination(),
  );
  // pino does not pass a child's bindings through formatters.bindings; children inherit this.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, options) {
    return child.call(this, redactValue(bindings) as typeof bindings, options);
  } as typeof logger.child;
  return logger;
}
