// The generated references: docs/configuration.md (from config/schema.json, `npm run docs:config`)
// and docs/metrics.md (from the metric definitions in src/, `npm run docs:metrics`) must be what
// their generators write now, and cover every key and every metric.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_DOC, SCHEMA_FILE, renderConfigReference } from '../../../scripts/docs-config.js';
import { DEFINITIONS, METRICS_DOC, metricFamilies, renderMetricsReference } from '../../../scripts/docs-metrics.js';
import { createRegistry } from '../../../src/metrics/registry.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** Every key path of the schema: `kafka.ssl.caFile`, `flink.sinks[].job`. */
function keyPaths(n: SchemaNode, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, p] of Object.entries(n.properties ?? {})) {
    const path = prefix ? `${prefix}.${k}` : k;
    out.push(path, ...keyPaths(p, path));
    if (p.items?.properties) out.push(...keyPaths(p.items, `${path}[]`));
  }
  return out;
}

/** The keys of the table under each `## \`section\`` / `### \`section\`` heading of the configuration reference. */
function documentedKeys(doc: string): Set<string> {
  const keys = new Set<string>();
  let section: string | undefined;
  for (const line of doc.split('\n')) {
    const h = /^#{2,3} `([^`]+)`$/.exec(line);
    if (h) section = h[1];
    const row = /^\| `([^`]+)` \|/.exec(line);
    if (row && section) keys.add(`${section}.${row[1]}`);
    if (h && !h[1]!.includes('.')) keys.add(h[1]!);
  }
  return keys;
}

describe('docs/configuration.md', () => {
  test('is generated from config/schema.json (npm run docs:config)', () => {
    const want = renderConfigReference(readFileSync(SCHEMA_FILE, 'utf8'));
    assert.ok(readFileSync(CONFIG_DOC, 'utf8') === want, `${CONFIG_DOC} is out of date with ${SCHEMA_FILE}: run \`npm run docs:config\` and commit the result`);
  });

  test('every key of the schema has a row, with its section', () => {
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as SchemaNode;
    const documented = documentedKeys(renderConfigReference(readFileSync(SCHEMA_FILE, 'utf8')));
    const paths = keyPaths(schema);
    assert.ok(paths.length > 100, `only ${paths.length} keys found in the schema`);
    for (const p of paths) assert.ok(documented.has(p), `${p} has no row in ${CONFIG_DOC}`);
  });

  test('rows say type, default and bounds (checked on keys whose values are known)', () => {
    const doc = renderConfigReference(readFileSync(SCHEMA_FILE, 'utf8'));
    const section = (name: string): string => doc.split(`\n## \`${name}\`\n`)[1]!.split('\n## ')[0]!;
    assert.match(section('http'), /^\| `port` \| integer \| `7395` \| ≥ 0, ≤ 65535 \| TCP port\./m);
    assert.match(section('kafka'), /^\| `brokers` \| list of string \| `\["127\.0\.0\.1:9092"\]` \| at least 1 item, items match /m);
    assert.match(section('kafka'), /^\| `healthCheckInterval` \| duration \| `15s` \| ≥ 100ms, ≤ 24h \| /m);
    // Required keys: always (sasl.mechanism), only when the section is enabled (pipeline.sourceTopic),
    // and the else of an if/then (sasl.username unless the mechanism is oauthbearer).
    assert.match(doc, /^\| `mechanism` \| one of .* \| {2}\| \*\*required\*\* \| SASL mechanism\./m);
    assert.match(doc, /^\| `username` \| string \| {2}\| \*\*required\*\* when `mechanism` is not `"oauthbearer"`, not empty \| SASL user name\. \|$/m);
    assert.match(doc, /^\| `tokenFile` \| string \| {2}\| \*\*required\*\* when `mechanism` is `"oauthbearer"`, not empty \| /m);
    assert.match(section('pipeline'), /^\| `sourceTopic` \| string \| {2}\| \*\*required\*\* when `enabled` is `true`/m);
  });
});

describe('docs/metrics.md', () => {
  test('is generated from the metric definitions (npm run docs:metrics)', () => {
    const want = renderMetricsReference(metricFamilies());
    assert.ok(readFileSync(METRICS_DOC, 'utf8') === want, `${METRICS_DOC} is out of date with the metric definitions in src/: run \`npm run docs:metrics\` and commit the result`);
  });

  test('every eos_* metric named in src/ is a family of the reference (a new module goes into DEFINITIONS of scripts/docs-metrics.ts)', () => {
    const families = new Map(metricFamilies().map((f) => [f.name, f]));
    const named = new Map<string, string>();
    for (const file of sourceFiles('src')) {
      for (const m of readFileSync(file, 'utf8').matchAll(/name: '(eos_[a-z0-9_]+)'/g)) named.set(m[1]!, file);
    }
    assert.ok(named.size >= 50, `only ${named.size} metric names found in src/`);
    for (const [name, file] of named) assert.ok(families.has(name), `${name} (${file}) is not in ${METRICS_DOC}: export a define...Metrics(registry) beside it and add it to DEFINITIONS in scripts/docs-metrics.ts`);
    assert.equal(families.size, named.size);
  });

  test('every metric module defines into one registry, as the daemon does, with no name taken twice', () => {
    // Each family of the reference is registered once; a second module defining a taken name
    // (eos_transactions_total was, by the pipeline and the transactions service) throws here.
    const one = createRegistry();
    for (const d of DEFINITIONS) d.define(one);
    const names = (one.getMetricsAsArray() as unknown as { name: string }[]).map((m) => m.name).filter((n) => n.startsWith('eos_'));
    assert.deepEqual([...names].sort(), metricFamilies().map((f) => f.name).sort());
  });

  test('type, labels and help come from the definitions', () => {
    const f = new Map(metricFamilies().map((x) => [x.name, x]));
    assert.deepEqual(f.get('eos_transactions_total'), {
      name: 'eos_transactions_total',
      type: 'counter',
      help: 'Partition transactions by outcome: committed, aborted.',
      labels: ['pipeline', 'engine', 'job_id', 'outcome'],
      module: 'src/metrics/pipeline.ts',
    });
    assert.equal(f.get('eos_checkpoints_total')?.module, 'src/metrics/checkpoint-stats.ts', 'a handed-through family is listed by its owner');
    assert.equal(f.get('eos_canary_end_to_end_latency_seconds')?.type, 'histogram');
    assert.ok((f.get('eos_canary_end_to_end_latency_seconds')?.buckets ?? []).includes(0.5));
    assert.deepEqual(f.get('eos_kafka_up')?.labels, []);
    const doc = renderMetricsReference([...f.values()]);
    assert.match(doc, /^\| `eos_service_ready` \| gauge \| `service` \| 1 when the service is ready/m);
  });
});
