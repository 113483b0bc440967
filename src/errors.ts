// A closed list of error codes. Every error eoswatch raises on purpose is an EosError with one
// of these codes and, where there is one, the error that caused it; the CLI maps codes to exit
// codes and the logger serializes the chain.

export const ErrorCodes = {
  USAGE: 'EOS_USAGE',
  CONFIG_NOT_FOUND: 'EOS_CONFIG_NOT_FOUND',
  CONFIG_INVALID: 'EOS_CONFIG_INVALID',
  KAFKA_UNAVAILABLE: 'EOS_KAFKA_UNAVAILABLE',
  SERVICE_START_FAILED: 'EOS_SERVICE_START_FAILED',
  HTTP_LISTEN_FAILED: 'EOS_HTTP_LISTEN_FAILED',
  SHUTDOWN_TIMEOUT: 'EOS_SHUTDOWN_TIMEOUT',
  CLUSTER_START_FAILED: 'EOS_CLUSTER_START_FAILED',
  /** eoswatch status: the running eoswatch does not answer. */
  EOSWATCH_UNREACHABLE: 'EOS_EOSWATCH_UNREACHABLE',
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

export class MultipleErrors extends AggregateError {
  constructor(message: string, errors: unknown[]) {
    super(errors, message);
    this.name = 'MultipleErrors';
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
