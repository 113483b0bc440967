// The status page samples only the metric families its summary and history read
// (src/status/summary.ts STATUS_FAMILIES): every metric name those two files use must be one of them
// (or a histogram's series of one), or the summary would silently lose it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registrySamples } from '../../../src/metrics/samples.js';
import { STATUS_FAMILIES } from '../../../src/status/summary.js';

const familyOf = (name: string): string => (STATUS_FAMILIES.has(name) ? name : name.replace(/_(bucket|sum|count)$/, ''));

test('every metric name the summary and its history read is a family the sampler samples', () => {
  const used = new Set<string>();
  for (const file of ['src/status/summary.ts', 'src/status/history.ts']) {
    const text = readFileSync(file, 'utf8').replace(/export const STATUS_FAMILIES[\s\S]*?\]\);/, '');
    for (const m of text.matchAll(/'(eos_[a-z0-9_]+)'/g)) used.add(m[1]!);
  }
  assert.ok(used.size >= 15, `names found: ${[...used].join(', ')}`);
  const missing = [...used].filter((n) => !STATUS_FAMILIES.has(familyOf(n)));
  assert.deepEqual(missing, [], 'read by the status but not sampled');
  const unused = [...STATUS_FAMILIES].filter((f) => ![...used].some((n) => familyOf(n) === f));
  assert.deepEqual(unused, [], 'sampled but read by nothing');
});

test('registrySamples with families: only their series, histograms with their bucket series', async () => {
  const registry = new Registry();
  const registers = [registry];
  new Gauge({ name: 'eos_pipeline_up', help: 'h', labelNames: ['pipeline'], registers }).set({ pipeline: 'p' }, 1);
  new Gauge({ name: 'eos_partition_lso_open_transaction_age_seconds', help: 'h', labelNames: ['partition'], registers }).set({ partition: '0' }, 5);
  new Counter({ name: 'eos_checkpoints_total', help: 'h', registers }).inc(2);
  new Histogram({ name: 'eos_kafka_transaction_commit_latency_seconds', help: 'h', buckets: [0.1], registers }).observe(0.05);
  const all = await registrySamples(registry);
  const some = await registrySamples(registry, STATUS_FAMILIES);
  assert.ok(all.samples.some((s) => s.name === 'eos_partition_lso_open_transaction_age_seconds'));
  assert.deepEqual(
    some.samples.map((s) => s.name),
    all.samples.filter((s) => s.name !== 'eos_partition_lso_open_transaction_age_seconds').map((s) => s.name),
  );
  assert.ok(some.samples.some((s) => s.name === 'eos_kafka_transaction_commit_latency_seconds_bucket' && s.labels.le === '0.1' && s.value === 1));
});
