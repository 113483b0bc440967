// A closed list of error codes. Every error eoswatch raises on purpose is an EosError with one
// of these codes and, where there is one, the error that caused it; every command line (eoswatch,
// npm run kafka|flink|streams) reports it through reportError: exit code from the code, message
// redacted. The logger serializes the chain.
import { redactText } from './redact.js';

export const ErrorCodes = {
  /** A command line that cannot be run: an unknown command or option, a bad option value, a value naming nothing that exists. Exit 2. */
  USAGE: 'EOS_USAGE',
  /** A file eoswatch was told to read (its configuration, the web configuration, a file to audit) cannot be read. Exit 2. */
  CONFIG_NOT_FOUND: 'EOS_CONFIG_NOT_FOUND',
  /** A configuration (file, key, pattern, transform, audited client or Flink file) eoswatch cannot use as it is. Exit 2. */
  CONFIG_INVALID: 'EOS_CONFIG_INVALID',
  /** Kafka refused or failed a request eoswatch needs: an error code in the answer, no answer in time, a topic that does not exist, a missing ACL, a broker too old. */
  KAFKA_REQUEST_FAILED: 'EOS_KAFKA_REQUEST_FAILED',
  /** Bytes or text from outside could not be decoded: a Kafka protocol message, a record batch, the transaction log, the Prometheus text format. */
  DECODE_FAILED: 'EOS_DECODE_FAILED',
  /** A Flink JobManager's REST API did not answer or answered with an HTTP error. */
  FLINK_API_FAILED: 'EOS_FLINK_API_FAILED',
  /** verify: the sink's last stable offsets did not reach its high watermarks in time (a transaction stays open). */
  SINK_NOT_STABLE: 'EOS_SINK_NOT_STABLE',
  /** A service refused to start: what it needs is missing (topics, committed offsets). */
  SERVICE_START_FAILED: 'EOS_SERVICE_START_FAILED',
  /** The pipeline is FAILED at run time (too many failed checkpoints, no committed offset). */
  PIPELINE_FAILED: 'EOS_PIPELINE_FAILED',
  /** The HTTP server cannot listen on its address. */
  HTTP_LISTEN_FAILED: 'EOS_HTTP_LISTEN_FAILED',
  /** eoswatch status: the running eoswatch does not answer. */
  EOSWATCH_UNREACHABLE: 'EOS_EOSWATCH_UNREACHABLE',
  /** The local harness failed: a local Kafka or Flink cluster, Streams app instance, network namespace, Maven or openssl run, a chaos worker or Prometheus. */
  HARNESS_FAILED: 'EOS_HARNESS_FAILED',
  /** A chaos round's system under test did not finish its input (it stalled or ran out of time). */
  CHAOS_ROUND_FAILED: 'EOS_CHAOS_ROUND_FAILED',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class EosError extends Error {
  readonly code: ErrorCode;
  /** Extra lines a person needs (one problem per line), e.g. every schema violation of a file. */
  readonly details: string[];

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: string[] } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EosError';
    this.code = code;
    this.details = options.details ?? [];
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      details: this.details.length ? this.details : undefined,
      cause: this.cause instanceof Error ? { name: this.cause.name, message: this.cause.message } : this.cause,
    };
  }
}

/** Exit codes (README "Using it"): 0 ok, 1 runtime failure, 2 usage or configuration error, 3 violation found. */
export const ExitCodes = { OK: 0, RUNTIME: 1, USAGE: 2, VIOLATION: 3 } as const;

export function exitCodeFor(err: unknown): number {
  if (err instanceof EosError) {
    switch (err.code) {
      case ErrorCodes.USAGE:
      case ErrorCodes.CONFIG_NOT_FOUND:
      case ErrorCodes.CONFIG_INVALID:
        return ExitCodes.USAGE;
      default:
        return ExitCodes.RUNTIME;
    }
  }
  return ExitCodes.RUNTIME;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * What a command line prints for an error that ended it, and its exit code: `PROGRAM: message`
 * and the error's detail lines, every line redacted; after a usage error, where the help is.
 */
export function errorReport(err: unknown, program: string, helpCommand: string): { exitCode: number; text: string } {
  const lines = [`${program}: ${redactText(errorMessage(err))}`];
  if (err instanceof EosError) {
    for (const d of err.details) lines.push(`  ${redactText(d)}`);
    if (err.code === ErrorCodes.USAGE) lines.push(`Run '${helpCommand}' for usage.`);
  }
  return { exitCode: exitCodeFor(err), text: `${lines.join('\n')}\n` };
}

/** errorReport written to stderr; returns the exit code. */
export function reportError(err: unknown, program: string, helpCommand: string): number {
  const { exitCode, text } = errorReport(err, program, helpCommand);
  process.stderr.write(text);
  return exitCode;
}
