// The runbook_url mechanism (scripts/alerts-runbook.ts, `npm run alerts:runbook -- <base>`): one
// base for every alert, set in the rules, their Kubernetes copy and the promtool tests together
// (promtool runs the tests on rules rendered with another base: test/integration/alerts.test.ts).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { DEFAULT_RUNBOOK_BASE, RUNBOOK_FILES, baseProblem, runbookBaseOf, setRunbookBase } from '../../../scripts/alerts-runbook.js';

const BASE = 'https://git.example.com/sre/eoswatch/blob/v0.1.0/alerts/RUNBOOK.md';

interface Rules {
  groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[];
}
interface RuleTests {
  tests: { alert_rule_test?: { alertname: string; exp_alerts?: { exp_annotations?: Record<string, string> }[] | null }[] }[];
}

const read = (f: string): string => readFileSync(f, 'utf8');
const render = (base: string): Map<string, string> => new Map(RUNBOOK_FILES.map(({ file, alertKey }) => [file, setRunbookBase(read(file), base, file, alertKey)]));

describe('alerts: runbook_url base', () => {
  test('the shipped files link to the runbook that ships with them, all with one base', () => {
    assert.equal(runbookBaseOf(read('alerts/eoswatch.rules.yml')), DEFAULT_RUNBOOK_BASE);
    for (const { file, alertKey } of RUNBOOK_FILES) {
      const base = runbookBaseOf(read(file));
      assert.equal(base, runbookBaseOf(read(RUNBOOK_FILES[0]!.file)), `${file} uses another base`);
      assert.equal(setRunbookBase(read(file), base!, file, alertKey), read(file), `${file}: a runbook_url is not ${base}#<lowercase alert name>: run \`npm run alerts:runbook -- ${base === DEFAULT_RUNBOOK_BASE ? '--default' : base}\``);
    }
  });

  test('a base sets every alert of every file, and changes nothing else', () => {
    const out = render(BASE);
    const rules = parse(out.get('alerts/eoswatch.rules.yml')!) as Rules;
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
    assert.ok(alerts.length >= 18);
    for (const r of alerts) assert.equal(r.annotations?.runbook_url, `${BASE}#${r.alert!.toLowerCase()}`);
    const k8s = parse(out.get('deploy/kubernetes/alerts/prometheusrule.yaml')!) as { spec: Rules };
    assert.deepEqual(k8s.spec.groups, rules.groups, 'the Kubernetes copy stays equal to the rules');
    const cases = (parse(out.get('alerts/tests/eoswatch.rules.test.yml')!) as RuleTests).tests.flatMap((t) => t.alert_rule_test ?? []);
    const expected = cases.flatMap((c) => (c.exp_alerts ?? []).map((a) => [c.alertname, a.exp_annotations?.runbook_url]));
    assert.ok(expected.length >= alerts.length);
    for (const [name, url] of expected) assert.equal(url, `${BASE}#${name!.toLowerCase()}`);
    // Only runbook_url lines differ, and back to the shipped base gives the shipped text.
    for (const [file, text] of out) {
      const before = read(file).split('\n');
      const after = text.split('\n');
      assert.equal(after.length, before.length);
      for (let i = 0; i < before.length; i++) if (before[i] !== after[i]) assert.match(after[i]!, /^\s*runbook_url: "https:\/\/git\.example\.com\//, `${file}:${i + 1}`);
      const { alertKey } = RUNBOOK_FILES.find((f) => f.file === file)!;
      assert.equal(setRunbookBase(text, runbookBaseOf(read(file))!, file, alertKey), read(file));
    }
  });

  test('a new alert gets its link from its name, whatever its runbook_url said', () => {
    const text = ['      - alert: EosBrokerDown', '        annotations:', '          summary: "x"', '          runbook_url: "TODO"', '      - alert: EosOther', '        annotations:', '          runbook_url: https://old/x#y'].join('\n');
    assert.equal(
      setRunbookBase(text, BASE, 'f.yml', 'alert'),
      ['      - alert: EosBrokerDown', '        annotations:', '          summary: "x"', `          runbook_url: "${BASE}#eosbrokerdown"`, '      - alert: EosOther', '        annotations:', `          runbook_url: "${BASE}#eosother"`].join('\n'),
    );
    assert.throws(() => setRunbookBase('groups:\n  runbook_url: "x"', BASE, 'f.yml', 'alert'), /^Error: f\.yml:2: runbook_url before any alert: name$/);
  });

  test('bases that would break the YAML or the anchor are refused with the reason', () => {
    assert.equal(baseProblem(BASE), undefined);
    assert.equal(baseProblem(DEFAULT_RUNBOOK_BASE), undefined);
    assert.match(baseProblem('https://x/RUNBOOK.md#top')!, /must not contain .*#/);
    assert.match(baseProblem('https://x/a"b')!, /must not contain/);
    assert.match(baseProblem('https://x/a b')!, /must not contain/);
    assert.match(baseProblem('docs/RUNBOOK.md')!, /http:\/\/ or https:\/\/ URL/);
    assert.match(baseProblem('')!, /empty/);
  });
});
