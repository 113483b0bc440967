// The compact form of the committed mutation results (test/mutation/baseline.ts): each file's text
// stored as its git blob id and restored exactly; a file whose text cannot be had is left out (its
// results are then made again by Stryker), never restored as something else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blobId, packReport, unpackReport, type StrykerReport } from '../../mutation/baseline.js';

const report = (): StrykerReport => ({
  schemaVersion: '2',
  files: { 'src/a.ts': { language: 'typescript', mutants: [{ id: '0', mutatorName: 'BooleanLiteral', status: 'Killed', killedBy: ['0'] }], source: 'export const a = true;\n' } },
  testFiles: { 'test/unit/a.test.ts': { tests: [{ id: '0', name: 'test/unit/a.test.ts' }], source: "import { a } from '../../src/a.js';\n" } },
  config: { incrementalFile: 'test/mutation/incremental/src-a.ts.json.gz' },
});

test('blobId is the id git gives the text (git hash-object)', () => {
  assert.equal(blobId(''), 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
  assert.equal(blobId('hello\n'), 'ce013625030ba8dba906f756967f9e9ca394464a');
  assert.equal(blobId('é\n'), 'c6003325155f475bd7c87731607525dce73be9cf', 'of the UTF-8 bytes');
});

test('packed: no text of a file, its blob id instead; everything else as Stryker wrote it', () => {
  const r = report();
  const packed = packReport(r);
  assert.deepEqual(packed.files['src/a.ts'], { blob: blobId('export const a = true;\n'), language: 'typescript', mutants: r.files['src/a.ts']!.mutants });
  assert.deepEqual(packed.testFiles!['test/unit/a.test.ts'], { blob: blobId("import { a } from '../../src/a.js';\n"), tests: r.testFiles!['test/unit/a.test.ts']!.tests });
  assert.deepEqual(packed.config, r.config);
  assert.ok(!JSON.stringify(packed).includes('export const a'), 'no copy of a file');
});

test('unpacked with the texts at hand: the report Stryker wrote, exactly', () => {
  const r = report();
  const texts = new Map([r.files['src/a.ts']!.source, r.testFiles!['test/unit/a.test.ts']!.source].map((t) => [blobId(t!), t!]));
  const asked: string[] = [];
  const { report: back, missing } = unpackReport(packReport(r), (path, blob) => (asked.push(path), texts.get(blob)));
  assert.deepEqual(back, r);
  assert.deepEqual(missing, []);
  assert.deepEqual(asked.sort(), ['src/a.ts', 'test/unit/a.test.ts']);
});

test('a text not to be had: the file is left out and named, the others restored', () => {
  const r = report();
  const testText = r.testFiles!['test/unit/a.test.ts']!.source!;
  const { report: back, missing } = unpackReport(packReport(r), (_, blob) => (blob === blobId(testText) ? testText : undefined));
  assert.deepEqual(missing, ['src/a.ts']);
  assert.deepEqual(back.files, {});
  assert.deepEqual(back.testFiles, r.testFiles);
});
