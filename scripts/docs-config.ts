// npm run docs:config — regenerates docs/configuration.md from config/schema.json: every key with
// its type, default, bounds and description, one table per section (nested sections get tables of
// their own). test/unit/docs/reference.test.ts fails when the committed file differs.
import { readFileSync, writeFileSync } from 'node:fs';

export const SCHEMA_FILE = 'config/schema.json';
export const CONFIG_DOC = 'docs/configuration.md';

interface Node {
  description?: string;
  type?: string | string[];
  $ref?: string;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, Node>;
  items?: Node;
  required?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  pattern?: string;
  minDuration?: string;
  maxDuration?: string;
  if?: { properties?: Record<string, { const?: unknown }> };
  then?: { required?: string[]; properties?: Record<string, Node> };
  else?: { required?: string[] };
  definitions?: Record<string, Node>;
}

/** Text for one table cell: one line, pipes escaped. */
const cell = (s: string): string => s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();
const code = (s: string): string => `\`${s.replace(/`/g, "'")}\``;

const isObject = (n: Node): boolean => n.type === 'object' || n.properties !== undefined;
const isObjectList = (n: Node): boolean => n.type === 'array' && n.items !== undefined && isObject(n.items);

function typeOf(n: Node): string {
  if (n.$ref === '#/definitions/duration') return 'duration';
  if (n.enum) return 'one of ' + n.enum.map((v) => code(JSON.stringify(v))).join(', ');
  if (n.type === 'array') return n.items && isObject(n.items) ? 'list of items' : `list of ${n.items ? typeOf(n.items) : 'values'}`;
  if (isObject(n)) return 'section';
  return Array.isArray(n.type) ? n.type.join(' or ') : (n.type ?? 'value');
}

function defaultOf(n: Node): string {
  if (n.default === undefined) return '';
  if (isObject(n) && !isObjectList(n)) return '';
  return code(typeof n.default === 'string' ? n.default : JSON.stringify(n.default));
}

function boundsOf(n: Node, required: boolean, requiredWhen: string | undefined, durationMax: string | undefined): string {
  const b: string[] = [];
  if (required) b.push('**required**');
  if (requiredWhen) b.push(`**required** when ${requiredWhen}`);
  if (n.$ref === '#/definitions/duration') {
    if (n.minDuration) b.push(`≥ ${n.minDuration}`);
    b.push(`≤ ${n.maxDuration ?? durationMax ?? '?'}`);
  }
  if (n.minimum !== undefined) b.push(`≥ ${n.minimum}`);
  if (n.exclusiveMinimum !== undefined) b.push(`> ${n.exclusiveMinimum}`);
  if (n.maximum !== undefined) b.push(`≤ ${n.maximum}`);
  if (n.minLength !== undefined && n.minLength > 0) b.push(n.minLength === 1 ? 'not empty' : `at least ${n.minLength} characters`);
  if (n.minItems !== undefined) b.push(`at least ${n.minItems} item${n.minItems === 1 ? '' : 's'}`);
  if (n.pattern) b.push(`matches ${code(n.pattern)}`);
  const items = n.items;
  if (items && !isObject(items)) {
    if (items.minLength !== undefined && items.minLength > 0) b.push('items not empty');
    if (items.pattern) b.push(`items match ${code(items.pattern)}`);
  }
  return b.join(', ');
}

/** `enabled: true` as the condition of an if/then, for the keys it requires (negated: of the else, for its keys). */
function condition(n: Node, negated = false): string | undefined {
  const props = n.if?.properties;
  if (!props) return undefined;
  return Object.entries(props)
    .map(([k, v]) => `${code(k)} is ${negated ? 'not ' : ''}${code(JSON.stringify(v.const))}`)
    .join(negated ? ' or ' : ' and ');
}

interface Section {
  path: string;
  node: Node;
}

function sectionTable(path: string, n: Node, durationMax: string | undefined, nested: Section[]): string[] {
  const out: string[] = [];
  const when = condition(n);
  const otherwise = condition(n, true);
  const conditionalElse = new Set(n.else?.required ?? []);
  const conditional = new Set([...(n.then?.required ?? []), ...Object.entries(n.then?.properties ?? {}).filter(([, p]) => p.minItems !== undefined).map(([k]) => k)]);
  const required = new Set(n.required ?? []);
  out.push('| key | type | default | bounds | description |', '|---|---|---|---|---|');
  for (const [key, p] of Object.entries(n.properties ?? {})) {
    const full = `${path}.${key}`;
    let description = p.description ?? '';
    if (isObjectList(p)) {
      nested.push({ path: `${full}[]`, node: p.items! });
      description += ` Each item: see [${code(full + '[]')}](#${anchor(full + '[]')}).`;
    } else if (isObject(p)) {
      nested.push({ path: full, node: p });
      description += ` See [${code(full)}](#${anchor(full)}).`;
    }
    const bounds = boundsOf(p, required.has(key), conditional.has(key) ? when : conditionalElse.has(key) ? otherwise : undefined, durationMax);
    out.push(`| ${code(key)} | ${cell(typeOf(p))} | ${cell(defaultOf(p))} | ${cell(bounds)} | ${cell(description)} |`);
  }
  return out;
}

/** GitHub's anchor of a heading made of one code span. */
function anchor(path: string): string {
  return path.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

export function renderConfigReference(schemaText: string): string {
  const schema = JSON.parse(schemaText) as Node;
  const durationMax = schema.definitions?.duration?.maxDuration;
  const out: string[] = [
    '# Configuration reference',
    '',
    `<!-- Generated from ${SCHEMA_FILE} by \`npm run docs:config\` (scripts/docs-config.ts); do not edit by hand. -->`,
    '',
    `Every key of eoswatch's YAML configuration file, as [\`${SCHEMA_FILE}\`](../${SCHEMA_FILE}) defines it: type, default,`,
    'bounds and description, one table per section and per nested section. Unknown keys are',
    'rejected; a key left out takes its default. How the file is read (durations, `${ENV_VAR}`',
    'substitution, parser limits, error messages, secrets, the rules between keys) is in the',
    '[operator guide](operator-guide.md#the-configuration-file); a commented example of every section is',
    '[`config/eoswatch.example.yaml`](../config/eoswatch.example.yaml). Check a file with',
    '`eoswatch config validate -c <file>` (`--print` shows it with every default filled in, secrets redacted).',
    '',
    `A **duration** is a number of milliseconds or a string such as \`250ms\`, \`10s\`, \`5m\`, \`1h30m\`; every`,
    `duration has the bounds its row names (none above ${durationMax ?? '2147483647ms'}).`,
    '',
    '## Sections',
    '',
    '| section | what it configures |',
    '|---|---|',
  ];
  for (const [key, p] of Object.entries(schema.properties ?? {})) out.push(`| [${code(key)}](#${anchor(key)}) | ${cell(p.description ?? '')} |`);
  for (const [key, p] of Object.entries(schema.properties ?? {})) {
    const queue: Section[] = [{ path: key, node: p }];
    while (queue.length > 0) {
      const { path, node } = queue.shift()!;
      const nested: Section[] = [];
      out.push('', `${path.includes('.') ? '###' : '##'} ${code(path)}`, '');
      if (node.description) out.push(cell(node.description), '');
      out.push(...sectionTable(path, node, durationMax, nested));
      queue.unshift(...nested);
    }
  }
  return out.join('\n') + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(CONFIG_DOC, renderConfigReference(readFileSync(SCHEMA_FILE, 'utf8')));
  process.stdout.write(`${CONFIG_DOC} written from ${SCHEMA_FILE}\n`);
}
