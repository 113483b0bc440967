// Differential check of the checker's byte scanner (src/verify/checker.ts) against its JSON.parse
// path: every generated sink value is fed to one checker as a Buffer (scanned, or handed to
// parseVerifyRecord when the scanner does not understand it) and to another as the string
// JSON.parse would see (always parseVerifyRecord), and the two results must be identical.
//
//   node --import tsx bench/checker-scan-fuzz.ts [--cases 300000] [--seed 1]
//
// Exit code 1 and the first differing value on a mismatch. Used by bench/checker.bench.ts
// (--fuzz-cases) before it measures, so that a faster checker is also the same checker.
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ExactlyOnceChecker } from '../src/verify/checker.js';

const RUN = 'fz1';

/** xorshift32: reproducible cases for a seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

export function fuzzCheckerScan(cases: number, seed = 1): { cases: number; scannedShare: number; mismatch?: string } {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  // JSON whitespace mostly; now and then a character that only looks like it (JSON.parse rejects it).
  let compact = false;
  const ws = () => (compact || r() < 0.7 ? '' : r() < 0.97 ? pick([' ', '\n', '\t', '\r', '  ']) : pick(['\u00a0', '\u000b', '\f']));
  const numbers = ['0', '1', '2', '5', '-0', '-1', '1.0', '1e0', '1E+0', '0.5', '01', '1.', '.5', '-', '1e', '2e-1', '9007199254740993', '123456789012345', '1234567890123456', '1e400', '-1e400', '3', '4', '10'];
  const scalars = [...numbers, '"x"', '"1"', '""', 'true', 'false', 'null', 'nul', 'tru', '{}', '[]', '[1]', '{"a":1}', '"a\\"b"', '"\\u0031"', '"é"', '"\u0001"'];
  const otherRuns = ['"fz"', '"fz12"', '"FZ1"', '"fz\\u0031"', '"fz1 "', '1', 'null', '"fz1é"'];
  const keys = ['id', 'ts', 'value', 'run', 'p', 'seq', 'pad', 'x', 'i\\u0064', 'r\\u0075n', 'sequence', 've', '__proto__', 'valuE', 'é'];
  const genObject = (): string => {
    // Most values in the exact layout JSON.stringify writes (the checker's fast path), the others spaced out.
    compact = r() < 0.6;
    const p = Math.floor(r() * 4) - (r() < 0.05 ? 1 : 0);
    const seq = Math.floor(r() * 6) - (r() < 0.05 ? 1 : 0);
    const canonical: [string, string][] = [
      ['id', `"${RUN}-${p}-${seq}"`],
      ['ts', String(r() < 0.5 ? 1000 + Math.floor(r() * 50) : 1764493509317 + Math.floor(r() * 50))],
      ['value', String(seq + (r() < 0.8 ? 0 : pick([1, -1, 0.5])))],
      ['run', r() < 0.85 ? `"${RUN}"` : pick(otherRuns)],
      ['p', String(p)],
      ['seq', String(seq)],
    ];
    const members: [string, string][] = [];
    for (const m of canonical) {
      const u = r();
      if (u < 0.01) continue; // missing member
      if (u < 0.03) members.push([m[0], pick(scalars)]);
      else members.push(m);
      if (r() < 0.01) members.push([m[0], pick(scalars)]); // repeated key: the last one wins
    }
    if (r() < (compact ? 0.03 : 0.2)) members.push([pick(keys), pick([...scalars, '"xxxxxxxxxxxxxxxx"'])]);
    for (let i = members.length - 1; i > 0 && r() < (compact ? 0.05 : 0.3); i--) {
      const j = Math.floor(r() * (i + 1));
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
    return `${ws()}{${ws()}${members.map(([k, v]) => `"${k}"${ws()}:${ws()}${v}`).join(`${ws()},${ws()}`)}${ws()}}${ws()}`;
  };
  const mutate = (s: string): Buffer => {
    const b = Buffer.from(s, 'utf8');
    const u = r();
    if (u < 0.85) return b;
    const bytes = [...b];
    const n = 1 + Math.floor(r() * 3);
    for (let k = 0; k < n && bytes.length; k++) {
      const at = Math.floor(r() * bytes.length);
      const c = pick([0x22, 0x2c, 0x3a, 0x7b, 0x7d, 0x5b, 0x5c, 0x30, 0x31, 0x2d, 0x2e, 0x65, 0x20, 0x00, 0x0a, 0x7f, 0x80, 0xc3, 0xff, 0x61]);
      const op = r();
      if (op < 0.33) bytes[at] = c;
      else if (op < 0.66) bytes.splice(at, 1);
      else bytes.splice(at, 0, c);
    }
    if (r() < 0.05) return Buffer.from([0xef, 0xbb, 0xbf, ...bytes]);
    if (r() < 0.05) return Buffer.from(bytes.slice(0, Math.floor(r() * bytes.length)));
    return Buffer.from(bytes);
  };
  const expected = [6, 6, 6];
  let scanned = 0;
  const batch = 64;
  for (let done = 0; done < cases; done += batch) {
    // A sequence of values per pair of checkers, so that duplicates, order and latency are compared too.
    const viaBuffer = new ExactlyOnceChecker({ run: RUN, expected, valueDelta: 0 });
    const viaString = new ExactlyOnceChecker({ run: RUN, expected, valueDelta: 0 });
    const values: Buffer[] = [];
    for (let k = 0; k < batch; k++) {
      const v = mutate(genObject());
      values.push(v);
      const ts = r() < 0.9 ? 1100 : undefined;
      viaBuffer.add(v, ts);
      viaString.add(v.toString('utf8'), ts);
      const a = viaBuffer.result();
      const b = viaString.result();
      if (!isDeepStrictEqual(a, b)) {
        return {
          cases: done + k + 1,
          scannedShare: scanned / Math.max(1, done),
          mismatch: `after value ${JSON.stringify(v.toString('latin1'))} (bytes ${v.toString('hex')}) of the sequence ${JSON.stringify(values.map((x) => x.toString('latin1')))}:\nBuffer: ${JSON.stringify(a)}\nstring: ${JSON.stringify(b)}`,
        };
      }
    }
    scanned += countScanned(values);
  }
  return { cases, scannedShare: scanned / cases };
}

/** How many of the values the scanner decided on its own: the others are the calls to JSON.parse. */
function countScanned(values: Buffer[]): number {
  const parse = JSON.parse;
  let parsed = 0;
  try {
    JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
      parsed++;
      return parse(text, reviver);
    };
    const c = new ExactlyOnceChecker({ run: RUN, expected: [6, 6, 6], valueDelta: 0 });
    for (const v of values) c.add(v, 1100);
  } finally {
    JSON.parse = parse;
  }
  return values.length - parsed;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { cases: { type: 'string', default: '300000' }, seed: { type: 'string', default: '1' } } });
  const t0 = Date.now();
  const res = fuzzCheckerScan(Number(values.cases), Number(values.seed));
  if (res.mismatch) {
    process.stderr.write(`MISMATCH after ${res.cases} values: ${res.mismatch}\n`);
    process.exit(1);
  }
  process.stdout.write(`${res.cases} values, ${(res.scannedShare * 100).toFixed(1)}% decided by the scanner, the rest by JSON.parse; results identical (${Date.now() - t0} ms)\n`);
}
