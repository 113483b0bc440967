// A chaos round's verdict: PASS, FAIL (the pipeline broke exactly-once, stalled, did not finish,
// or missed an availability expectation its scenario enforces) or ERROR (the harness itself could
// not run the round: a broker that would not start again, a topic whose metadata never reached
// every broker, a sink it could not read). An ERROR is never counted as an exactly-once failure;
// the run's summary line and exit code keep the two apart. Pure.
import { EosError, ErrorCodes, ExitCodes } from '../../src/errors.js';

export type Verdict = 'PASS' | 'FAIL' | 'ERROR';

/** A failure of the harness (the local cluster, the runner's own clients), not of the pipeline under test. */
export class HarnessError extends EosError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCodes.HARNESS_FAILED, message, options);
    this.name = 'HarnessError';
  }
}

/** Runs a harness step; any error it throws becomes a HarnessError naming the step. */
export async function harnessStep<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof HarnessError) throw err;
    throw new HarnessError(`${what}: ${(err as Error).message}`, { cause: err });
  }
}

export interface VerdictInput {
  /** The round ended with an error before its sink was judged. */
  error?: unknown;
  /** The verifier's violations (empty: the sink is exactly-once). */
  violations: readonly string[];
  /** Availability misses of an expectation the scenario enforces. */
  enforcedMisses: readonly string[];
}

export function roundVerdict(v: VerdictInput): Verdict {
  if (v.error !== undefined) return v.error instanceof HarnessError ? 'ERROR' : 'FAIL';
  return v.violations.length || v.enforcedMisses.length ? 'FAIL' : 'PASS';
}

/** A result that predates verdicts (Flink rounds) says only passed or not. */
export const verdictOf = (r: { verdict?: Verdict; passed: boolean }): Verdict => r.verdict ?? (r.passed ? 'PASS' : 'FAIL');

export interface VerdictCounts {
  pass: number;
  fail: number;
  error: number;
}

export function countVerdicts(results: readonly { verdict?: Verdict; passed: boolean }[]): VerdictCounts {
  const c = { pass: 0, fail: 0, error: 0 };
  for (const r of results) {
    const v = verdictOf(r);
    if (v === 'PASS') c.pass++;
    else if (v === 'FAIL') c.fail++;
    else c.error++;
  }
  return c;
}

/** FAIL when any round failed, else ERROR when the harness could not run one, else PASS (also for no rounds). */
export function runVerdict(c: VerdictCounts): Verdict {
  return c.fail ? 'FAIL' : c.error ? 'ERROR' : 'PASS';
}

/** "2 PASS, 0 FAIL, 1 ERROR (harness)". */
export function summaryLine(c: VerdictCounts): string {
  return `${c.pass} PASS, ${c.fail} FAIL, ${c.error} ERROR (harness)`;
}

/** The command's exit code: 3 when a round failed (a violation found), 1 when only the harness failed, 0 otherwise. */
export function exitCodeOf(c: VerdictCounts): number {
  const v = runVerdict(c);
  return v === 'FAIL' ? ExitCodes.VIOLATION : v === 'ERROR' ? ExitCodes.RUNTIME : ExitCodes.OK;
}
