// Runs every source (each isolated, timed, its failure a finding) and every check (pure, each
// isolated), and assembles the report the metrics, /audit and the CLI show.
import type { AuditFacts, Check, Finding, Severity, SourceStatus } from './types.js';
import { errorMessage } from '../errors.js';
import { withTimeout } from '../util/timeout.js';
import { redactText } from '../redact.js';

export interface AuditSource {
  name: string;
  /** Adds facts; returns problems that did not stop it (a malformed line), each naming file and line. */
  gather(facts: AuditFacts): Promise<string[]>;
}

export interface AuditReport {
  startedAt: string;
  durationMs: number;
  cluster?: { version?: string; brokers: number; topicsAudited: number };
  sources: SourceStatus[];
  findings: Finding[];
  summary: { checks: number; passed: number; critical: number; warning: number; info: number };
}

const SOURCE_CHECK = {
  id: 'audit.source',
  title: 'Configuration source readable',
  rationale: 'A source that cannot be read or parsed is not audited: its settings may hide any of the problems the other checks look for.',
  remediation: 'Fix the file or the connection named in the finding; until then treat that source as unsafe.',
};

export async function runAudit(sources: AuditSource[], checks: Check[], opts: { sourceTimeoutMs?: number } = {}): Promise<AuditReport> {
  const started = Date.now();
  const facts: AuditFacts = { clients: [], checkpoints: [] };
  const statuses: SourceStatus[] = [];
  const findings: Finding[] = [];
  await Promise.all(
    sources.map(async (s) => {
      const t0 = performance.now();
      try {
        const problems = await withTimeout(s.gather(facts), opts.sourceTimeoutMs ?? 30_000, `source ${s.name}`);
        statuses.push({ name: s.name, ok: problems.length === 0, durationMs: performance.now() - t0, ...(problems.length ? { error: problems.join('; ') } : {}) });
      } catch (err) {
        statuses.push({ name: s.name, ok: false, durationMs: performance.now() - t0, error: errorMessage(err) });
      }
    }),
  );
  statuses.sort((a, b) => a.name.localeCompare(b.name));
  for (const st of statuses) {
    findings.push({
      check: SOURCE_CHECK.id,
      title: SOURCE_CHECK.title,
      severity: 'warning',
      source: st.name,
      target: st.name,
      passed: st.ok,
      observed: st.ok ? 'read' : st.error ?? 'failed',
      expected: 'readable and well-formed',
      rationale: SOURCE_CHECK.rationale,
      remediation: SOURCE_CHECK.remediation,
    });
  }
  for (const c of checks) {
    try {
      for (const r of c.evaluate(facts)) {
        findings.push({ ...r, check: c.id, title: c.title, severity: c.severity, source: sourceOfTarget(r.target), rationale: c.rationale, remediation: r.remediation ?? c.remediation });
      }
    } catch (err) {
      findings.push({
        check: c.id,
        title: c.title,
        severity: c.severity,
        source: 'audit',
        target: 'audit',
        passed: false,
        observed: `check failed to run: ${errorMessage(err)}`,
        expected: 'the check runs',
        rationale: c.rationale,
        remediation: c.remediation,
      });
    }
  }
  // Findings quote what they read (a value, a parser's message): the one place they are made safe
  // for every output (table, JSON, Markdown, /audit, metrics labels).
  for (const f of findings) {
    f.observed = redactText(f.observed);
    f.expected = redactText(f.expected);
    f.target = redactText(f.target);
    f.remediation = redactText(f.remediation);
  }
  for (const st of statuses) if (st.error !== undefined) st.error = redactText(st.error);
  const violations = (sev: Severity) => findings.filter((f) => !f.passed && f.severity === sev).length;
  return {
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    ...(facts.cluster
      ? { cluster: { version: facts.cluster.version, brokers: facts.cluster.brokers.length, topicsAudited: facts.cluster.topics.filter((t) => !t.roles.includes('internal')).length } }
      : {}),
    sources: statuses,
    findings,
    summary: { checks: findings.length, passed: findings.filter((f) => f.passed).length, critical: violations('critical'), warning: violations('warning'), info: violations('info') },
  };
}

/** Broker, topic and cluster targets come from the cluster source, coordinator ones from its source; the others name their source. */
function sourceOfTarget(target: string): string {
  if (/^(broker|topic|cluster)[:]?/.test(target)) return 'cluster';
  if (/^coordinator(:|$)/.test(target)) return 'coordinator';
  return target;
}
