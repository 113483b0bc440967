// The chaos report: one row per round (scenario, records, duplicates, lost, order violations,
// time to recover, worst LSO lag), as a table, JSON or Markdown.
import type { ChaosRun, RoundResult } from './runner.js';

const COLUMNS: [string, (r: RoundResult) => string][] = [
  ['scenario', (r) => r.scenario],
  ['round', (r) => String(r.round)],
  ['records', (r) => String(r.records)],
  ['received', (r) => String(r.received)],
  ['duplicates', (r) => String(r.duplicates)],
  ['lost', (r) => String(r.lost)],
  ['order violations', (r) => String(r.orderViolations)],
  ['wrong value', (r) => String(r.wrongValue)],
  ['aborted (uncommitted only)', (r) => String(r.abortedRecords)],
  ['recovery', (r) => (r.recoverySeconds === null ? 'n/a' : `${r.recoverySeconds.toFixed(1)} s`)],
  ['worst LSO lag', (r) => String(r.worstLsoLagRecords)],
  ['restarts', (r) => String(r.supervisorRestarts)],
  ['duration', (r) => `${r.durationSeconds.toFixed(0)} s`],
  ['verdict', (r) => (r.passed ? 'PASS' : 'FAIL')],
];

export function formatChaosTable(run: ChaosRun): string {
  const rows = [COLUMNS.map(([h]) => h), ...run.results.map((r) => COLUMNS.map(([, f]) => f(r)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  const faults = run.results.map((r) => `${r.scenario} #${r.round}: ${r.faults.join('; ') || 'no fault injected'}${r.error ? `\n  error: ${r.error.split('\n')[0]}` : ''}`);
  return `${lines[0]}\n${lines.slice(1).join('\n')}\n\nfaults:\n${faults.join('\n')}\n\nverdict: ${run.passed ? 'PASS' : 'FAIL'}\n`;
}

export function formatChaosMarkdown(run: ChaosRun): string {
  const head = `| ${COLUMNS.map(([h]) => h).join(' | ')} |\n|${COLUMNS.map(() => '---').join('|')}|`;
  const rows = run.results.map((r) => `| ${COLUMNS.map(([, f]) => f(r)).join(' | ')} |`);
  const faults = run.results.map((r) => `- **${r.scenario} #${r.round}**: ${r.faults.join('; ') || 'no fault injected'}${r.error ? ` — error: ${r.error.split('\n')[0]}` : ''}`);
  return `## eoswatch chaos\n\nKafka ${run.kafkaVersion}, ${run.records} records per round, ${run.partitions} partitions, started ${run.startedAt}.\n\n${head}\n${rows.join('\n')}\n\nFaults injected (with the pipeline's progress at that moment):\n\n${faults.join('\n')}\n\nVerdict: **${run.passed ? 'PASS' : 'FAIL'}**\n`;
}
