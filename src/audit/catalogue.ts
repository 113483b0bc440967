// docs/audit-checks.md is generated from the check definitions (npm run docs:checks), and a unit
// test compares the two, so the catalogue cannot drift from the code.
import type { CheckDefinition } from './types.js';

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderCatalogue(checks: CheckDefinition[]): string {
  const lines = [
    '# Audit check catalogue',
    '',
    '<!-- Generated from src/audit/checks by `npm run docs:checks`; do not edit by hand. -->',
    '',
    'Every check eoswatch runs (`eos_audit_check_passed{check,target,severity}`, `GET /audit`, `eoswatch audit`).',
    'Severity follows consequence: **critical** settings can lose or duplicate data; **warning** ones',
    'make failures likelier or slower to recover from.',
    '',
    '| id | severity | what | why | fix |',
    '|---|---|---|---|---|',
  ];
  for (const c of checks) lines.push(`| \`${c.id}\` | ${c.severity} | ${cell(c.title)} | ${cell(c.rationale)} | ${cell(c.remediation)} |`);
  lines.push(
    `| \`audit.source\` | warning | Configuration source readable | A source that cannot be read or parsed is not audited: its settings may hide any of the problems the other checks look for. | Fix the file or the connection named in the finding. |`,
  );
  return `${lines.join('\n')}\n`;
}
