// The shipped alert rules and dashboard as data, and the metric names their PromQL references:
// shared by the static contract tests and the live Prometheus test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}
export interface Target {
  expr?: string;
  datasource?: unknown;
  instant?: boolean;
  format?: string;
}
export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: unknown;
  targets?: Target[];
  panels?: Panel[];
  gridPos?: { x: number; y: number; w: number; h: number };
  fieldConfig?: {
    defaults?: { unit?: string; thresholds?: { steps: { value: number | null; color: string }[] } };
  };
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** Metric names referenced by a PromQL expression (Grafana variables allowed). */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ');
  const names: string[] = [];
  for (const m of s.matchAll(/(?<![\w.:])[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = s.slice((m.index ?? 0) + m[0].length);
    if (/^\s*\(/.test(after)) continue; // function or aggregation
    if (PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.push(m[0]);
  }
  return names;
}

export function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

export const RULES_FILE = join(ROOT, 'alerts/eoswatch.rules.yml');
export const DASHBOARD_FILE = join(ROOT, 'dashboards/eoswatch-overview.json');

export function alertRules(): Rule[] {
  return (parse(readFileSync(RULES_FILE, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
}

export function dashboardPanels(): Panel[] {
  return allPanels((JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: Panel[] }).panels);
}

/** Grafana's variables as a Grafana would fill them for "All". */
export function grafanaToPromql(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}/g, '1m')
    .replace(/\$__interval|\$\{__interval\}/g, '15s')
    .replace(/\$__range|\$\{__range\}/g, '5m')
    .replace(/\$\{?(job|instance|pipeline)(:\w+)?\}?/g, '.*');
}
