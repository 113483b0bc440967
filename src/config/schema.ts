// The configuration's JSON schema (config/schema.json), refused when its generated validator
// (config/schema-validator.js, `npm run gen:validator`) was made from another text, and the
// durations it declares: each duration setting's minDuration..maxDuration (a bound JSON schema
// cannot check on "100ms" and "24h"), reported in ajv's shape, and every duration turned into
// milliseconds. Pure but for reading the schema once at load.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { formatDuration, parseDuration } from './duration.js';
// Beside the schema, one level above both src/ and dist/ (as schemaPath below).
import { schemaSha256 as generatedFrom } from '../../config/schema-validator.js';

/** A path of keys and indexes into a configuration document. */
export type Path = (string | number)[];

export const schemaPath = new URL('../../config/schema.json', import.meta.url);
const schemaText = readFileSync(schemaPath, 'utf8');
export const schema = JSON.parse(schemaText) as JsonSchema;
if (createHash('sha256').update(schemaText).digest('hex') !== generatedFrom) {
  throw new Error(`${schemaPath.pathname} has changed since config/schema-validator.js was generated from it: run \`npm run gen:validator\``);
}

export interface JsonSchema {
  type?: string | string[];
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  definitions?: Record<string, JsonSchema>;
  description?: string;
  [k: string]: unknown;
}

/** Milliseconds of a duration value, or undefined when it is not a duration (the schema reports that). */
function durationMs(data: unknown): number | undefined {
  if (typeof data !== 'string' && typeof data !== 'number') return undefined;
  try {
    return parseDuration(data);
  } catch {
    return undefined;
  }
}

const DURATION_BOUNDS = [
  ['minDuration', (ms: number, limit: number) => ms >= limit, 'at least'],
  ['maxDuration', (ms: number, limit: number) => ms <= limit, 'at most'],
] as const;

/**
 * minDuration / maxDuration: the bounds of every duration setting in `value` (after validation:
 * defaults filled), written as durations ("100ms", "24h"). A setting's own bound takes the place of
 * the duration definition's general one (2147483647 ms, node's timer limit). Errors in ajv's shape,
 * reported with ajv's own.
 */
export function durationBoundErrors(value: unknown): ErrorObject[] {
  const out: ErrorObject[] = [];
  const definition = resolveRef({ $ref: '#/definitions/duration' });
  mapDurations(value, schema, (v, s, path) => {
    const ms = durationMs(v);
    if (ms === undefined) return v;
    for (const [keyword, ok, word] of DURATION_BOUNDS) {
      const limitText = (s[keyword] ?? definition[keyword]) as string | undefined;
      if (limitText === undefined) continue;
      const limit = parseDuration(limitText);
      if (ok(ms, limit)) continue;
      const instancePath = path.map((k) => `/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
      out.push({ keyword, instancePath, schemaPath: `#${instancePath}/${keyword}`, params: { limit, ms }, message: `${word} ${formatDuration(limit)}`, data: v });
    }
    return v;
  });
  return out;
}

function resolveRef(s: JsonSchema): JsonSchema {
  if (s.$ref?.startsWith('#/definitions/')) return schema.definitions?.[s.$ref.slice('#/definitions/'.length)] ?? s;
  return s;
}

/**
 * Calls `visit` for every value in `value` whose schema is the duration definition (through
 * properties and items: where the schema puts durations), with the schema node that refers to it
 * (its own bounds) and its path; a value `visit` returns takes the duration's place, in place.
 */
function mapDurations(value: unknown, s: JsonSchema, visit: (v: unknown, s: JsonSchema, path: Path) => unknown, path: Path = []): unknown {
  if (s.$ref === '#/definitions/duration') return visit(value, s, path);
  const r = resolveRef(s);
  if (Array.isArray(value) && r.items) return value.map((v, i) => mapDurations(v, r.items!, visit, [...path, i]));
  if (value && typeof value === 'object' && r.properties) {
    const obj = value as Record<string, unknown>;
    for (const [k, sub] of Object.entries(r.properties)) {
      if (obj[k] !== undefined) obj[k] = mapDurations(obj[k], sub, visit, [...path, k]);
    }
  }
  return value;
}

/** Converts every duration into milliseconds, in place. */
export function normalizeDurations(value: unknown): unknown {
  return mapDurations(value, schema, (v) => parseDuration(v as string | number));
}
