// Config loading: YAML text → ${ENV} expansion → validation against config/schema.json (ajv,
// compiled ahead of time into config/schema-validator.js; defaults filled, unknown keys
// rejected) and of every duration against its minDuration..maxDuration (here, after ajv)
// → durations turned into milliseconds → typed Config. Every problem of a file is reported at
// once, each naming file, line:column, key and what was expected; the parser's own limits (file
// size, aliases, nesting) are configuration errors too. A value that came from the environment or
// sits under a secret key is never quoted back (src/redact.ts). The schema and its durations are
// schema.ts; the rules between keys the schema cannot say, rules.ts.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { ErrorObject } from 'ajv';
import type * as Yaml from 'yaml';
import type { Document, LineCounter } from 'yaml';
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import { REDACTED, isSecretKey, redactText, redactValue } from '../redact.js';
import { expandEnv } from './env.js';
import type { Config } from './types.js';
import { crossFieldProblems } from './rules.js';
import { durationBoundErrors, normalizeDurations, type JsonSchema, type Path } from './schema.js';
// Beside the schema, one level above both src/ and dist/ (config/schema.json: schema.ts).
import { validate } from '../../config/schema-validator.js';

/** Bigger than any configuration needs; a bigger file is refused before it is parsed. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** YAML aliases expanded per document: enough for anchors reused by hand, too few for a "billion laughs" bomb. */
export const MAX_YAML_ALIASES = 100;
/** Nesting of YAML collections: the schema is 4 deep; this stops a deeply nested document from exhausting the stack. */
export const MAX_YAML_DEPTH = 64;
const MAX_FLOW_NESTING = 512;

/**
 * The yaml library, loaded when a file is first parsed: a command run without a configuration
 * file (`verify check`, `status`, `transactions` with -b) validates only the defaults and parses no
 * YAML, and loading the library was about 40 ms of such a command's start-up.
 */
let yamlLibrary: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlLibrary ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

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
  const { isMap, isNode, isScalar } = yaml();
  let node: unknown = path.length ? doc.getIn(path, true) : doc.contents;
  if (keyOf !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === keyOf);
    node = pair?.key;
  }
  if (!isNode(node) || !node.range) return null;
  const { line, col } = lc.linePos(node.range[0]);
  return `${line}:${col}`;
}

/** How a value found in the file is quoted in a message. */
type Display = (path: Path, data: unknown) => string;

const plainDisplay: Display = (path, data) => (path.some((k) => typeof k === 'string' && isSecretKey(k)) ? REDACTED : redactText(show(redactValue(data))));

function describeError(e: ErrorObject, display: Display): { path: Path; key?: string; text: string } {
  const path = parsePointer(e.instancePath);
  const parent = e.parentSchema as JsonSchema | undefined;
  const show = (data: unknown) => display(path, data);
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
    case 'minDuration':
    case 'maxDuration': {
      const ms = (e.params as { ms: number }).ms;
      return { path, text: `found ${show(e.data)} (${ms} ms), expected ${e.message}` };
    }
    default:
      return { path, text: `found ${show(e.data)}, expected a value that ${e.message}` };
  }
}

/** One line per problem; errors inside a oneOf branch are folded into the oneOf's own message. */
export function formatSchemaErrors(errors: ErrorObject[], file: string, doc?: Document, lc?: LineCounter, display: Display = plainDisplay): string[] {
  const oneOfPaths = new Set(errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf').map((e) => e.instancePath));
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    // "must match then": the errors of the then-branch itself say what is missing.
    if (e.keyword === 'if') continue;
    const underOneOf = e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && /\/(oneOf|anyOf)\/\d+\//.test(e.schemaPath);
    if (underOneOf && oneOfPaths.has(e.instancePath)) continue;
    const d = describeError(e, display);
    const pos = positionOf(doc, lc, d.key === undefined ? d.path : d.path.slice(0, -1), d.key) ?? positionOf(doc, lc, d.path.slice(0, -1));
    const line = `${file}${pos ? `:${pos}` : ''}: ${pointer(d.path)}: ${d.text}`;
    if (!seen.has(line)) {
      seen.add(line);
      lines.push(line);
    }
  }
  return lines;
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
    const at = `${file}${pos ? `:${pos}` : ''}`;
    // The path comes after the message: the redaction of every output takes what follows
    // "/kafka/sasl/password: " for a secret value, which would leave the operator "[REDACTED]".
    problems.push(
      p.malformed
        ? `${at}: ${pointer(p.path)}: malformed environment reference: ${p.malformed} (write $\${ for a literal \${)`
        : `${at}: environment variable ${p.variable} is not set, for ${pointer(p.path)} (set it, or give it a default by writing :-default after its name inside the braces)`,
    );
  }
  // A value (partly) from the environment is quoted as written in the file: "${SASL_PW}", not its value.
  const fromEnv = expanded.fromEnv.map(pointer);
  const display: Display = (path, shown) => {
    const p = pointer(path);
    if (fromEnv.some((q) => q === p || q.startsWith(`${p}/`) || p === '(root)')) return `${plainDisplay(path, valueAt(data, path))} (before environment expansion)`;
    return plainDisplay(path, shown);
  };
  const value = expanded.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: expected a mapping of settings at the top level, found ${display([], value)}`);
  }
  preNormalize(value);
  const schemaErrors = [...(validate(value) ? [] : (validate.errors ?? [])), ...durationBoundErrors(value)];
  if (schemaErrors.length) {
    // A place whose variable is unset already has its problem; the empty string it left is not a second one.
    const unset = new Set(expanded.problems.map((p) => pointer(p.path)));
    const errors = schemaErrors.filter((e) => !unset.has(pointer(parsePointer(e.instancePath))));
    problems.push(...formatSchemaErrors(errors, file, doc, lc, display));
  }
  if (problems.length) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: ${problems.length} configuration problem${problems.length > 1 ? 's' : ''}`, {
      details: problems,
    });
  }
  const config = normalizeDurations(value) as Config;
  const semantic = crossFieldProblems(config).map((p) => redactText(`${file}${positionOf(doc, lc, p.path) ? `:${positionOf(doc, lc, p.path)}` : ''}: ${pointer(p.path)}: ${p.text}`));
  if (semantic.length) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: ${semantic.length} configuration problem${semantic.length > 1 ? 's' : ''}`, { details: semantic });
  }
  return config;
}

function valueAt(data: unknown, path: Path): unknown {
  let v = data;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

/** Depth of the deepest collection and the first node that is too deep, without recursion. */
function tooDeep(doc: Document): { node: unknown } | undefined {
  const stack: [unknown, number][] = [[doc.contents, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (!node || typeof node !== 'object' || !('items' in node)) continue;
    if (depth > MAX_YAML_DEPTH) return { node };
    for (const item of (node as { items: unknown[] }).items) {
      if (item && typeof item === 'object' && 'value' in item && 'key' in item) stack.push([(item as { value: unknown }).value, depth + 1], [(item as { key: unknown }).key, depth + 1]);
      else stack.push([item, depth + 1]);
    }
  }
  return undefined;
}

/** YAML text to a plain value, or the problems (syntax, and the parser's limits), each naming file and line. */
export function parseYamlText(text: string, file: string): { data: unknown; doc: Document; lc: LineCounter } {
  const fail = (details: string[]): never => {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: not valid YAML`, { details: details.map(redactText) });
  };
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) fail([`${file}: ${Buffer.byteLength(text)} bytes, expected at most ${MAX_CONFIG_BYTES} (a configuration file this large is a mistake)`]);
  // The parser recurses per flow collection, and hundreds of thousands of `[` exhaust more than
  // the stack: refuse them before parsing (a rough count; no real file comes near it).
  let open = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) open++;
    else if ((c === 0x5d || c === 0x7d) && open > 0) open--;
    if (open > MAX_FLOW_NESTING) fail([`${file}: YAML nested more than ${MAX_FLOW_NESTING} brackets deep`]);
  }
  const { LineCounter, parseDocument } = yaml();
  const lc = new LineCounter();
  let doc: Document;
  try {
    doc = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  } catch (err) {
    // The parser recurses: a pathologically nested document can exhaust the stack before the depth check.
    return fail([`${file}: YAML too deeply nested or too large to parse (${errorMessage(err).split('\n')[0]})`]);
  }
  // The first line only: the yaml library appends the offending source text, which may hold a secret.
  if (doc.errors.length) {
    fail(
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: YAML syntax error: ${e.message.split('\n')[0]}`;
      }),
    );
  }
  const at = (node: unknown): string => {
    const range = (node as { range?: [number, number] } | undefined)?.range;
    if (!range) return '';
    const { line, col } = lc.linePos(range[0]);
    return `:${line}:${col}`;
  };
  const deep = tooDeep(doc);
  if (deep) fail([`${file}${at(deep.node)}: YAML nested more than ${MAX_YAML_DEPTH} levels deep`]);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    // The yaml library's alias limit (a "billion laughs" document) names no place; an alias does.
    let alias: unknown;
    visitAliases(doc, (n) => (alias ??= n));
    fail([`${file}${at(alias)}: YAML aliases expand too much (${errorMessage(err).split('\n')[0]}); expected at most ${MAX_YAML_ALIASES} alias expansions`]);
  }
  return { data, doc, lc };
}

function visitAliases(doc: Document, found: (node: unknown) => void): void {
  const { isAlias } = yaml();
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    if (isAlias(node)) found(node);
    if ('items' in node) for (const item of (node as { items: unknown[] }).items) stack.push(item);
    if ('key' in node) stack.push((node as { key: unknown }).key);
    if ('value' in node && typeof (node as { value: unknown }).value === 'object') stack.push((node as { value: unknown }).value);
  }
}

export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const { data, doc, lc } = parseYamlText(text, file);
  return validateConfig(data, file, env, doc, lc);
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

/** The config with every secret replaced (src/redact.ts: secret keys and secrets inside strings), safe to print or log. */
export function redactConfig(config: Config): Config {
  return redactValue(config) as Config;
}
