// The audit report as a table (people), JSON (machines) or Markdown (CI job summaries, PRs).
import type { AuditReport } from './runner.js';
import type { Finding, Severity } from './types.js';

const ORDER: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

export function sortFindings(findings: Finding[]): Finding[] {
  return [...findings].sort((a, b) => Number(a.passed) - Number(b.passed) || ORDER[a.severity] - ORDER[b.severity] || a.check.localeCompare(b.check) || a.target.localeCompare(b.target));
}

export function formatJson(report: AuditReport): string {
  return `${JSON.stringify({ ...report, findings: sortFindings(report.findings) }, null, 2)}\n`;
}

function pad(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n);
}

export function formatTable(report: AuditReport, opts: { all?: boolean } = {}): string {
  const rows = sortFindings(report.findings).filter((f) => opts.all || !f.passed);
  const lines = [
    `eoswatch audit — ${report.summary.critical} critical, ${report.summary.warning} warning, ${report.summary.passed}/${report.summary.checks} passed (${report.durationMs} ms)`,
    ...(report.cluster ? [`cluster: Kafka ${report.cluster.version ?? 'unknown'}, ${report.cluster.brokers} brokers, ${report.cluster.topicsAudited} topics audited`] : []),
    '',
  ];
  if (!rows.length) lines.push('No violations.');
  for (const f of rows) {
    lines.push(`${f.passed ? 'PASS' : f.severity.toUpperCase().padEnd(8)} ${pad(f.check, 50)} ${f.target}`);
    if (!f.passed) {
      lines.push(`         observed: ${f.observed}`);
      lines.push(`         expected: ${f.expected}`);
      lines.push(`         why: ${f.rationale}`);
      lines.push(`         fix: ${f.remediation}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function md(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function formatMarkdown(report: AuditReport): string {
  const rows = sortFindings(report.findings).filter((f) => !f.passed);
  const out = [
    `## eoswatch audit`,
    '',
    `**${report.summary.critical} critical, ${report.summary.warning} warning**, ${report.summary.passed} of ${report.summary.checks} checks passed.`,
    '',
  ];
  if (rows.length) {
    out.push('| severity | check | target | observed | expected | fix |', '|---|---|---|---|---|---|');
    for (const f of rows) out.push(`| ${f.severity} | \`${f.check}\` | ${md(f.target)} | ${md(f.observed)} | ${md(f.expected)} | ${md(f.remediation)} |`);
  } else out.push('No violations.');
  return `${out.join('\n')}\n`;
}
