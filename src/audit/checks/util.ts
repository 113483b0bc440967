// Small helpers shared by check files.
import type { AuditFacts, CheckResult, ClientFacts, ConfigEntry } from '../types.js';

export function describeEntry(name: string, e: ConfigEntry | undefined): string {
  if (!e) return `${name} not reported`;
  const where = e.source === 'default' ? 'default' : e.source === 'static' ? 'server.properties' : e.source === 'unknown' ? 'source unknown' : `dynamic (${e.source === 'dynamic-broker' ? 'per broker' : 'cluster-wide'})`;
  return `${name}=${e.value ?? '(sensitive)'} (${where})`;
}

export function intOf(e: ConfigEntry | undefined): number | undefined {
  if (!e || e.value === null || e.value === '') return undefined;
  const n = Number(e.value);
  return Number.isFinite(n) ? n : undefined;
}

/** `producer:/path`, or the pipeline's own target as it is. */
export function clientTarget(c: ClientFacts): string {
  return c.file.startsWith('pipeline:') ? c.file : `${c.role}:${c.file}`;
}

/** A check's evaluation over every client of one role (optionally narrowed), one result each. */
export function perClient(
  role: ClientFacts['role'],
  evaluate: (c: ClientFacts) => Omit<CheckResult, 'target'>,
  include: (c: ClientFacts) => boolean = () => true,
): (facts: AuditFacts) => CheckResult[] {
  return (facts) => facts.clients.filter((c) => c.role === role && include(c)).map((c) => ({ target: clientTarget(c), ...evaluate(c) }));
}
