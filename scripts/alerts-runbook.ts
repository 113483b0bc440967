// npm run alerts:runbook -- <base> — points every alert's runbook_url at the copy of
// alerts/RUNBOOK.md your on-call can open: `<base>#<lowercase alert name>`, the heading of the
// alert in that runbook. The base is the URL of RUNBOOK.md itself, for example
//   npm run alerts:runbook -- https://git.example.com/sre/eoswatch/blob/v0.1.0/alerts/RUNBOOK.md
// and the shipped default, the path of the runbook inside this repository, comes back with
//   npm run alerts:runbook -- --default
// It rewrites, in place, the rules (alerts/eoswatch.rules.yml), their Prometheus Operator copy
// (deploy/kubernetes/alerts/prometheusrule.yaml) and the promtool tests' expected annotations
// (alerts/tests/eoswatch.rules.test.yml), so `promtool test rules` and the equality test of the
// Kubernetes copy keep passing. Every alert is handled by its name: a new alert needs a
// `runbook_url:` line (any value) and a `## <AlertName>` heading in RUNBOOK.md, nothing here.
// `--check` changes nothing and exits 1 when a file is not in the form the base would give.
import { readFileSync, writeFileSync } from 'node:fs';

/** The shipped base: the runbook's path in this repository (relative, as the files ship). */
export const DEFAULT_RUNBOOK_BASE = 'alerts/RUNBOOK.md';

/** Files holding runbook URLs, and what names the alert a `runbook_url:` line belongs to. */
export const RUNBOOK_FILES: { file: string; alertKey: 'alert' | 'alertname' }[] = [
  { file: 'alerts/eoswatch.rules.yml', alertKey: 'alert' },
  { file: 'deploy/kubernetes/alerts/prometheusrule.yaml', alertKey: 'alert' },
  { file: 'alerts/tests/eoswatch.rules.test.yml', alertKey: 'alertname' },
];

/** The runbook URL of an alert: its heading's anchor (GitHub's anchor of `## EosName` is `#eosname`). */
export const runbookUrl = (base: string, alert: string): string => `${base}#${alert.toLowerCase()}`;

/** A base that can stand in a double-quoted YAML scalar and take an anchor; else why not. */
export function baseProblem(base: string): string | undefined {
  if (base === '') return 'the base is empty';
  if (/[\s"\\#]/.test(base)) return `the base must not contain whitespace, ", \\ or # (the anchor is added): ${JSON.stringify(base)}`;
  if (base !== DEFAULT_RUNBOOK_BASE && !/^https?:\/\/[^/]+/.test(base)) return `the base must be an http:// or https:// URL of RUNBOOK.md (or --default): ${JSON.stringify(base)}`;
  return undefined;
}

/**
 * `text` with every `runbook_url:` line set to the URL of the alert it belongs to (the last
 * `- alert: Name` / `alertname: Name` above it). Throws, naming file and line, on a runbook_url
 * that follows no alert name.
 */
export function setRunbookBase(text: string, base: string, file: string, alertKey: 'alert' | 'alertname'): string {
  const nameLine = new RegExp(`^\\s*(?:- )?${alertKey}:\\s*"?([A-Za-z0-9_]+)"?\\s*$`);
  let alert: string | undefined;
  return text
    .split('\n')
    .map((line, i) => {
      const n = nameLine.exec(line);
      if (n) alert = n[1];
      const url = /^(\s*runbook_url:\s*).*$/.exec(line);
      if (!url || line.trimStart().startsWith('#')) return line;
      if (!alert) throw new Error(`${file}:${i + 1}: runbook_url before any ${alertKey}: name`);
      return `${url[1]}"${runbookUrl(base, alert)}"`;
    })
    .join('\n');
}

/** The base the file's first runbook_url uses (undefined without one). */
export function runbookBaseOf(text: string): string | undefined {
  const m = /^\s*runbook_url:\s*"([^"#]*)#/m.exec(text);
  return m?.[1];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const rest = args.filter((a) => a !== '--check');
  const base = rest.includes('--default') ? DEFAULT_RUNBOOK_BASE : (rest[0] ?? (check ? runbookBaseOf(readFileSync(RUNBOOK_FILES[0]!.file, 'utf8')) : undefined));
  if (base === undefined || rest.length > 1) {
    process.stderr.write('usage: npm run alerts:runbook -- <https URL of RUNBOOK.md> | --default [--check]\n');
    process.exit(2);
  }
  const problem = baseProblem(base);
  if (problem) {
    process.stderr.write(`alerts:runbook: ${problem}\n`);
    process.exit(2);
  }
  let stale = 0;
  for (const { file, alertKey } of RUNBOOK_FILES) {
    const text = readFileSync(file, 'utf8');
    const out = setRunbookBase(text, base, file, alertKey);
    if (out === text) continue;
    if (check) {
      stale++;
      process.stderr.write(`${file}: runbook_url not ${runbookUrl(base, '<alert>')}\n`);
    } else {
      writeFileSync(file, out);
      process.stdout.write(`${file}: runbook_url set to ${runbookUrl(base, '<alert>')}\n`);
    }
  }
  if (check && stale > 0) process.exit(1);
  if (!check) process.stdout.write(`runbook base: ${base}\n`);
}
