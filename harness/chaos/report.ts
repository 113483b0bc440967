// The chaos report: one row per round (scenario, records, duplicates, lost, order violations,
// time to recover, worst LSO lag), as a table, JSON or Markdown; for Flink rounds also what
// eoswatch showed (the held LSO of a killed process, checkpoint failures, failovers, visibility
// latency, alerts). Beside the exactly-once verdict of each round, its availability (failed
// checkpoints, restarts, worker exits, the longest commit stall) in a table of its own.
import type { FlinkChaosRun, FlinkRoundResult } from './flink-runner.js';
import { SEED_FAULTS, SEED_PROTOCOL } from './flink-scenarios.js';
import type { StreamsChaosRun, StreamsRoundResult } from './streams-runner.js';
import type { Lingering } from './observed.js';
import type { ChaosRun, RoundResult } from './runner.js';
import { countVerdicts, runVerdict, summaryLine, verdictOf } from './verdict.js';
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
  ['time', (r) => `${r.durationSeconds.toFixed(0)} s`],
  ['verdict', (r) => verdictOf(r)],
];

export const LEGEND = [
  '#: round; received: distinct records at the sink (read_committed); dup, lost, order, value: duplicates, lost records,',
  'order violations per source partition and wrong values (each must be 0); aborted: records of aborted transactions,',
  'seen only by a read_uncommitted pass (expected after faults, never delivered); recovery: fault end to the next commit;',
  "LSO lag: worst records behind the sink's last stable offset; time: the whole round; verdict: PASS; FAIL: exactly-once",
  'broken, the pipeline stalled or did not finish, or an enforced availability expectation missed; ERROR: the harness',
  'could not run the round (a broker that would not start again, ...; never counted as a FAIL).',
];

const dash = '-';
const AVAILABILITY_COLUMNS: [string, (r: RoundResult) => string][] = [
  ['scenario', (r) => r.scenario],
  ['#', (r) => String(r.round)],
  ['ckpt failed', (r) => (r.availability ? String(r.availability.failedCheckpoints) : dash)],
  ['ckpt done', (r) => (r.availability ? String(r.availability.completedCheckpoints) : dash)],
  ['pipeline rst', (r) => (r.availability ? String(r.availability.pipelineRestarts) : dash)],
  ['worker exits', (r) => (r.availability ? String(r.availability.workerExits) : dash)],
  ['longest stall', (r) => (r.availability?.longestCommitStallSeconds == null ? dash : `${r.availability.longestCommitStallSeconds.toFixed(1)} s`)],
  ['gaps', (r) => (r.availability ? `${r.availability.scrapeGaps}/${r.availability.scrapes}` : dash)],
  ['availability', (r) => (r.availability ? `${r.availability.expectation}${r.availability.enforced ? ' (enforced)' : ''}` : dash)],
];

export const AVAILABILITY_LEGEND = [
  'From /metrics of every worker process, scraped each second (a worker down, starting or not answering is a gap, not a',
  'zero; gaps: gaps/scrapes; counters are summed over the processes, up to the last scrape of each): ckpt failed:',
  'eos_checkpoints_total{outcome="failed"|"timeout"}; ckpt done: outcome="completed"; pipeline rst:',
  'eos_service_restarts_total{service="pipeline"} (the daemon restarted its pipeline); worker exits: worker processes',
  'that exited without the scenario stopping them (the runner started them again); longest stall: the longest time',
  'without a completed checkpoint of any worker while input was pending, from the round\'s first completed checkpoint',
  'until every input record was committed (completions from eos_checkpoint_last_completed_timestamp_seconds; one',
  'overwritten before the next answered scrape is not seen: a stall can read long by that much, never short);',
  'availability: the scenario\'s expectation met / not met (n/a: none), apart from the verdict unless enforced.',
];

/** Why a round missed its availability expectation, and what the harness had to do again. */
function availabilityNotes(run: ChaosRun): string[] {
  return run.results.flatMap((r) => [
    ...(r.availability?.missed.length ? [`${r.scenario} #${r.round}: availability not met: ${r.availability.missed.join('; ')}`] : []),
    ...(r.harnessNotes ?? []).map((n) => `${r.scenario} #${r.round}: harness: ${n}`),
  ]);
}

/** The run's last line: the verdict and the rounds by verdict ("verdict: FAIL (2 PASS, 1 FAIL, 0 ERROR (harness))"). */
export function runSummary(run: ChaosRun): string {
  const c = run.counts ?? countVerdicts(run.results);
  return `${run.verdict ?? runVerdict(c)} (${summaryLine(c)})`;
}

/** Seconds with `digits` decimals, or `none` when there is no figure. */
const secs = (v: number | null, none = 'end of round', digits = 1) => (v === null ? none : `${v.toFixed(digits)} s`);
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

/** A plain-text table of `results`, one row each, columns padded to their widest cell. */
function textTable<R>(columns: [string, (r: R) => string][], results: R[]): string[] {
  const rows = [columns.map(([h]) => h), ...results.map((r) => columns.map(([, f]) => f(r)))];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
}

function markdownTable<R>(columns: [string, (r: R) => string][], results: R[]): string {
  const head = `| ${columns.map(([h]) => h).join(' | ')} |\n|${columns.map(() => '---').join('|')}|`;
  return `${head}\n${results.map((r) => `| ${columns.map(([, f]) => f(r)).join(' | ')} |`).join('\n')}`;
}

export function formatChaosTable(run: ChaosRun): string {
  const lines = textTable(COLUMNS, run.results);
  const faults = run.results.map((r) => `${r.scenario} #${r.round}: ${r.faults.join('; ') || 'no fault injected'}${r.error ? `\n  error: ${r.error.split('\n')[0]}` : ''}`);
  const avail = textTable(AVAILABILITY_COLUMNS, run.results);
  const notes = availabilityNotes(run);
  return (
    `Kafka ${run.kafkaVersion}, ${run.records} records per round, ${run.partitions} partitions\n\n${lines.join('\n')}\n\n${LEGEND.join('\n')}\n\n` +
    `availability:\n${avail.join('\n')}\n\n${AVAILABILITY_LEGEND.join('\n')}\n${notes.length ? `\n${notes.join('\n')}\n` : ''}\n` +
    `faults:\n${faults.join('\n')}\n${windowLines(run)}\nverdict: ${runSummary(run)}\n`
  );
}

export function formatChaosMarkdown(run: ChaosRun): string {
  const faults = run.results.map((r) => `- **${r.scenario} #${r.round}**: ${r.faults.join('; ') || 'no fault injected'}${r.error ? ` — error: ${r.error.split('\n')[0]}` : ''}`);
  const notes = availabilityNotes(run);
  return (
    `## eoswatch chaos\n\nKafka ${run.kafkaVersion}, ${run.records} records per round, ${run.partitions} partitions, started ${run.startedAt}.\n\n${markdownTable(COLUMNS, run.results)}\n\n${LEGEND.join(' ')}\n\n` +
    `Availability:\n\n${markdownTable(AVAILABILITY_COLUMNS, run.results)}\n\n${AVAILABILITY_LEGEND.join(' ')}\n${notes.length ? `\n${notes.map((n) => `- ${n}`).join('\n')}\n` : ''}\n` +
    `Faults injected (with the pipeline's progress at that moment):\n\n${faults.join('\n')}\n${windowMarkdown(run)}\nVerdict: **${runSummary(run)}**\n`
  );
}


/** The columns an engine round (Flink, Streams) shares: the verifier's figures, outage and recovery, the longest hold of the sink's LSO. */
function engineRoundColumns<R extends RoundResult & { outageSeconds: number | null; observed: { lingering: Lingering[]; lsoStuckMaxSeconds: number } }>(): [string, (r: R) => string][] {
  return [
    ['received', (r) => String(r.received)],
    ['dup', (r) => String(r.duplicates)],
    ['lost', (r) => String(r.lost)],
    ['order', (r) => String(r.orderViolations)],
    ['aborted', (r) => String(r.abortedRecords)],
    ['outage', (r) => secs(r.outageSeconds, 'n/a')],
    ['recovery', (r) => secs(r.recoverySeconds, 'n/a')],
    ['LSO held', (r) => (r.observed.lingering.length ? secs(Math.max(...r.observed.lingering.map((l) => l.stuckMaxSeconds)), 'n/a', 0) : secs(r.observed.lsoStuckMaxSeconds, 'n/a', 0))],
  ];
}

/** Per kill, how long the sink's LSO was held and when it was released. */
const lingeringText = (list: Lingering[]) => list.map((l) => `${l.fault}: LSO held ${l.stuckMaxSeconds} s, ${l.clearedAfterSeconds === null ? 'never released' : `released ${l.clearedAfterSeconds} s after the fault`}`);

const FLINK_COLUMNS: [string, (r: FlinkRoundResult) => string][] = [
  ['scenario', (r) => r.scenario],
  ['#', (r) => String(r.round)],
  ['Flink', (r) => r.flinkVersion],
  ...engineRoundColumns<FlinkRoundResult>(),
  ['ckpt fail', (r) => String(r.observed.consecutiveFailuresMax)],
  ['failovers', (r) => String(r.observed.restarts)],
  ['visible', (r) => (r.observed.visibility.meanSeconds === null ? 'n/a' : `${r.observed.visibility.meanSeconds.toFixed(2)} s`)],
  ['time', (r) => `${r.durationSeconds.toFixed(0)} s`],
  ['verdict', (r) => (r.passed ? 'PASS' : 'FAIL')],
];

export const FLINK_LEGEND = [
  '#: round; received: distinct records at the sink (read_committed); dup, lost, order: duplicates, lost records and order',
  'violations per source partition (each must be 0, values are checked too); aborted: records of aborted transactions, seen',
  'only by a read_uncommitted pass; outage: longest time from a fault until the job committed progress again; recovery:',
  'end of the last fault (process back, job resubmitted, broker in sync) until it did; from eoswatch watching the job:',
  'LSO held: longest eos_partition_lso_stuck_seconds of a sink partition (after a process kill: its open transaction,',
  'until Flink aborts it); ckpt fail: highest eos_checkpoint_consecutive_failures; failovers: eos_pipeline_restarts_total;',
  'visible: mean eos_flink_sink_visibility_latency_seconds (checkpoint completion until the sink LSO passed its records).',
];

/** What eoswatch showed in a round, one line: the held LSO of each kill, the visibility latency, alerts, misses. */
function flinkObserved(r: FlinkRoundResult): string {
  const o = r.observed;
  const parts = lingeringText(o.lingering);
  const v = o.visibility;
  parts.push(v.count ? `visibility latency: ${v.count} checkpoints, mean ${v.meanSeconds!.toFixed(2)} s, p99 ≤ ${v.p99AtMostSeconds ?? '> 120'} s, longest pending ${v.pendingMaxSeconds.toFixed(1)} s` : 'visibility latency: no checkpoint observed');
  parts.push(`open transaction age up to ${o.openTransactionAgeMaxSeconds.toFixed(1)} s`);
  if (o.jobDownSeen) parts.push('eos_pipeline_up 0 seen');
  if (o.restUnreachableSeen) parts.push('eos_flink_rest_up 0 seen');
  if (o.restoredFromId !== null) parts.push(`restored from checkpoint ${o.restoredFromId}`);
  parts.push(
    o.prometheus
      ? `alerts fired: ${o.alertsFired.join(', ') || 'none'}${o.consecutiveFailuresClauseSeen ? ' (EosCheckpointFailing also with consecutive failures > 0 after the fault)' : ''}${o.alertsPending.length ? `; pending only: ${o.alertsPending.join(', ')}` : ''}`
      : 'no live Prometheus',
  );
  if (r.missed.length) parts.push(`MISSED: ${r.missed.join('; ')}`);
  return parts.join('; ');
}

function flinkHeader(runs: FlinkChaosRun[]): string {
  const r = runs[0];
  if (!r) return 'no Flink chaos run';
  const counts = [...new Set(runs.flatMap((x) => x.results.map((y) => y.records)))];
  return `Kafka ${r.kafkaVersion}, Flink ${runs.map((x) => x.flinkVersion).join(' and ')}, ${(counts.length ? counts : [r.records]).join(' or ')} records per round, ${r.partitions} partitions, job parallelism ${r.parallelism}${r.fullSpeed ? ', the input written at full speed' : ''}${r.transactionNaming === 'pooling' ? ', transactional ids from a pool (FLIP-511 POOLING)' : ''}`;
}

/** The seed's three figures of one round (../shared/seeds, section 5): each a count over its base, and the bound. */
export interface SeedFigure {
  figure: string;
  definition: string;
  bound: number;
  count: number;
  of: number;
  rate: number;
  within: boolean;
}

/**
 * The seed's table for a round: duplicate rate (duplicates over the sink's total), loss rate (lost
 * records over the source's total), out-of-order rate (records behind an earlier one of their
 * source partition, over the sink's total), each against its bound. Pure.
 */
export function seedFigures(r: Pick<RoundResult, 'records' | 'received' | 'duplicates' | 'lost' | 'orderViolations'>, bounds: { maxDuplicateRate: number; maxLossRate: number; maxOutOfOrderRate: number }): SeedFigure[] {
  const sinkTotal = r.received + r.duplicates;
  const row = (figure: string, definition: string, bound: number, count: number, of: number): SeedFigure => {
    const rate = of > 0 ? count / of : 0;
    return { figure, definition, bound, count, of, rate, within: of > 0 && rate <= bound };
  };
  return [
    row('duplicate rate', 'duplicated records / records at the sink', bounds.maxDuplicateRate, r.duplicates, sinkTotal),
    row('loss rate', 'records missing at the sink / records written to the source', bounds.maxLossRate, r.lost, r.records),
    row('out-of-order rate', "records whose order differs from the source's / records at the sink", bounds.maxOutOfOrderRate, r.orderViolations, sinkTotal),
  ];
}

const pct = (x: number) => `${(x * 100).toFixed(x === 0 ? 0 : 3)} %`;

/** The seed's table over the seed-protocol rounds, a column per round; empty when there are none. */
function seedTableMarkdown(results: FlinkRoundResult[]): string {
  const rounds = results.filter((r) => r.scenario === 'seed-protocol');
  if (!rounds.length) return '';
  const figs = rounds.map((r) => seedFigures(r, SEED_PROTOCOL.thresholds));
  const head = `| figure | definition | bound | ${rounds.map((r) => `Flink ${r.flinkVersion} #${r.round}`).join(' | ')} |`;
  const rule = `|---|---|---|${rounds.map(() => '---|').join('')}`;
  const rows = figs[0]!.map((f, i) => `| ${f.figure} | ${f.definition} | ${f.bound === 0 ? '0' : `≤ ${pct(f.bound)}`} | ${figs.map((x) => `${pct(x[i]!.rate)} (${x[i]!.count.toLocaleString('en-US')} of ${x[i]!.of.toLocaleString('en-US')})${x[i]!.within ? '' : ' **over**'}`).join(' | ')} |`);
  return `The seed's table (${SEED_PROTOCOL.records.toLocaleString('en-US')} records and ${SEED_PROTOCOL.faultsPerKind * SEED_FAULTS.length} faults in the seed's run):\n\n${[head, rule, ...rows].join('\n')}\n\n`;
}

export function formatFlinkChaosTable(runs: FlinkChaosRun[]): string {
  const results = runs.flatMap((x) => x.results);
  const lines = textTable(FLINK_COLUMNS, results);
  const details = results.map((r) => `${r.scenario} #${r.round} (Flink ${r.flinkVersion}): ${r.faults.join('; ') || 'no fault injected'}\n  eoswatch saw: ${flinkObserved(r)}${r.error ? `\n  error: ${r.error.split('\n')[0]}` : ''}`);
  const passed = runs.every((x) => x.passed);
  return `${flinkHeader(runs)}\n\n${lines.join('\n')}\n\n${FLINK_LEGEND.join('\n')}\n\n${seedTableMarkdown(results)}faults and observations:\n${details.join('\n')}\n\nverdict: ${passed ? 'PASS' : 'FAIL'}\n`;
}

export function formatFlinkChaosMarkdown(runs: FlinkChaosRun[]): string {
  const results = runs.flatMap((x) => x.results);
  const details = results.map((r) => `- **${r.scenario} #${r.round}, Flink ${r.flinkVersion}**: ${r.faults.join('; ') || 'no fault injected'}. eoswatch saw: ${flinkObserved(r)}${r.error ? ` — error: ${r.error.split('\n')[0]}` : ''}`);
  const passed = runs.every((x) => x.passed);
  return `## eoswatch chaos --engine flink\n\n${flinkHeader(runs)}, started ${runs[0]?.startedAt ?? ''}.\n\n${markdownTable(FLINK_COLUMNS, results)}\n\n${FLINK_LEGEND.join(' ')}\n\n${seedTableMarkdown(results)}Faults injected (with the job's committed progress at that moment) and what eoswatch showed:\n\n${details.join('\n')}\n\nVerdict: **${passed ? 'PASS' : 'FAIL'}**\n`;
}

const STREAMS_COLUMNS: [string, (r: StreamsRoundResult) => string][] = [
  ['scenario', (r) => r.scenario],
  ['#', (r) => String(r.round)],
  ...engineRoundColumns<StreamsRoundResult>(),
  ['rebal', (r) => String(r.observed.rebalances)],
  ['timed out', (r) => String(r.observed.transactions.abortedTimeout)],
  ['fenced', (r) => String(r.observed.transactions.fenced)],
  ['time', (r) => `${r.durationSeconds.toFixed(0)} s`],
  ['verdict', (r) => verdictOf(r)],
];

export const STREAMS_LEGEND = [
  '#: round; received: distinct records at the output (read_committed); dup, lost, order: duplicates, lost records and',
  'order violations per input partition (each must be 0, values are checked too); aborted: records of aborted transactions,',
  'seen only by a read_uncommitted pass; outage: longest time from a fault until the app committed progress again;',
  'recovery: end of the last fault until it did; from eoswatch watching the app: LSO held: longest',
  'eos_partition_lso_stuck_seconds of an output partition (after a kill: the killed instance\'s open transaction, until',
  'it is aborted); rebal: rebalances counted (eos_streams_rebalances_total); timed out, fenced: the app\'s transactions',
  'the coordinator aborted on its timeout, or fenced (eos_coordinator_transactions_total). ERROR: the harness could not',
  'run the round (never an exactly-once failure).',
];

/** What eoswatch showed in a Streams round, one line. */
function streamsObserved(r: StreamsRoundResult): string {
  const o = r.observed;
  const parts = lingeringText(o.lingering);
  parts.push(`${o.rebalances} rebalances (longest in progress ${o.rebalanceMaxSeconds.toFixed(1)} s), up to ${o.membersMax} members`);
  const t = o.transactions;
  parts.push(`transactions: ${t.committed} committed, ${t.aborted} aborted, ${t.abortedTimeout} timed out, ${t.fenced} fenced; ${o.fencings} fencings; oldest open ${o.openTransactionAgeMaxSeconds.toFixed(1)} s`);
  parts.push(`largest lag ${o.lagMaxRecords} records`);
  if (o.appDownSeen) parts.push('eos_pipeline_up 0 seen');
  parts.push(o.prometheus ? `alerts fired: ${o.alertsFired.join(', ') || 'none'}${o.alertsPending.length ? `; pending only: ${o.alertsPending.join(', ')}` : ''}` : 'no live Prometheus');
  if (r.missed.length) parts.push(`MISSED: ${r.missed.join('; ')}`);
  return parts.join('; ');
}

function streamsHeader(run: StreamsChaosRun): string {
  return `Kafka ${run.kafkaVersion}, Kafka Streams app (exactly_once_v2, a state store), ${run.instances} instances, ${run.records} records per round, ${run.partitions} partitions`;
}

export function formatStreamsChaosTable(run: StreamsChaosRun): string {
  const details = run.results.map((r) => `${r.scenario} #${r.round}: ${r.faults.join('; ') || 'no fault injected'}\n  eoswatch saw: ${streamsObserved(r)}${r.error ? `\n  error: ${r.error.split('\n')[0]}` : ''}`);
  return `${streamsHeader(run)}\n\n${textTable(STREAMS_COLUMNS, run.results).join('\n')}\n\n${STREAMS_LEGEND.join('\n')}\n\nfaults and observations:\n${details.join('\n')}\n\nverdict: ${runVerdict(run.counts)}: ${summaryLine(run.counts)}\n`;
}

export function formatStreamsChaosMarkdown(run: StreamsChaosRun): string {
  const details = run.results.map((r) => `- **${r.scenario} #${r.round}**: ${r.faults.join('; ') || 'no fault injected'}. eoswatch saw: ${streamsObserved(r)}${r.error ? ` — error: ${r.error.split('\n')[0]}` : ''}`);
  return `## eoswatch chaos --engine streams\n\n${streamsHeader(run)}, started ${run.startedAt}.\n\n${markdownTable(STREAMS_COLUMNS, run.results)}\n\n${STREAMS_LEGEND.join(' ')}\n\nFaults injected (with the app's committed progress at that moment) and what eoswatch showed:\n\n${details.join('\n')}\n\nVerdict: **${runVerdict(run.counts)}: ${summaryLine(run.counts)}**\n`;
}
