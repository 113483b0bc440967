// Small helpers shared by check files.
import type { ConfigEntry } from '../types.js';

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
