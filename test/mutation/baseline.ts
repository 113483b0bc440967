// The committed mutation results (the baseline an incremental run reuses), stored compactly: per
// module, Stryker's incremental report (mutation-testing-report-schema: the mutants with their
// status, the tests, which tests cover and kill which mutant) with the text of each source and test
// file replaced by its git blob id, minified and gzipped, in test/mutation/incremental/<module>.json.gz.
//
// Stryker needs the text a result was made from only to diff it against the file as it is now
// (IncrementalDiffer: diff-match-patch moves the mutants and tests of unchanged code and drops
// those of changed code; a test file without a text would be taken as unchanged). So before a run
// each text is restored, from the file in the working tree when it still has that blob id (the
// usual case: nothing changed since the results were committed), else from git's objects
// (`git cat-file blob`: the results are committed with the code they were made from); a file
// whose text cannot be had is left out of the restored report, and Stryker runs its mutants again
// (a source) or counts its tests as new (a test file), as for a file it has never seen. After the
// run Stryker's report is stored again without the texts.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';

export const INCREMENTAL_DIR = 'test/mutation/incremental';
/** The committed baseline of a module (its source file's path). */
export const baselineFile = (file: string): string => `${INCREMENTAL_DIR}/${file.replaceAll('/', '-')}.json.gz`;

/** A report: its source files (with their mutants) and test files (with their tests), and the rest as Stryker wrote it. */
interface Report<F> {
  files: Record<string, F>;
  testFiles?: Record<string, F>;
  [k: string]: unknown;
}
/** Stryker's incremental report (mutation-testing-report-schema): each file with its text. */
export type StrykerReport = Report<{ source?: string; [k: string]: unknown }>;
/** The stored baseline: each file with its git blob id in place of its text. */
export type StoredReport = Report<{ blob?: string; [k: string]: unknown }>;
type ReportFile = StrykerReport['files'][string];
type StoredFile = StoredReport['files'][string];

/** The git blob id of a text (what `git hash-object` prints for a file holding it). */
export function blobId(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

const mapFiles = <A, B>(files: Record<string, A> | undefined, f: (path: string, file: A) => B | undefined): Record<string, B> | undefined =>
  files && Object.fromEntries(Object.entries(files).flatMap(([path, file]) => {
    const out = f(path, file);
    return out === undefined ? [] : [[path, out]];
  }));

/** The report without the files' texts: each text's blob id in its place. */
export function packReport(report: StrykerReport): StoredReport {
  const pack = (_: string, { source, ...rest }: ReportFile): StoredFile => (source === undefined ? rest : { blob: blobId(source), ...rest });
  return { ...report, files: mapFiles(report.files, pack)!, testFiles: mapFiles(report.testFiles, pack) };
}

/**
 * The report with the files' texts restored by `textOf(path, blob)` (undefined: not to be had);
 * a file whose text is not had is left out, and its path listed in `missing`.
 */
export function unpackReport(stored: StoredReport, textOf: (path: string, blob: string) => string | undefined): { report: StrykerReport; missing: string[] } {
  const missing: string[] = [];
  const unpack = (path: string, { blob, ...rest }: StoredFile): ReportFile | undefined => {
    if (blob === undefined) return rest;
    const source = textOf(path, blob);
    if (source === undefined) {
      missing.push(path);
      return undefined;
    }
    return { source, ...rest };
  };
  return { report: { ...stored, files: mapFiles(stored.files, unpack)!, testFiles: mapFiles(stored.testFiles, unpack) }, missing };
}

/** The text with that blob id: the file in the working tree if it has it, else git's object (undefined if neither). */
export function textOfBlob(path: string, blob: string): string | undefined {
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    if (blobId(text) === blob) return text;
  }
  try {
    const text = execFileSync('git', ['cat-file', 'blob', blob], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
    return blobId(text) === blob ? text : undefined;
  } catch {
    return undefined;
  }
}

export function readBaseline(file: string): StoredReport | undefined {
  const path = baselineFile(file);
  return existsSync(path) ? (JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as StoredReport) : undefined;
}

export function writeBaseline(file: string, report: StrykerReport): void {
  // gzip of the same bytes is the same bytes (no name, no time in the header): results that did
  // not change leave the committed file as it is.
  writeFileSync(baselineFile(file), gzipSync(JSON.stringify(packReport(report)), { level: 9 }));
}
