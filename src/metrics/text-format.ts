// A strict reader of the Prometheus text exposition format (0.0.4): what reads /metrics over HTTP
// (the chaos observers, the benchmarks, the tests) reads it with this.
// It throws on any line that is not a comment, HELP, TYPE or a well-formed sample.
// In the daemon, the status sampler reads the registry's metric objects instead (src/metrics/samples.ts).
import { EosError, ErrorCodes } from '../errors.js';
import type { Sample, Samples } from './samples.js';

export type { Sample };
/** What a text parses to: the same shape as the samples read from a registry. */
export type Parsed = Samples;

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(\\{(.*)\\})?\\s+(\\S+)(\\s+-?[0-9]+)?$`);
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

/** `\\` and `\n` (and `\"` where `quote`) undone in one pass, as the text format escapes them. */
function unescapeText(s: string, quote: boolean): string {
  return s.replace(quote ? /\\([\\n"])/g : /\\([\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseValue(v: string, line: string): number {
  // Prometheus parses values with Go's strconv.ParseFloat: Inf and NaN in any letter case.
  const lower = v.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  const n = Number(v);
  if (Number.isNaN(n)) throw new EosError(ErrorCodes.DECODE_FAILED, `bad sample value in: ${line}`);
  return n;
}

export function parsePrometheusText(text: string): Parsed {
  const out: Parsed = { samples: [], types: new Map(), help: new Map() };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('# HELP ')) {
      const m = line.match(new RegExp(`^# HELP (${NAME}) (.*)$`));
      if (!m) throw new EosError(ErrorCodes.DECODE_FAILED, `bad HELP line: ${line}`);
      out.help.set(m[1]!, unescapeText(m[2]!, false));
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const m = line.match(new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`));
      if (!m) throw new EosError(ErrorCodes.DECODE_FAILED, `bad TYPE line: ${line}`);
      if (out.types.has(m[1]!)) throw new EosError(ErrorCodes.DECODE_FAILED, `duplicate TYPE for ${m[1]}`);
      out.types.set(m[1]!, m[2]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = line.match(SAMPLE);
    if (!m) throw new EosError(ErrorCodes.DECODE_FAILED, `bad sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[3] ?? '';
    LABEL.lastIndex = 0;
    let pos = 0;
    while (pos < body.length) {
      LABEL.lastIndex = pos;
      const l = LABEL.exec(body);
      if (!l) throw new EosError(ErrorCodes.DECODE_FAILED, `bad labels in: ${line}`);
      labels[l[1]!] = unescapeText(l[2]!, true);
      pos = LABEL.lastIndex;
    }
    out.samples.push({ name: m[1]!, labels, value: parseValue(m[4]!, line) });
  }
  return out;
}

export function sampleValue(p: Parsed, name: string, labels: Record<string, string> = {}): number | undefined {
  return p.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
