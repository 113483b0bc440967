// Config loading: YAML text → ${ENV} expansion → ajv validation against config/schema.json
// (defaults filled, unknown keys rejected) → durations turned into milliseconds → typed Config.
// Every problem of a file is reported at once, each naming file, line:column, key and what was
// expected.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, isMap, isNode, isScalar, parseDocument, type Document } from 'yaml';
import cron from 'node-cron';
import { EosError, ErrorCodes } from '../errors.js';
import { parseDuration } from './duration.js';
import { expandEnv } from './env.js';
import type { Config } from './types.js';

export const schemaPath = new URL('../../config/schema.json', import.meta.url);
export const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as JsonSchema;

interface JsonSchema {
  type?: string | string[];
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  definitions?: Record<string, JsonSchema>;
  description?: string;
  [k: string]: unknown;
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: 'array', verbose: true, strict: true, strictRequired: false });
// Bounds of a duration, in ms: checked after the duration is parsed (durationBoundProblems).
ajv.addKeyword({ keyword: 'minimumMs', schemaType: 'number' });
ajv.addKeyword({ keyword: 'maximumMs', schemaType: 'number' });
const validate = ajv.compile(schema);

type Path = (string | number)[];

function pointer(path: Path): string {
  return path.length ? '/' + path.join('/') : '(root)';
}

function parsePointer(p: string): Path {
  if (!p) return [];
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^[0-9]+$/.test(s) ? Number(s) : s));
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Position of a key path in the YAML document as "line:col", or null when it is not in the file (a default). */
function positionOf(doc: Document | undefined, lc: LineCounter | undefined, path: Path, keyOf?: string): string | null {
  if (!doc || !lc) return null;
  let node: unknown = path.length ? doc.getIn(path, true) : doc.contents;
  if (keyOf !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === keyOf);
    node = pair?.key;
  }
  if (!isNode(node) || !node.range) return null;
  const { line, col } = lc.linePos(node.range[0]);
  return `${line}:${col}`;
}

function describeError(e: ErrorObject): { path: Path; key?: string; text: string } {
  const path = parsePointer(e.instancePath);
  const parent = e.parentSchema as JsonSchema | undefined;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      const allowed = Object.keys(parent?.properties ?? {}).join(', ');
      return { path: [...path, key], key, text: `unknown key "${key}"; expected one of: ${allowed}` };
    }
    case 'required': {
      const key = (e.params as { missingProperty: string }).missingProperty;
      return { path: [...path, key], text: `missing required key "${key}"` };
    }
    case 'type':
      return { path, text: `found ${show(e.data)}, expected ${(e.params as { type: string }).type}` };
    case 'enum':
      return { path, text: `found ${show(e.data)}, expected one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` };
    case 'oneOf':
    case 'anyOf':
      return { path, text: `found ${show(e.data)}, expected ${parent?.description ?? e.message}` };
    case 'pattern':
      return { path, text: `found ${show(e.data)}, expected ${parent?.description ?? `a string matching ${e.schema}`}` };
    case 'minLength':
      return { path, text: `found ${show(e.data)}, expected at least ${e.schema} character${e.schema === 1 ? '' : 's'}` };
    case 'minItems':
      return { path, text: `found ${show(e.data)}, expected at least ${e.schema} item${e.schema === 1 ? '' : 's'}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, text: `found ${show(e.data)}, expected a number ${(e.params as { comparison: string }).comparison} ${e.schema}` };
    default:
      return { path, text: `found ${show(e.data)}, expected a value that ${e.message}` };
  }
}

/** One line per problem; errors inside a oneOf branch are folded into the oneOf's own message. */
export function formatSchemaErrors(errors: ErrorObject[], file: string, doc?: Document, lc?: LineCounter): string[] {
  const oneOfPaths = new Set(errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf').map((e) => e.instancePath));
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    // "must match then": the errors of the then-branch itself say what is missing.
    if (e.keyword === 'if') continue;
    const underOneOf = e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && /\/(oneOf|anyOf)\/\d+\//.test(e.schemaPath);
    if (underOneOf && oneOfPaths.has(e.instancePath)) continue;
    const d = describeError(e);
    const pos = positionOf(doc, lc, d.key === undefined ? d.path : d.path.slice(0, -1), d.key) ?? positionOf(doc, lc, d.path.slice(0, -1));
    const line = `${file}${pos ? `:${pos}` : ''}: ${pointer(d.path)}: ${d.text}`;
    if (!seen.has(line)) {
      seen.add(line);
      lines.push(line);
    }
  }
  return lines;
}

function resolveRef(s: JsonSchema): JsonSchema {
  if (s.$ref?.startsWith('#/definitions/')) return schema.definitions?.[s.$ref.slice('#/definitions/'.length)] ?? s;
  return s;
}

/** Converts every value whose schema is the duration definition into milliseconds, in place. */
function normalizeDurations(value: unknown, s: JsonSchema): unknown {
  if (s.$ref === '#/definitions/duration') return parseDuration(value as string | number);
  const r = resolveRef(s);
  if (Array.isArray(value) && r.items) return value.map((v) => normalizeDurations(v, r.items!));
  if (value && typeof value === 'object' && r.properties) {
    const obj = value as Record<string, unknown>;
    for (const [k, sub] of Object.entries(r.properties)) {
      if (obj[k] !== undefined) obj[k] = normalizeDurations(obj[k], sub);
    }
  }
  return value;
}

/** Durations (already in ms) outside their schema's minimumMs/maximumMs. */
function durationBoundProblems(value: unknown, s: JsonSchema, path: Path = []): { path: Path; text: string }[] {
  if (s.$ref === '#/definitions/duration') {
    const ms = value as number;
    const min = s.minimumMs as number | undefined;
    const max = s.maximumMs as number | undefined;
    if ((min !== undefined && ms < min) || (max !== undefined && ms > max)) return [{ path, text: `found ${ms} ms, expected a duration from ${min ?? 0} ms to ${max ?? 2147483647} ms` }];
    return [];
  }
  const r = resolveRef(s);
  if (!value || typeof value !== 'object' || Array.isArray(value) || !r.properties) return [];
  const obj = value as Record<string, unknown>;
  return Object.entries(r.properties).flatMap(([k, sub]) => (obj[k] === undefined ? [] : durationBoundProblems(obj[k], sub, [...path, k])));
}

/** Shapes the schema accepts for convenience, brought to their canonical form before validation. */
function preNormalize(data: unknown): void {
  const kafka = (data as { kafka?: { brokers?: unknown } } | null)?.kafka;
  if (kafka && typeof kafka.brokers === 'string') {
    kafka.brokers = kafka.brokers
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
  }
}

/** Validates an already parsed document (e.g. built in code or by tests). */
export function validateConfig(
  data: unknown,
  file = '(config)',
  env: NodeJS.ProcessEnv = process.env,
  doc?: Document,
  lc?: LineCounter,
): Config {
  const problems: string[] = [];
  const expanded = expandEnv(data ?? {}, env);
  for (const p of expanded.problems) {
    const pos = positionOf(doc, lc, p.path);
    problems.push(`${file}${pos ? `:${pos}` : ''}: ${pointer(p.path)}: environment variable ${p.variable} is not set (use \${${p.variable}:-default} for a default)`);
  }
  const value = expanded.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: expected a mapping of settings at the top level, found ${show(value)}`);
  }
  preNormalize(value);
  if (!validate(value)) {
    // A place whose variable is unset already has its problem; the empty string it left is not a second one.
    const unset = new Set(expanded.problems.map((p) => pointer(p.path)));
    const errors = (validate.errors ?? []).filter((e) => !unset.has(pointer(parsePointer(e.instancePath))));
    problems.push(...formatSchemaErrors(errors, file, doc, lc));
  }
  if (problems.length) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: ${problems.length} configuration problem${problems.length > 1 ? 's' : ''}`, {
      details: problems,
    });
  }
  const config = normalizeDurations(value, schema) as Config;
  const semantic = [...durationBoundProblems(config, schema), ...crossFieldProblems(config)].map((p) => `${file}${positionOf(doc, lc, p.path) ? `:${positionOf(doc, lc, p.path)}` : ''}: ${pointer(p.path)}: ${p.text}`);
  if (semantic.length) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: ${semantic.length} configuration problem${semantic.length > 1 ? 's' : ''}`, { details: semantic });
  }
  return config;
}

/** Rules between keys that a JSON schema cannot say. */
export function crossFieldProblems(c: Config): { path: Path; text: string }[] {
  const out: { path: Path; text: string }[] = [];
  const p = c.pipeline;
  if (p.enabled) {
    if (p.checkpoint.timeout >= p.transactionTimeout) {
      out.push({
        path: ['pipeline', 'checkpoint', 'timeout'],
        text: `found ${p.checkpoint.timeout} ms, expected less than pipeline.transactionTimeout (${p.transactionTimeout} ms): the broker would abort a transaction the checkpoint still waits for`,
      });
    }
    if (p.heartbeatInterval * 3 > p.sessionTimeout) {
      out.push({ path: ['pipeline', 'heartbeatInterval'], text: `found ${p.heartbeatInterval} ms, expected at most a third of pipeline.sessionTimeout (${p.sessionTimeout} ms)` });
    }
    if (p.sourceTopic === p.sinkTopic) out.push({ path: ['pipeline', 'sinkTopic'], text: `found "${p.sinkTopic}", expected a topic other than sourceTopic` });
  }
  if (c.canary.enabled && !p.enabled) {
    for (const k of ['sourceTopic', 'sinkTopic'] as const) {
      if (!c.canary[k]) out.push({ path: ['canary', k], text: `missing: expected a topic (without pipeline.enabled there is no pipeline topic to default to)` });
    }
  }
  if (c.audit.enabled && !cron.validate(c.audit.schedule)) {
    out.push({ path: ['audit', 'schedule'], text: `found "${c.audit.schedule}", expected a cron expression of 5 or 6 fields, e.g. "*/5 * * * *"` });
  }
  return out;
}

export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const details = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: YAML syntax error: ${e.message.split('\n')[0]}`;
    });
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: not valid YAML`, { details });
  }
  return validateConfig(doc.toJS(), file, env, doc, lc);
}

export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : String(err);
    throw new EosError(ErrorCodes.CONFIG_NOT_FOUND, `${file}: cannot read configuration file: ${why}`, { cause: err });
  }
  return parseConfigText(text, file, env);
}

/** The config with every secret replaced, safe to print or log. */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config);
  if (copy.kafka.sasl) copy.kafka.sasl.password = '[REDACTED]';
  if (copy.kafka.ssl.passphrase) copy.kafka.ssl.passphrase = '[REDACTED]';
  return copy;
}
