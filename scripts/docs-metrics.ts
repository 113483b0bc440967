// npm run docs:metrics — regenerates docs/metrics.md from the code's metric definitions: every
// module that defines metrics registers them into a fresh prom-client Registry of its own (no
// service is started, nothing talks to Kafka), and the table lists each family with its type,
// labels and help. test/unit/docs/reference.test.ts fails when the committed file differs, and when
// a metric named in src/ is missing from DEFINITIONS below.
import { writeFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { defineCanaryMetrics } from '../src/canary/canary-service.js';
import { defineSupervisorMetrics } from '../src/daemon.js';
import { flinkMetrics } from '../src/metrics/flink.js';
import { defineWebReloadMetrics } from '../src/http/web-reload.js';
import { defineKafkaHealthMetrics } from '../src/kafka/health.js';
import { permissionMetrics } from '../src/kafka/permissions.js';
import { auditMetrics } from '../src/audit/metrics.js';
import { checkpointMetrics } from '../src/metrics/checkpoint-stats.js';
import { lagMetrics, pipelineTransactionAgeMetrics } from '../src/metrics/lag.js';
import { lsoMetrics } from '../src/metrics/lso.js';
import { defineTransactionsMetrics } from '../src/metrics/transactions.js';
import { streamsMetrics } from '../src/metrics/streams.js';
import { pipelineMetrics } from '../src/metrics/pipeline.js';
import { createRegistry } from '../src/metrics/registry.js';
import { runFamilies } from '../src/runtime/runs.js';

export const METRICS_DOC = 'docs/metrics.md';

/** Each defining module, what it covers, and how to define its metrics into a registry. */
export const DEFINITIONS: { module: string; covers: string; define: (r: Registry) => void }[] = [
  { module: 'src/metrics/registry.ts', covers: 'the process', define: () => undefined },
  { module: 'src/daemon.ts', covers: 'the supervisor', define: (r) => void defineSupervisorMetrics(r, () => ({ ready: true, services: {} })) },
  { module: 'src/runtime/runs.ts', covers: "every service's scheduled runs", define: (r) => void runFamilies(r) },
  { module: 'src/metrics/checkpoint-stats.ts', covers: 'checkpoints (own pipeline and Flink jobs)', define: (r) => void checkpointMetrics(r) },
  { module: 'src/metrics/pipeline.ts', covers: 'pipelines (own pipeline and Flink jobs)', define: (r) => void pipelineMetrics(r) },
  { module: 'src/metrics/lag.ts', covers: "the own pipeline's open transactions, consumer lag", define: (r) => { pipelineTransactionAgeMetrics(r, 'p', 60_000, () => new Map()); lagMetrics(r); } },
  { module: 'src/metrics/lso.ts', covers: 'last stable offsets, hanging transactions', define: (r) => void lsoMetrics(r) },
  { module: 'src/metrics/transactions.ts', covers: 'every transactional producer of the cluster (transaction coordinator)', define: (r) => void defineTransactionsMetrics(r) },
  { module: 'src/metrics/streams.ts', covers: 'watched Kafka Streams applications: rebalances', define: (r) => void streamsMetrics(r) },
  { module: 'src/canary/canary-service.ts', covers: 'the canary', define: (r) => void defineCanaryMetrics(r) },
  { module: 'src/audit/metrics.ts', covers: 'the audit', define: (r) => void auditMetrics(r) },
  { module: 'src/metrics/flink.ts', covers: 'Flink jobs', define: (r) => void flinkMetrics(r) },
  { module: 'src/kafka/health.ts', covers: 'the Kafka cluster', define: (r) => void defineKafkaHealthMetrics(r) },
  { module: 'src/kafka/permissions.ts', covers: "every service's missing ACLs", define: (r) => void permissionMetrics(r) },
  { module: 'src/http/web-reload.ts', covers: 'the web configuration file', define: (r) => void defineWebReloadMetrics(r) },
];

export interface MetricFamily {
  name: string;
  type: string;
  help: string;
  labels: string[];
  buckets?: number[];
  module: string;
}

interface PromMetric {
  name: string;
  help: string;
  type: string;
  labelNames?: string[];
  upperBounds?: number[];
}

/** Every eos_* family, in the order the modules of DEFINITIONS define them. */
export function metricFamilies(): MetricFamily[] {
  const seen = new Set<string>();
  const out: MetricFamily[] = [];
  for (const d of DEFINITIONS) {
    // createRegistry adds eos_build_info (and prom-client's process metrics, left out here);
    // the other modules add theirs to a registry of their own.
    const registry = d.module === 'src/metrics/registry.ts' ? createRegistry() : new Registry();
    // checkpoint-stats.ts owns the families pipeline.ts hands through: each is listed once, by its owner.
    d.define(registry);
    for (const m of registry.getMetricsAsArray() as unknown as PromMetric[]) {
      if (!m.name.startsWith('eos_')) continue;
      const before = out.find((f) => f.name === m.name);
      if (before) {
        // The same family handed through (pipeline.ts re-exports checkpoint-stats.ts's); another
        // family under a taken name would clash in the daemon's one registry.
        if (before.help !== m.help || before.type !== m.type || before.labels.join() !== (m.labelNames ?? []).join()) {
          throw new Error(`${m.name} is defined by ${before.module} and, differently, by ${d.module}: two families cannot share a name in one registry`);
        }
        continue;
      }
      seen.add(m.name);
      out.push({ name: m.name, type: m.type, help: m.help, labels: [...(m.labelNames ?? [])], ...(m.upperBounds ? { buckets: [...m.upperBounds] } : {}), module: d.module });
    }
  }
  return out;
}

const cell = (s: string): string => s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();

export function renderMetricsReference(families: MetricFamily[]): string {
  const out: string[] = [
    '# Metrics reference',
    '',
    '<!-- Generated from the metric definitions in src/ by `npm run docs:metrics` (scripts/docs-metrics.ts); do not edit by hand. -->',
    '',
    'Every metric family eoswatch exports on `GET /metrics`: its type, labels and help text, grouped by',
    'the module that defines it. Names are contracts (the alerts in `alerts/eoswatch.rules.yml` and the',
    'dashboard use them) and pass `promtool check metrics`. Every pipeline series carries `pipeline`,',
    '`engine` (`eoswatch` or `flink`) and `job_id`. A family appears once a service that sets it is',
    "enabled. Besides these, the registry holds prom-client's default process and Node.js metrics",
    '(`process_*`, `nodejs_*`; the three `nodejs_active_*_total` gauges are removed, `promtool` rejects',
    'their names), collected at most once a second. Where a metric goes and how to add one:',
    '[architecture](architecture.md#metrics).',
    '',
  ];
  const histogramBuckets = new Set(families.filter((f) => f.buckets).map((f) => f.buckets!.join(', ')));
  for (const d of DEFINITIONS) {
    const mine = families.filter((f) => f.module === d.module);
    if (mine.length === 0) continue;
    out.push(`## ${d.covers[0]!.toUpperCase()}${d.covers.slice(1)}`, '', `Defined in [\`${d.module}\`](../${d.module}).`, '');
    out.push('| metric | type | labels | help |', '|---|---|---|---|');
    for (const f of mine) {
      const labels = f.labels.length > 0 ? f.labels.map((l) => `\`${l}\``).join(', ') : '';
      out.push(`| \`${f.name}\` | ${f.type} | ${labels} | ${cell(f.help)} |`);
    }
    out.push('');
  }
  if (histogramBuckets.size > 0) {
    out.push('## Histogram buckets', '', '| metric | buckets (seconds) |', '|---|---|');
    for (const f of families.filter((x) => x.buckets)) out.push(`| \`${f.name}\` | ${f.buckets!.join(', ')} |`);
    out.push('');
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const families = metricFamilies();
  writeFileSync(METRICS_DOC, renderMetricsReference(families));
  process.stdout.write(`${METRICS_DOC}: ${families.length} metric families\n`);
}
