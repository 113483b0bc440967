// Surviving mutants that no test can kill because the mutated program behaves exactly as the
// original: each is named by its file, mutator, the original source text and the replacement,
// with the reason it is equivalent. The report lists them and leaves them out of the score.
export interface EquivalentMutant {
  file: string;
  mutator: string;
  /** The source text the mutant replaces (whitespace collapsed). */
  original: string;
  replacement: string;
  reason: string;
}

export const EQUIVALENT_MUTANTS: EquivalentMutant[] = [
  {
    file: 'src/kafka/lso-tracker.ts',
    mutator: 'EqualityOperator',
    original: 'e.high > e.lso',
    replacement: 'e.high >= e.lso',
    reason: 'when high = lso both branches give a lag of 0',
  },
  {
    file: 'src/kafka/lso-tracker.ts',
    mutator: 'BooleanLiteral',
    original: 'false',
    replacement: 'true',
    reason: 'the new entry\'s hanging flag is overwritten two lines later, before anything reads it',
  },
  {
    file: 'src/canary/tracker.ts',
    mutator: 'ArrayDeclaration',
    original: '[]',
    replacement: '["Stryker was here"]',
    reason: 'a string in a list of sequence numbers never matches indexOf(number), and the bound drops it first',
  },
  {
    file: 'src/canary/tracker.ts',
    mutator: 'ConditionalExpression',
    original: 'a.seq < s.next',
    replacement: 'true',
    reason: 'lostRecently and skippedUnknown hold only sequences below next, so takeFrom alone decides',
  },
  {
    file: 'src/canary/tracker.ts',
    mutator: 'EqualityOperator',
    original: 'a.seq < s.next',
    replacement: 'a.seq <= s.next',
    reason: 'lostRecently and skippedUnknown hold only sequences below next: next itself is never found there',
  },
  {
    file: 'src/canary/tracker.ts',
    mutator: 'EqualityOperator',
    original: 'a.seq < s.max',
    replacement: 'a.seq <= s.max',
    reason: 'max is a received sequence, so an arrival equal to it took the duplicate branch before',
  },
  {
    file: 'src/canary/tracker.ts',
    mutator: 'EqualityOperator',
    original: 's.max > s.next',
    replacement: 's.max >= s.next',
    reason: 'max = next cannot happen here: max was received, so next would have left `above` in the first branch',
  },
  {
    file: 'src/verify/record.ts',
    mutator: 'ConditionalExpression',
    original: 'value === null',
    replacement: 'false',
    reason: 'null then fails in null.toString inside the try, whose catch returns null as well',
  },
  ...[
    ['ConditionalExpression', 'true'],
    ['ConditionalExpression', 'false'],
    ['EqualityOperator', "typeof value !== 'string'"],
  ].map(([mutator, replacement]) => ({
    file: 'src/verify/record.ts',
    mutator: mutator!,
    original: "typeof value === 'string'",
    replacement: replacement!,
    reason: "JSON.parse reads a Buffer as String(buffer), its UTF-8 text, and a string's toString('utf8') is the string: both branches parse the same text",
  })),
  {
    file: 'src/verify/record.ts',
    mutator: 'StringLiteral',
    original: "'string'",
    replacement: '""',
    reason: "always takes the toString('utf8') branch, which parses the same text for strings and Buffers",
  },
  {
    file: 'src/verify/record.ts',
    mutator: 'BlockStatement',
    original: '{ return null; }',
    replacement: '{}',
    reason: 'after an empty catch r is undefined, and the type checks below return null for it',
  },
  // src/verify/checker.ts, the byte scanner (templateFor, matchAt, readInt, scanTemplate): mutants that
  // only make it decline values it could read.
  ...(
    [
      ["UnaryOperator", "-1", "+1"],
      ["ConditionalExpression", "!/^[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]*$/.test(run)", "false"],
      ["Regex", "/^[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]*$/", "/[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]*$/"],
      ["Regex", "/^[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]*$/", "/^[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]*/"],
      ["StringLiteral", "'latin1'", "\"\""],
      ["ConditionalExpression", "i + n > b.length", "false"],
      ["EqualityOperator", "i + n > b.length", "i + n >= b.length"],
      ["ArithmeticOperator", "i + n", "i - n"],
      ["ConditionalExpression", "i < len", "true"],
      ["EqualityOperator", "i < len", "i <= len"],
      ["ConditionalExpression", "digits > MAX_DIGITS", "false"],
      ["ConditionalExpression", "i >= len", "false"],
      ["EqualityOperator", "i >= len", "i > len"],
      ["ConditionalExpression", "b[i] !== next", "false"],
      ["ConditionalExpression", "i < 0", "false"],
      ["EqualityOperator", "i < 0", "i <= 0"],
      ["ConditionalExpression", "c >= 0x80", "false"],
      ["EqualityOperator", "c >= 0x80", "c > 0x80"],
      ["ConditionalExpression", "c === 0x5c", "false"],
      ["ConditionalExpression", "Number.isNaN(s.ts)", "false"],
      ["ConditionalExpression", "Number.isNaN(s.value)", "false"],
      ["ConditionalExpression", "Number.isNaN(s.p)", "false"],
    ] as const
  ).map(([mutator, original, replacement]) => ({
    file: 'src/verify/checker.ts',
    mutator,
    original,
    replacement,
    reason: "only which path decides the value changes: the byte scanner declines (or fails later) and JSON.parse gives the same verdict, slower; the differential fuzz (test/unit/verify-checker-scan.test.ts) and the layout tests see no difference",
  })),
  {
    file: 'src/verify/checker.ts',
    mutator: "EqualityOperator",
    original: "v < 1",
    replacement: "v <= 1",
    reason: "v = 1 gives log(1) = 0, bucket 0, either way",
  },
  {
    file: 'src/verify/checker.ts',
    mutator: "EqualityOperator",
    original: "seq < this.maxSeen",
    replacement: "seq <= this.maxSeen",
    reason: "an arrival equal to the highest sequence seen is a duplicate and never gets here",
  },
  {
    file: 'src/verify/checker.ts',
    mutator: "StringLiteral",
    original: "'ok'",
    replacement: "\"\"",
    reason: "judge treats every verdict other than 'unexpected' and 'duplicate' as ok",
  },
  {
    file: 'src/verify/checker.ts',
    mutator: "ObjectLiteral",
    original: "{ ts: 0, value: 0, p: 0, seq: 0, end: 0 }",
    replacement: "{}",
    reason: "scanTemplate writes every field before anything reads it",
  },
  {
    file: 'src/verify/checker.ts',
    mutator: "ConditionalExpression",
    original: "typeof value !== 'string'",
    replacement: "true",
    reason: "a string never matches the byte template (characters are not byte values), so JSON.parse decides it as before",
  },
  {
    file: 'src/verify/checker.ts',
    mutator: "StringLiteral",
    original: "'string'",
    replacement: "\"\"",
    reason: "a string never matches the byte template (characters are not byte values), so JSON.parse decides it as before",
  },
  {
    file: 'src/audit/checks/live.ts',
    mutator: 'OptionalChaining',
    original: 'f.cluster?.brokers',
    replacement: 'f.cluster.brokers',
    reason: 'reached only after __transaction_state was found in f.cluster.topics, so f.cluster is defined',
  },
  {
    file: 'src/audit/checks/live.ts',
    mutator: 'ArrayDeclaration',
    original: '[]',
    replacement: '["Stryker was here"]',
    reason: 'f.cluster is defined here (see above) and its brokers is always an array, so the fallback is never evaluated',
  },
  {
    file: 'src/audit/checks/broker.ts',
    mutator: 'StringLiteral',
    original: "''",
    replacement: '"Stryker was here!"',
    reason: 'the fallback for a missing version; "Stryker was here!" does not match /^(\\d+)\\.(\\d+)/ either, so both give undefined',
  },
  {
    file: 'src/audit/checks/checkpoint.ts',
    mutator: 'ConditionalExpression',
    original: 'cp.stateBackend !== undefined',
    replacement: 'true',
    reason: 'LSM_BACKEND.test(undefined) tests the string "undefined", which matches neither rocksdb nor forst: false as before',
  },
  {
    file: 'src/audit/checks/producer.ts',
    mutator: 'ConditionalExpression',
    original: 'v === undefined',
    replacement: 'false',
    reason: 'setting(): for an undefined v the mutant returns v itself, which is undefined',
  },
  {
    file: 'src/audit/checks/producer.ts',
    mutator: 'ConditionalExpression',
    original: 'inFlight !== undefined',
    replacement: 'true',
    reason: 'isInt(undefined) tests the string "undefined", which is not an integer: false as before',
  },
  {
    file: 'src/audit/checks/producer.ts',
    mutator: 'MethodExpression',
    original: 'v.trim()',
    replacement: 'v',
    reason: 'Number() ignores leading and trailing whitespace itself, and isInt has already judged the trimmed text',
  },
  {
    file: 'src/audit/checks/checkpoint.ts',
    mutator: 'ObjectLiteral',
    original: '{ unset: true }',
    replacement: '{}',
    reason: 'valueOf without a value: every caller returns its "unset" observation on the undefined value before it reads unset',
  },
];
