// Mutation testing of the verdict-critical modules (test/mutation/modules.ts) with StrykerJS,
// node's test runner through Stryker's TAP runner, one Stryker run per module. Each module's
// results are kept in test/mutation/incremental/<module>.json.gz (committed; the texts of the files
// they were made from as git blob ids, see baseline.ts), from which docs/mutation.md is written (score per module, surviving mutants, equivalent mutants with their
// reasons); exits 1 when a module scores below MIN_SCORE.
//
//   npm run test:mutation                        every mutant of every module
//   npm run test:mutation -- --incremental       only mutants whose code or covering tests changed
//                                                since the committed results (what CI runs); fails
//                                                a module that drops below MIN_SCORE, reports one
//                                                that was below already, leaves out modules with
//                                                no committed results
//   npm run test:mutation -- --module src/kafka/send.ts   (repeatable) a subset
//   --concurrency N (default 1: the tests are CPU-bound and machines are shared)
//   --report-only   rewrite docs/mutation.md from the committed results, run nothing
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Stryker } from '@stryker-mutator/core';
import type { PartialStrykerOptions } from '@stryker-mutator/api/core';
import { MIN_SCORE, MUTATION_MODULES, type MutationModule } from './modules.js';
import { REPORT_FILE, readModuleResults, renderReport, scoreModule, scrubLocalPaths, type ModuleResults } from './report.js';
import { INCREMENTAL_DIR, baselineFile, readBaseline, textOfBlob, unpackReport, writeBaseline, type StrykerReport } from './baseline.js';

async function mutateModule(m: MutationModule, concurrency: number, incremental: boolean, runTmp: string): Promise<void> {
  // Stryker reads and writes its incremental report as a file: the committed baseline, its texts
  // restored, in this run's directory; stored again, without the texts, after the run.
  const incrementalFile = join(runTmp, `${m.file.replaceAll('/', '-')}.incremental.json`);
  const stored = readBaseline(m.file);
  if (stored) {
    const { report, missing } = unpackReport(stored, textOfBlob);
    for (const f of missing) process.stdout.write(`test:mutation: the text of ${f} that the committed results of ${m.file} were made from is neither the file's nor in git's objects: its results are not reused\n`);
    writeFileSync(incrementalFile, JSON.stringify(report));
  }
  const options: PartialStrykerOptions = {
    testRunner: 'tap',
    plugins: ['@stryker-mutator/tap-runner'],
    tap: { testFiles: m.tests, nodeArgs: ['--import', 'tsx'], forceBail: true },
    mutate: [m.file],
    coverageAnalysis: 'perTest',
    concurrency,
    incremental: true,
    force: !incremental,
    incrementalFile,
    reporters: ['progress-append-only', 'clear-text'],
    clearTextReporter: { reportTests: false, reportMutants: true, reportScoreTable: false },
    // Stryker rewrites the tsconfig named here with the TypeScript compiler API, which the native
    // TypeScript 7 package does not have; tsx runs the tests without a tsconfig rewrite.
    tsconfigFile: 'tsconfig.stryker-none.json',
    tempDirName: '.stryker-tmp',
    cleanTempDir: true,
    timeoutMS: 10_000,
    ignorePatterns: ['dist', '.eoswatch', 'reports', 'bench/out'],
  };
  await new Stryker(options).runMutationTest();
  const report = JSON.parse(readFileSync(incrementalFile, 'utf8')) as StrykerReport & { config?: { incrementalFile?: string } };
  scrubLocalPaths(report, process.cwd());
  if (report.config) report.config.incrementalFile = baselineFile(m.file);
  writeBaseline(m.file, report);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      incremental: { type: 'boolean', default: false },
      module: { type: 'string', multiple: true },
      concurrency: { type: 'string', default: '1' },
      'report-only': { type: 'boolean', default: false },
    },
  });
  const unknown = (values.module ?? []).filter((f) => !MUTATION_MODULES.some((m) => m.file === f));
  if (unknown.length) {
    process.stderr.write(`test:mutation: not a mutation module: ${unknown.join(', ')} (see test/mutation/modules.ts)\n`);
    process.exit(2);
  }
  let modules = values.module?.length ? MUTATION_MODULES.filter((m) => values.module!.includes(m.file)) : MUTATION_MODULES;
  // The committed scores before this run: an incremental run (CI) fails a module only when it
  // falls below MIN_SCORE from at or above it, and leaves out modules never run in full (their
  // first full run takes long: run it with --module and commit its results).
  const before = new Map(modules.map((m) => [m.file, readModuleResults(m.file)] as const));
  if (values.incremental) {
    const never = modules.filter((m) => !before.get(m.file));
    for (const m of never) process.stdout.write(`test:mutation: ${m.file} has no committed results; left out of this incremental run (npm run test:mutation -- --module ${m.file})\n`);
    modules = modules.filter((m) => before.get(m.file));
  }
  mkdirSync(INCREMENTAL_DIR, { recursive: true });
  const started = Date.now();
  if (!values['report-only']) {
    // Stryker kills a test process whose mutant hangs or crashes it, before that test's own
    // cleanup runs: the tests' temporary files go into a directory of this run, removed after it.
    const runTmp = mkdtempSync(join(tmpdir(), 'eoswatch-mutation-'));
    process.env.TMPDIR = runTmp;
    try {
      for (const m of modules) {
        const t0 = Date.now();
        process.stdout.write(`\n== mutation testing ${m.file} (${values.incremental ? 'incremental' : 'every mutant'}) ==\n`);
        await mutateModule(m, Number(values.concurrency), values.incremental, runTmp);
        process.stdout.write(`== ${m.file}: ${Math.round((Date.now() - t0) / 1000)} s ==\n`);
      }
    } finally {
      rmSync(runTmp, { recursive: true, force: true });
    }
  }
  const results = MUTATION_MODULES.map((m) => readModuleResults(m.file));
  const scores = results.filter((r): r is ModuleResults => r !== undefined).map((r) => scoreModule(r));
  const missing = MUTATION_MODULES.filter((_, i) => results[i] === undefined).map((m) => m.file);
  writeFileSync(REPORT_FILE, renderReport(scores, missing));
  process.stdout.write(`\nmutation scores (this run ${Math.round((Date.now() - started) / 1000)} s; ${REPORT_FILE}):\n`);
  for (const s of scores) process.stdout.write(`  ${s.score.toFixed(1).padStart(5)} %  ${s.file}  (${s.killed} killed, ${s.survived.length} survived, ${s.noCoverage.length} not covered, ${s.equivalent.length} equivalent)\n`);
  for (const f of missing) process.stdout.write(`      -    ${f}  (not run yet)\n`);
  const selected = (file: string) => modules.some((m) => m.file === file);
  const wasBelow = (file: string) => {
    const r = before.get(file);
    return r !== undefined && scoreModule(r).score < MIN_SCORE;
  };
  for (const s of scores.filter((x) => selected(x.file) && x.score < MIN_SCORE && values.incremental && wasBelow(x.file))) {
    process.stdout.write(`test:mutation: ${s.file} is still below ${MIN_SCORE} % (${s.score.toFixed(1)} %), as in the committed results\n`);
  }
  const low = scores.filter((s) => s.score < MIN_SCORE && selected(s.file) && !(values.incremental && wasBelow(s.file)));
  const unscored = missing.filter(selected);
  // Modules of this run at or above the minimum score, as a closing line CI tools can read.
  process.stdout.write(`mutation: ${modules.length - low.length - unscored.length} passed, ${low.length + unscored.length} failed\n`);
  if (low.length || unscored.length) {
    if (low.length) process.stderr.write(`test:mutation: below ${MIN_SCORE} %: ${low.map((s) => `${s.file} ${s.score.toFixed(1)} %`).join(', ')}\n`);
    if (unscored.length) process.stderr.write(`test:mutation: no results for ${unscored.join(', ')}\n`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
