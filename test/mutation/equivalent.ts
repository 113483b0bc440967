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
];
