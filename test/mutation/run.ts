// Mutation testing of the verdict-critical modules (test/mutation/modules.ts) with StrykerJS,
// node's test runner through Stryker's TAP runner, one Stryker run per module. Each module's
// results are kept in test/mutation/incremental/<module>.json (committed), from which
// docs/mutation.md is written (score per module, surviving mutants, equivalent mutants with their
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
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Stryker } from '@stryker-mutator/core';
import type { PartialStrykerOptions, MutantResult } from '@stryker-mutator/api/core';
import { MIN_SCORE, MUTATION_MODULES, type MutationModule } from './modules.js';
import { EQUIVALENT_MUTANTS, type EquivalentMutant } from './equivalent.js';

const INCREMENTAL_DIR = 'test/mutation/incremental';
export const incrementalFile = (file: string): string => `${INCREMENTAL_DIR}/${file.replaceAll('/', '-')}.json`;
const REPORT_FILE = 'docs/mutation.md';

export interface ModuleScore {
  file: string;
  source: string;
  mutants: number;
  killed: number;
  survived: Mutant[];
  noCoverage: Mutant[];
  equivalent: { mutant: Mutant; reason: string }[];
  /** Compile/runtime errors and ignored mutants: not counted. */
  other: number;
  score: number;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The source text a mutant replaces (location lines and columns are 1-based). */
export function originalText(source: string, m: { location: MutantResult['location'] }): string {
  const lines = source.split('\n');
  const { start, end } = m.location;
  if (start.line === end.line) return lines[start.line - 1]!.slice(start.column - 1, end.column - 1);
  const first = lines[start.line - 1]!.slice(start.column - 1);
  const middle = lines.slice(start.line, end.line - 1);
  const last = lines[end.line - 1]!.slice(0, end.column - 1);
  return [first, ...middle, last].join('\n');
}

function equivalentReason(file: string, m: Mutant, original: string, list: EquivalentMutant[]): string | undefined {
  return list.find(
    (e) => e.file === file && e.mutator === m.mutatorName && collapse(e.original) === collapse(original) && collapse(e.replacement) === collapse(m.replacement),
  )?.reason;
}

/** A module's mutants as its incremental file holds them (mutation-testing-report-schema), with the source they were made from. */
export interface ModuleResults {
  file: string;
  source: string;
  mutants: Pick<MutantResult, 'mutatorName' | 'replacement' | 'location' | 'status'>[];
}

export function readModuleResults(file: string): ModuleResults | undefined {
  const path = incrementalFile(file);
  if (!existsSync(path)) return undefined;
  const report = JSON.parse(readFileSync(path, 'utf8')) as { files: Record<string, { source: string; mutants: ModuleResults['mutants'] }> };
  const entry = report.files[file];
  return entry ? { file, source: entry.source, mutants: entry.mutants } : undefined;
}

type Mutant = ModuleResults['mutants'][number];

/** A module's score; a surviving or uncovered mutant listed as equivalent is left out of it. */
export function scoreModule(r: ModuleResults, equivalents = EQUIVALENT_MUTANTS): ModuleScore {
  const s: ModuleScore = { file: r.file, source: r.source, mutants: 0, killed: 0, survived: [], noCoverage: [], equivalent: [], other: 0, score: 100 };
  for (const m of r.mutants) {
    s.mutants++;
    if (m.status === 'Killed' || m.status === 'Timeout') {
      s.killed++;
      continue;
    }
    if (m.status !== 'Survived' && m.status !== 'NoCoverage') {
      s.other++;
      continue;
    }
    const reason = equivalentReason(r.file, m, originalText(r.source, m), equivalents);
    if (reason !== undefined) s.equivalent.push({ mutant: m, reason });
    else (m.status === 'Survived' ? s.survived : s.noCoverage).push(m);
  }
  const counted = s.killed + s.survived.length + s.noCoverage.length;
  s.score = counted === 0 ? 100 : Math.floor((1000 * s.killed) / counted) / 10;
  return s;
}

function describe(m: Mutant, source: string): string {
  const orig = collapse(originalText(source, m)).replaceAll('|', '\\|').replaceAll('`', "'");
  const repl = collapse(m.replacement).replaceAll('|', '\\|').replaceAll('`', "'");
  return `${m.location.start.line} | ${m.mutatorName} | \`${orig.slice(0, 80)}\` | \`${repl.slice(0, 80)}\``;
}

export function renderReport(scores: ModuleScore[], missing: string[]): string {
  const out: string[] = [
    '# Mutation testing of the verdict-critical modules',
    '',
    'Generated by `npm run test:mutation` (test/mutation/run.ts; modules and their tests in',
    'test/mutation/modules.ts, equivalent mutants in test/mutation/equivalent.ts). Score = killed ÷',
    `(killed + survived + not covered), equivalent mutants left out; each module must reach ${MIN_SCORE} %.`,
    '',
    '| module | mutants | killed | survived | not covered | equivalent | score |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const s of scores) {
    out.push(`| ${s.file} | ${s.mutants} | ${s.killed} | ${s.survived.length} | ${s.noCoverage.length} | ${s.equivalent.length} | ${s.score.toFixed(1)} % |`);
  }
  for (const f of missing) out.push(`| ${f} | not run yet |  |  |  |  |  |`);
  const open = scores.filter((s) => s.survived.length + s.noCoverage.length > 0);
  out.push('', '## Surviving mutants', '');
  if (open.length === 0) out.push('None: every mutant is killed or listed as equivalent.');
  for (const s of open) {
    out.push(`### ${s.file}`, '', '| line | mutator | original | replacement |', '| ---: | --- | --- | --- |');
    for (const m of [...s.survived, ...s.noCoverage]) out.push(`| ${describe(m, s.source)} |`);
    out.push('');
  }
  out.push('', '## Equivalent mutants', '');
  const eq = scores.flatMap((s) => s.equivalent.map((e) => ({ ...e, file: s.file, source: s.source })));
  if (eq.length === 0) out.push('None.');
  else {
    out.push('| module | line | mutator | original | replacement | why equivalent |', '| --- | ---: | --- | --- | --- | --- |');
    for (const e of eq) out.push(`| ${e.file} | ${describe(e.mutant, e.source)} | ${e.reason} |`);
  }
  return `${out.join('\n')}\n`;
}

async function mutateModule(m: MutationModule, concurrency: number, incremental: boolean): Promise<void> {
  const options: PartialStrykerOptions = {
    testRunner: 'tap',
    plugins: ['@stryker-mutator/tap-runner'],
    tap: { testFiles: m.tests, nodeArgs: ['--import', 'tsx'], forceBail: true },
    mutate: [m.file],
    coverageAnalysis: 'perTest',
    concurrency,
    incremental: true,
    force: !incremental,
    incrementalFile: incrementalFile(m.file),
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
  scrubLocalPaths(incrementalFile(m.file), process.cwd());
}

/**
 * The committed results name no path of the machine they were made on: the project root becomes
 * ".", and a mutant whose module failed to load keeps the error's message, not Stryker's command
 * line and stack trace (which name the sandbox directory).
 */
export function scrubReason(reason: string, root: string): string {
  const failed = /^Error running file "([^"]+)"\. Tap process exited with code \d+\./.exec(reason);
  if (failed) {
    const err = /^(?:\w*Error|Error \[\w+\]): (.+)$/m.exec(reason.slice(reason.indexOf('Stderr output:')));
    return `Error running file "${failed[1]}": the mutated module failed to load${err ? ` (${err[1]!.trim()})` : ''}`;
  }
  return reason.replace(new RegExp(`${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(\\.stryker-tmp/sandbox-\\w+/)?`, 'g'), '');
}

export function scrubLocalPaths(path: string, root: string): void {
  const report = JSON.parse(readFileSync(path, 'utf8')) as { projectRoot?: string; files: Record<string, { mutants: { statusReason?: string }[] }> };
  report.projectRoot = '.';
  for (const f of Object.values(report.files)) for (const m of f.mutants) if (m.statusReason) m.statusReason = scrubReason(m.statusReason, root);
  writeFileSync(path, JSON.stringify(report, null, 2));
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
    for (const m of modules) {
      const t0 = Date.now();
      process.stdout.write(`\n== mutation testing ${m.file} (${values.incremental ? 'incremental' : 'every mutant'}) ==\n`);
      await mutateModule(m, Number(values.concurrency), values.incremental);
      process.stdout.write(`== ${m.file}: ${Math.round((Date.now() - t0) / 1000)} s ==\n`);
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
