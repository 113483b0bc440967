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
];
