// Contracts of the shipped Prometheus alerts, their runbook, their promtool unit tests and the
// Grafana dashboard. promtool itself checks and runs the rules in test/integration/alerts.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { allPanels, metricNames, type Panel, type Rule, type RuleFile } from '../../harness/promql.js';
import { baseProblem, runbookBaseOf } from '../../../scripts/alerts-runbook.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const RULES = 'alerts/eoswatch.rules.yml';
const RULE_TESTS = 'alerts/tests/eoswatch.rules.test.yml';
const RUNBOOK = 'alerts/RUNBOOK.md';
const DASHBOARD = 'dashboards/eoswatch-overview.json';

const ALERTS = [
  'EosTransactionCommitLatencyHigh',
  'EosCheckpointsPendingHigh',
  'EosCheckpointFailing',
  'EosCheckpointStalled',
  'EosPipelineDown',
  'EosPipelineRestarting',
  'EosDuplicatesDetected',
  'EosDataLossDetected',
  'EosConfigAuditCritical',
  'EosHangingTransaction',
  'EosCoordinatorHangingTransaction',
  'EosCoordinatorFencingRepeated',
  'EosCoordinatorUnreadable',
  'EosCoordinatorTransactionsTimedOut',
  // Kafka Streams applications only (the streams: section).
  'EosStreamsRebalanceTooLong',
  'EosProducerFenced',
  'EosConsumerLagHigh',
  'EosConsumerStuck',
  'EosTransactionNearTimeout',
  'EosKafkaUnreachable',
  'EosKafkaBrokerDown',
  'EosExporterDown',
  // Flink jobs only (engine="flink"): the twelve above cover both engines.
  'EosFlinkJobRestarting',
  'EosFlinkRestUnreachable',
];

interface AlertRuleTest {
  eval_time: string;
  alertname: string;
  exp_alerts?: { exp_labels?: Record<string, string>; exp_annotations?: Record<string, string> }[] | null;
}
interface RuleTestFile {
  rule_files: string[];
  tests: { name?: string; alert_rule_test?: AlertRuleTest[] }[];
}
interface TemplateVar {
  name: string;
  type: string;
  query?: string | { query?: string };
  definition?: string;
  datasource?: unknown;
}
interface Dashboard {
  uid: string;
  schemaVersion: number;
  tags: string[];
  templating: { list: TemplateVar[] };
  panels: Panel[];
}

const read = (rel: string): string => readFileSync(join(ROOT, rel), 'utf8');
const rules = (): Rule[] => (parse(read(RULES)) as RuleFile).groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

/** Prometheus duration ("90s", "5m", "1h30m") in seconds. */
function seconds(d: string | undefined): number {
  if (!d) return 0;
  let total = 0;
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1);
  return total;
}

/** GitHub's anchor for a Markdown heading. */
const githubAnchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');


describe('alerts: rule contracts', () => {
  test('the alert set is exactly the contracted names', () => {
    const names = rules().map((r) => r.alert as string);
    assert.equal(new Set(names).size, names.length, `duplicate alert names: ${names.join(', ')}`);
    assert.deepEqual([...names].sort(), [...ALERTS].sort());
  });

  test('every alert has severity, summary, description and a runbook_url into RUNBOOK.md', () => {
    const anchors = new Set(
      read(RUNBOOK)
        .split('\n')
        .filter((l) => l.startsWith('## '))
        .map((l) => githubAnchor(l.slice(3))),
    );
    // One base for every alert (npm run alerts:runbook sets it): the shipped path of the runbook, or an operator's URL.
    const base = runbookBaseOf(read(RULES));
    assert.ok(base !== undefined, `${RULES}: no runbook_url`);
    assert.equal(baseProblem(base), undefined);
    const RUNBOOK_BASE = `${base}#`;
    for (const r of rules()) {
      const name = r.alert as string;
      assert.ok(['critical', 'warning'].includes(r.labels?.severity ?? ''), `${name}: labels.severity must be critical or warning`);
      assert.ok(r.annotations?.summary?.trim(), `${name}: annotations.summary missing`);
      assert.ok(r.annotations?.description?.trim(), `${name}: annotations.description missing`);
      assert.match(r.annotations?.description ?? '', /\{\{\s*\$value/, `${name}: description must show {{ $value }}`);
      const url = r.annotations?.runbook_url ?? '';
      assert.ok(url.startsWith(RUNBOOK_BASE), `${name}: runbook_url must start with ${RUNBOOK_BASE}, got ${url}`);
      const anchor = url.slice(RUNBOOK_BASE.length);
      assert.equal(anchor, name.toLowerCase(), `${name}: runbook anchor`);
      assert.ok(anchors.has(anchor), `${name}: no "## ${name}" heading in ${RUNBOOK} for #${anchor}`);
    }
  });

  test('only eos_* metrics and up are used by the rules', () => {
    for (const r of rules()) {
      for (const m of metricNames(r.expr)) assert.ok(m.startsWith('eos_') || m === 'up', `${r.alert}: unexpected metric ${m}`);
    }
  });
});

describe('alerts: promtool test coverage', () => {
  test('every alert has a firing case and a silent case (at or after its for)', () => {
    const file = parse(read(RULE_TESTS)) as RuleTestFile;
    assert.deepEqual(file.rule_files, ['../eoswatch.rules.yml']);
    const cases = file.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const r of rules()) {
      const name = r.alert as string;
      const mine = cases.filter((c) => c.alertname === name);
      const firing = mine.filter((c) => (c.exp_alerts ?? []).length > 0);
      const silent = mine.filter((c) => (c.exp_alerts ?? []).length === 0 && seconds(c.eval_time) >= seconds(r.for));
      assert.ok(firing.length > 0, `${name}: no firing test case in ${RULE_TESTS}`);
      assert.ok(silent.length > 0, `${name}: no silent test case (exp_alerts: []) at or after its for (${r.for ?? '0s'})`);
      for (const c of firing) {
        assert.ok(seconds(c.eval_time) >= seconds(r.for), `${name}: firing case at ${c.eval_time} is before for ${r.for}`);
        for (const a of c.exp_alerts ?? []) {
          assert.equal(a.exp_labels?.severity, r.labels?.severity, `${name}: firing case must expect labels.severity`);
          for (const k of ['summary', 'description', 'runbook_url']) assert.ok(a.exp_annotations?.[k], `${name}: firing case must expect annotation ${k}`);
        }
      }
    }
  });
});

describe('dashboard: eoswatch-overview', () => {
  const dash = JSON.parse(read(DASHBOARD)) as Dashboard;
  const panels = allPanels(dash.panels);

  test('stable uid, schema version, tags', () => {
    assert.equal(dash.uid, 'eoswatch-overview');
    assert.equal(dash.schemaVersion, 39);
    assert.ok(dash.tags.includes('eoswatch'));
  });

  test('the layout: unique panel ids, rows are rows (a full-width strip), panels do not overlap', () => {
    const ids = panels.map((p) => p.id);
    assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'panel ids used twice (Grafana keeps one of them)');
    for (const p of panels) {
      const g = p.gridPos;
      assert.ok(g, `panel "${p.title}" has a gridPos`);
      if (p.type === 'row') assert.deepEqual({ x: g.x, w: g.w, h: g.h }, { x: 0, w: 24, h: 1 }, `row "${p.title}"`);
      else assert.ok(g.h >= 3 && g.x + g.w <= 24, `panel "${p.title}" (${p.type}) at ${JSON.stringify(g)}: too flat for a panel, or past the right edge`);
    }
    const overlaps: string[] = [];
    for (const [i, a] of panels.entries())
      for (const b of panels.slice(i + 1)) {
        const [g, h] = [a.gridPos!, b.gridPos!];
        if (g.x < h.x + h.w && h.x < g.x + g.w && g.y < h.y + h.h && h.y < g.y + g.h) overlaps.push(`"${a.title}" and "${b.title}"`);
      }
    assert.deepEqual(overlaps, []);
  });

  test('datasource, job, instance and pipeline variables', () => {
    const vars = new Map(dash.templating.list.map((v) => [v.name, v]));
    const ds = vars.get('datasource');
    assert.equal(ds?.type, 'datasource');
    assert.equal(ds?.query, 'prometheus');
    for (const name of ['job', 'instance', 'pipeline']) {
      const v = vars.get(name);
      assert.equal(v?.type, 'query', `variable ${name}`);
      const q = typeof v?.query === 'string' ? v.query : v?.query?.query;
      assert.match(q ?? '', /^label_values\(/, `variable ${name} must use label_values`);
      assert.match(q ?? '', new RegExp(`,\\s*${name}\\)$`), `variable ${name} must list the ${name} label`);
    }
  });

  test('no hard-coded datasource uid anywhere', () => {
    const bad: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}[${i}]`));
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === 'datasource') {
            const uid = typeof v === 'string' ? v : (v as { uid?: string } | null)?.uid;
            if (uid !== undefined && uid !== '${datasource}') bad.push(`${path}.datasource = ${JSON.stringify(v)}`);
          }
          walk(v, `${path}.${k}`);
        }
      }
    };
    walk(dash.panels, 'panels');
    walk(dash.templating.list, 'templating');
    assert.deepEqual(bad, []);
    for (const p of panels.filter((p) => p.type !== 'row' && p.type !== 'text')) {
      assert.ok(p.datasource, `panel "${p.title}" must use \${datasource}`);
    }
  });

  test('every panel has a unit and only queries eos_* metrics and up', () => {
    for (const p of panels) {
      if (p.type === 'row' || p.type === 'text') continue;
      assert.ok(p.fieldConfig?.defaults?.unit, `panel "${p.title}" has no fieldConfig.defaults.unit`);
      assert.ok((p.targets ?? []).length > 0, `panel "${p.title}" has no targets`);
      for (const t of p.targets ?? []) {
        assert.ok(t.expr, `panel "${p.title}" has a target without expr`);
        const names = metricNames(t.expr ?? '');
        assert.ok(names.length > 0, `panel "${p.title}": no metric in ${t.expr}`);
        for (const m of names) assert.ok(m.startsWith('eos_') || m === 'up', `panel "${p.title}": unexpected metric ${m} in ${t.expr}`);
      }
    }
  });

  test('the panels the alerts rely on are present', () => {
    const exprs = (pred: (p: Panel) => boolean): string => panels.filter(pred).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? '')).join('\n');
    const all = exprs(() => true);
    for (const m of [
      'eos_kafka_transaction_commit_latency_seconds_bucket',
      'eos_checkpoint_duration_seconds_bucket',
      'eos_checkpoints_pending',
      'eos_checkpoints_total',
      'eos_transactions_total',
      'eos_pipeline_records_total',
      'eos_partition_lso_lag_records',
      'eos_canary_records_total',
      'eos_canary_end_to_end_latency_seconds_bucket',
      'eos_audit_check_passed',
      'eos_kafka_up',
    ]) {
      assert.ok(all.includes(m), `no panel queries ${m}`);
    }
    assert.match(exprs((p) => p.type === 'heatmap'), /eos_kafka_transaction_commit_latency_seconds_bucket/);
    const audit = panels.find((p) => p.type === 'table' && (p.targets ?? []).some((t) => /eos_audit_check_passed.*==\s*0/.test(t.expr ?? '')));
    assert.ok(audit, 'audit findings table (eos_audit_check_passed == 0)');
    assert.ok(audit.targets?.every((t) => t.instant === true && t.format === 'table'), 'audit table targets must be instant tables');
    for (const m of [/^up\{/, /^eos_kafka_up\{/]) {
      assert.ok(panels.some((p) => p.type === 'stat' && (p.targets ?? []).some((t) => m.test(t.expr ?? ''))), `stat panel for ${m}`);
    }
  });

  test('pending checkpoints threshold equals the alert threshold (1)', () => {
    const pending = panels.filter((p) => (p.targets ?? []).some((t) => /eos_checkpoints_pending/.test(t.expr ?? '')));
    assert.equal(pending.length, 1, 'exactly one pending-checkpoints panel');
    const steps = (pending[0]?.fieldConfig?.defaults?.thresholds?.steps ?? []).filter((s) => s.value !== null);
    assert.deepEqual(
      steps.map((s) => s.value),
      [1],
    );
    const rule = rules().find((r) => r.alert === 'EosCheckpointsPendingHigh');
    assert.match(rule?.expr ?? '', /eos_checkpoints_pending\s*>\s*1\b/);
  });
});
