// The pure half of the mutation runner (test/mutation/report.ts): a wrong score or a report that
// leaks a machine path would pass CI unnoticed, so it is tested like the verdict code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { originalText, renderReport, scoreModule, scrubReason, type ModuleResults } from '../../mutation/report.js';
import type { EquivalentMutant } from '../../mutation/equivalent.js';

type Status = ModuleResults['mutants'][number]['status'];
const source = ['const a = x > 1;', 'if (a) {', '  go();', '}'].join('\n');
const at = (sl: number, sc: number, el: number, ec: number) => ({ start: { line: sl, column: sc }, end: { line: el, column: ec } });
const mutant = (status: Status, replacement = 'x >= 1', location = at(1, 11, 1, 16), mutatorName = 'EqualityOperator') => ({ mutatorName, replacement, location, status });
const results = (...mutants: ModuleResults['mutants']): ModuleResults => ({ file: 'src/m.ts', source, mutants });

test('originalText: the replaced text on one line and across lines', () => {
  assert.equal(originalText(source, { location: at(1, 11, 1, 16) }), 'x > 1');
  assert.equal(originalText(source, { location: at(2, 8, 4, 2) }), '{\n  go();\n}');
});

test('scoreModule: killed and timed-out mutants count as killed, errors are left out, the score is floored to 0.1 %', () => {
  const s = scoreModule(results(mutant('Killed'), mutant('Timeout'), mutant('Survived'), mutant('NoCoverage', 'x < 1'), mutant('CompileError'), mutant('Ignored'), mutant('RuntimeError')), []);
  assert.equal(s.mutants, 7);
  assert.equal(s.killed, 2);
  assert.equal(s.survived.length, 1);
  assert.equal(s.noCoverage.length, 1);
  assert.equal(s.other, 3);
  assert.equal(s.score, 50);
  const third = scoreModule(results(mutant('Killed'), mutant('Survived'), mutant('Survived')), []);
  assert.equal(third.score, 33.3);
  assert.equal(scoreModule(results(mutant('CompileError')), []).score, 100, 'nothing counted: nothing to fail');
});

test('scoreModule: only a mutant that matches an equivalent entry in file, mutator, original and replacement leaves the score', () => {
  const eq: EquivalentMutant = { file: 'src/m.ts', mutator: 'EqualityOperator', original: 'x  >\n 1', replacement: 'x >= 1', reason: 'same when x is an integer' };
  const s = scoreModule(results(mutant('Killed'), mutant('Survived')), [eq]);
  assert.equal(s.score, 100);
  assert.deepEqual(s.equivalent.map((e) => e.reason), ['same when x is an integer']);
  for (const other of [{ ...eq, file: 'src/n.ts' }, { ...eq, mutator: 'ConditionalExpression' }, { ...eq, original: 'x > 2' }, { ...eq, replacement: 'x < 1' }]) {
    const t = scoreModule(results(mutant('Killed'), mutant('Survived')), [other]);
    assert.equal(t.score, 50, JSON.stringify(other));
    assert.equal(t.equivalent.length, 0);
  }
  const uncovered = scoreModule(results(mutant('NoCoverage')), [eq]);
  assert.equal(uncovered.noCoverage.length, 0, 'an uncovered equivalent mutant is left out as well');
});

test('renderReport: scores, surviving mutants with their source, equivalents, modules not run', () => {
  const eq: EquivalentMutant = { file: 'src/m.ts', mutator: 'BlockStatement', original: '{ go(); }', replacement: '{}', reason: 'go is a no-op' };
  const s = scoreModule(results(mutant('Killed'), mutant('Survived', 'x | 1'), mutant('Survived', '{}', at(2, 8, 4, 2), 'BlockStatement')), [eq]);
  const md = renderReport([s], ['src/later.ts']);
  assert.match(md, /^\| src\/m\.ts \| 3 \| 1 \| 1 \| 0 \| 1 \| 50\.0 % \|$/m);
  assert.match(md, /^\| src\/later\.ts \| not run yet /m);
  assert.match(md, /^\| 1 \| EqualityOperator \| `x > 1` \| `x \\\| 1` \|$/m, 'a pipe in a mutant is escaped for the table');
  assert.match(md, /^\| src\/m\.ts \| 2 \| BlockStatement \| `\{ go\(\); \}` \| `\{\}` \| go is a no-op \|$/m);
  assert.match(renderReport([scoreModule(results(mutant('Killed')), [])], []), /None: every mutant is killed or listed as equivalent\./);
});

test('scrubReason: the project root and Stryker sandbox leave a reason, a failed load keeps only its error', () => {
  const root = '/home/ci/work.1/eoswatch';
  assert.equal(
    scrubReason(`checker > x: AssertionError at ${root}/.stryker-tmp/sandbox-Ab12cD/src/verify/checker.ts:10 and ${root}/test/unit/a.test.ts`, root),
    'checker > x: AssertionError at src/verify/checker.ts:10 and test/unit/a.test.ts',
  );
  assert.equal(scrubReason('/home/ci/workx1/eoswatch/x.ts', root), '/home/ci/workx1/eoswatch/x.ts', 'the root is matched literally, its dot is not a wildcard');
  const failed = [
    'Error running file "test/unit/linear-grouping.test.ts". Tap process exited with code 1.',
    `Command: node --import tsx ${root}/.stryker-tmp/sandbox-Q/test/unit/linear-grouping.test.ts`,
    'Stderr output:',
    `file://${root}/.stryker-tmp/sandbox-Q/src/kafka/linear-grouping.ts:3`,
    'SyntaxError: Unexpected token }  ',
    '    at compile (node:internal)',
  ].join('\n');
  assert.equal(scrubReason(failed, root), 'Error running file "test/unit/linear-grouping.test.ts": the mutated module failed to load (Unexpected token })');
  assert.equal(
    scrubReason('Error running file "t.ts". Tap process exited with code 1.\nStderr output:\nsomething else', root),
    'Error running file "t.ts": the mutated module failed to load',
  );
});
