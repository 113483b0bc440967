// The chaos report: one row per round (scenario, records, duplicates, lost, order violations,
// time to recover, worst LSO lag), as a table, JSON or Markdown.
import type { ChaosRun, RoundResult } from './runner.js';
import type { FaultWindowResult } from './windows.js';

// Short headers keep the table within 120 columns; LEGEND says what each one counts.
const COLUMNS: [string, (r: RoundResult) => string][] = [
  ['scenario', (r) => r.scenario],
  ['#', (r) => String(r.round)],
  ['received', (r) => String(r.received)],
  ['dup', (r) => String(r.duplicates)],
  ['lost', (r) => String(r.lost)],
  ['order', (r) => String(r.orderViolations)],
  ['value', (r) => String(r.wrongValue)],
  ['aborted', (r) => String(r.abortedRecords)],
  ['recovery', (r) => (r.recoverySeconds === null ? 'n/a' : `${r.recoverySeconds.toFixed(1)} s`)],
  ['LSO lag', (r) => String(r.worstLsoLagRecords)],
  ['sup.rst', (r) => String(r.supervisorRestarts)],
  ['time', (r) => `${r.durationSeconds.toFixed(0)} s`],
  ['verdict', (r) => (r.passed ? 'PASS' : 'FAIL')],
];

export const LEGEND = [
  '#: round; received: distinct records at the sink (read_committed); dup, lost, order, value: duplicates, lost records,',
  'order violations per source partition and wrong values (each must be 0); aborted: records of aborted transactions,',
  'seen only by a read_uncommitted pass (expected after faults, never delivered); recovery: fault end to the next commit;',
  "LSO lag: worst records behind the sink's last stable offset; sup.rst: restarts by eoswatch's pipeline supervisor inside",
  'a worker (process kills and restarts that a scenario injects are listed under faults); time: the whole round.',
];

const secs = (s: number | null) => (s === null ? 'end of round' : `${s.toFixed(1)} s`);
const recovery = (w: FaultWindowResult) => (w.healedSeconds === null ? 'n/a (lasted the whole round)' : w.recoverySeconds === null ? 'never' : `${w.recoverySeconds.toFixed(1)} s`);
/** Round results that have fault windows (network faults), with their rows. */
const withWindows = (run: ChaosRun) => run.results.filter((r) => r.windows?.length);

function windowLines(run: ChaosRun): string {
  const rounds = withWindows(run);
  if (!rounds.length) return '';
  const lines = rounds.flatMap((r) =>
    r.windows!.map(
      (w) =>
        `${r.scenario} #${r.round}: ${w.fault}: ${secs(w.startedSeconds)} → ${secs(w.healedSeconds)} (at ${w.progressAtStart.toFixed(1)} %), ${w.committedDuring} committed meanwhile, recovery ${recovery(w)}`,
    ),
  );
  return `\nfault windows (seconds into the round, start → heal; recovery: heal to the next commit):\n${lines.join('\n')}\n`;
}

function windowMarkdown(run: ChaosRun): string {
  const rounds = withWindows(run);
  if (!rounds.length) return '';
  const rows = rounds.flatMap((r) =>
    r.windows!.map((w) => `| ${r.scenario} | ${r.round} | ${w.fault} | ${secs(w.startedSeconds)} | ${secs(w.healedSeconds)} | ${w.progressAtStart.toFixed(1)} % | ${w.committedDuring} | ${recovery(w)} |`),
  );
  return `\nFault windows (seconds into the round; committed meanwhile: input records the pipeline committed while the fault lasted; recovery: from the heal to the next commit):\n\n| scenario | # | fault | started | healed | progress at start | committed meanwhile | recovery |\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`;
}

export function formatChaosTable(run: ChaosRun): string {
  const rows = [COLUMNS.map(([h]) => h), ...run.results.map((r) => COLUMNS.map(([, f]) => f(r)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  const faults = run.results.map((r) => `${r.scenario} #${r.round}: ${r.faults.join('; ') || 'no fault injected'}${r.error ? `\n  error: ${r.error.split('\n')[0]}` : ''}`);
  return `Kafka ${run.kafkaVersion}, ${run.records} records per round, ${run.partitions} partitions\n\n${lines[0]}\n${lines.slice(1).join('\n')}\n\n${LEGEND.join('\n')}\n\nfaults:\n${faults.join('\n')}\n${windowLines(run)}\nverdict: ${run.passed ? 'PASS' : 'FAIL'}\n`;
}

export function formatChaosMarkdown(run: ChaosRun): string {
  const head = `| ${COLUMNS.map(([h]) => h).join(' | ')} |\n|${COLUMNS.map(() => '---').join('|')}|`;
  const rows = run.results.map((r) => `| ${COLUMNS.map(([, f]) => f(r)).join(' | ')} |`);
  const faults = run.results.map((r) => `- **${r.scenario} #${r.round}**: ${r.faults.join('; ') || 'no fault injected'}${r.error ? ` — error: ${r.error.split('\n')[0]}` : ''}`);
  return `## eoswatch chaos\n\nKafka ${run.kafkaVersion}, ${run.records} records per round, ${run.partitions} partitions, started ${run.startedAt}.\n\n${head}\n${rows.join('\n')}\n\n${LEGEND.join(' ')}\n\nFaults injected (with the pipeline's progress at that moment):\n\n${faults.join('\n')}\n${windowMarkdown(run)}\nVerdict: **${run.passed ? 'PASS' : 'FAIL'}**\n`;
}
