// Durations in the config file: a number of milliseconds, or units summed as in Go and
// Prometheus ("1h30m", "250ms", "10s").
import { EosError, ErrorCodes } from '../errors.js';
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)/gy;

export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new EosError(ErrorCodes.CONFIG_INVALID, `invalid duration ${value}: expected a non-negative number of milliseconds`);
    return value;
  }
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text);
  let total = 0;
  let pos = 0;
  PART.lastIndex = 0;
  for (let m = PART.exec(text); m; m = PART.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = PART.lastIndex;
  }
  if (pos === 0 || pos !== text.length) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `invalid duration "${value}": expected a number with a unit (ms, s, m, h, d), e.g. 500ms, 10s, 5m, 1h30m`);
  }
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 && ms > 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
