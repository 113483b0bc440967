// Audit metrics. eos_audit_check_passed is rebuilt on every run so that a target that is gone
// (a deleted topic, a removed file) does not keep reporting its last state.
import { Gauge, type Registry } from 'prom-client';
import type { AuditReport } from '../audit/runner.js';

export function auditMetrics(registry: Registry) {
  const registers = [registry];
  const m = {
    checkPassed: new Gauge({
      name: 'eos_audit_check_passed',
      help: 'Exactly-once audit result per check and target: 1 pass, 0 violation.',
      labelNames: ['check', 'target', 'severity'],
      registers,
    }),
    findings: new Gauge({
      name: 'eos_audit_findings',
      help: 'Violations found by the last audit, by severity.',
      labelNames: ['severity'],
      registers,
    }),
    lastRun: new Gauge({ name: 'eos_audit_last_run_timestamp_seconds', help: 'Unix time the last audit finished.', registers }),
    duration: new Gauge({ name: 'eos_audit_duration_seconds', help: 'How long the last audit took.', registers }),
    sourceSuccess: new Gauge({
      name: 'eos_audit_source_success',
      help: 'Whether each audit source (cluster, pipeline, files) was read without error in the last run.',
      labelNames: ['source'],
      registers,
    }),
    sourceDuration: new Gauge({
      name: 'eos_audit_source_duration_seconds',
      help: 'How long each audit source took in the last run.',
      labelNames: ['source'],
      registers,
    }),
  };
  return {
    ...m,
    record(report: AuditReport): void {
      m.checkPassed.reset();
      for (const f of report.findings) m.checkPassed.set({ check: f.check, target: f.target, severity: f.severity }, f.passed ? 1 : 0);
      for (const sev of ['critical', 'warning', 'info'] as const) m.findings.set({ severity: sev }, report.summary[sev]);
      m.sourceSuccess.reset();
      m.sourceDuration.reset();
      for (const s of report.sources) {
        m.sourceSuccess.set({ source: s.name }, s.ok ? 1 : 0);
        m.sourceDuration.set({ source: s.name }, s.durationMs / 1000);
      }
      m.duration.set(report.durationMs / 1000);
      m.lastRun.set(Date.now() / 1000);
    },
  };
}
