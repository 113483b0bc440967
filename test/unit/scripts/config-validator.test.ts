// The configuration schema's validator is compiled ahead of time (config/schema-validator.js, by
// scripts/config-validator.ts); the duration bounds are checked by src/config/load.ts after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DECLARATION, DECLARATION_FILE, GENERATED_FILE, SCHEMA_FILE, configValidatorSource } from '../../../scripts/config-validator.js';
import { validateConfig } from '../../../src/config/load.js';
import { schema } from '../../../src/config/schema.js';
import { formatDuration, parseDuration } from '../../../src/config/duration.js';
import { EosError } from '../../../src/errors.js';

test('config/schema-validator.js is generated from the current config/schema.json (else: npm run gen:validator)', () => {
  assert.equal(readFileSync(GENERATED_FILE, 'utf8'), configValidatorSource(readFileSync(SCHEMA_FILE, 'utf8')));
  assert.equal(readFileSync(DECLARATION_FILE, 'utf8'), DECLARATION);
});

interface Node {
  $ref?: string;
  properties?: Record<string, Node>;
  minDuration?: string;
  maxDuration?: string;
}

/** Every duration setting reachable through properties alone, with its own bounds or the definition's. */
function durationSettings(n: Node, path: string[] = []): { path: string[]; min?: string; max: string }[] {
  if (n.$ref === '#/definitions/duration') return [{ path, ...(n.minDuration ? { min: n.minDuration } : {}), max: n.maxDuration ?? '2147483647ms' }];
  return Object.entries(n.properties ?? {}).flatMap(([k, sub]) => durationSettings(sub, [...path, k]));
}

function problems(data: Record<string, unknown>): string[] {
  try {
    validateConfig(data, 'x.yaml');
    return [];
  } catch (err) {
    return err instanceof EosError ? err.details : [String(err)];
  }
}

function at(path: string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

/** The problem line of a duration out of bounds (ajv's coercion turns the number into the string it shows). */
const bound = (pointer: string, ms: number, expected: string) => `x.yaml: ${pointer}: found "${ms}" (${ms} ms), expected ${expected}`;

test('every duration setting is held to its bounds: one step outside is refused with its own limit, the limit itself passes', () => {
  const settings = durationSettings(schema as Node);
  assert.ok(settings.length >= 25, `found ${settings.length} duration settings`);
  for (const s of settings) {
    const pointer = `/${s.path.join('/')}`;
    const max = parseDuration(s.max);
    const over = problems(at(s.path, max + 1));
    assert.ok(over.some((p) => p === bound(pointer, max + 1, `at most ${formatDuration(max)}`)), `${pointer} above ${s.max}: ${over.join(' | ')}`);
    assert.ok(!problems(at(s.path, max)).some((p) => p.includes(`${pointer}: found`)), `${pointer} at ${s.max}`);
    if (s.min === undefined) continue;
    const min = parseDuration(s.min);
    assert.ok(!problems(at(s.path, min)).some((p) => p.includes(`${pointer}: found`)), `${pointer} at ${s.min}`);
    if (min === 0) continue; // below 0 is not a duration (the schema says so)
    const under = problems(at(s.path, min - 1));
    assert.ok(under.some((p) => p === bound(pointer, min - 1, `at least ${formatDuration(min)}`)), `${pointer} below ${s.min}: ${under.join(' | ')}`);
  }
});

test('a duration that is not one is reported once, by the schema, not as out of bounds', () => {
  const p = problems({ kafka: { healthCheckInterval: 'soon' } });
  assert.deepEqual(p.filter((x) => x.includes('/kafka/healthCheckInterval')), ['x.yaml: /kafka/healthCheckInterval: found "soon", expected a duration: a number of milliseconds or a string like 250ms, 10s, 5m, 1h, 1h30m']);
});
