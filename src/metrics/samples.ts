// The registry's series as samples (name, labels, value): what the status sampler
// (src/status/sampler.ts) reads in the daemon, from the metric objects themselves through
// prom-client's public `get()`, not from a render of them. The same samples as parsing the
// registry's /metrics text with src/metrics/text-format.ts (the one parser, for what is read over
// HTTP): label values as strings (a histogram's `le` as the text writes it: "0.1", "+Inf"), the
// default labels set with setDefaultLabels (src/metrics/registry.ts) included.
import type { Metric, Registry } from 'prom-client';
import { defaultLabelsOf } from './registry.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Samples in exposition order, with each family's TYPE and HELP. */
export interface Samples {
  samples: Sample[];
  types: Map<string, string>;
  help: Map<string, string>;
}

export type LabelValues = Readonly<Record<string, string | number | undefined>>;

/** One metric as its public `get()` returns it. */
export interface MetricData {
  name: string;
  help: string;
  /** 'counter', 'gauge', 'histogram', 'summary' */
  type: string;
  values: readonly { labels?: LabelValues; value: number; metricName?: string }[];
}

/**
 * Every metric of `registry`, in registration order, through prom-client's public API
 * (`getMetricsAsArray()`, each metric's `get()`, which runs its collect()).
 */
export async function metricData(registry: Registry, families?: ReadonlySet<string>): Promise<MetricData[]> {
  // Typed by prom-client as MetricObject (without get()); every registered metric is a Metric.
  let metrics = registry.getMetricsAsArray() as unknown as Metric[];
  if (families) metrics = metrics.filter((m) => families.has((m as unknown as { name: string }).name));
  // (prom-client types `type` as an enum; the value is its string.)
  return (await Promise.all(metrics.map((m) => m.get()))) as unknown as MetricData[];
}

/**
 * Every series of `registry` now (each metric's collect() runs, as for a scrape); of the metric
 * families named in `families` only, when given (a reader that needs a few families of a registry
 * holding tens of thousands of per-partition series).
 */
export async function registrySamples(registry: Registry, families?: ReadonlySet<string>): Promise<Samples> {
  const data = await metricData(registry, families);
  const defaults = defaultLabelsOf(registry);
  const out: Samples = { samples: [], types: new Map(), help: new Map() };
  for (const metric of data) {
    out.types.set(metric.name, metric.type);
    out.help.set(metric.name, metric.help);
    for (const v of metric.values) {
      const labels = sampleLabels(v.labels, defaults);
      // (-0 as the text writes it: 0)
      out.samples.push({ name: v.metricName ?? metric.name, labels, value: v.value === 0 ? 0 : v.value });
    }
  }
  return out;
}

const NO_LABELS: Record<string, string> = Object.freeze({});

/**
 * A series' labels as a sample's: its own label object when every value is a string already and
 * no default label is missing from it (the per-partition families' label objects, which their
 * services never change: no copy of tens of thousands of them every sample), else a copy with the
 * values as strings and the default labels added. Readers of samples do not change them.
 */
function sampleLabels(own: LabelValues | undefined, defaults: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const given = own ?? NO_LABELS;
  let asIs = true;
  for (const k in given) {
    if (typeof given[k] !== 'string') {
      asIs = false;
      break;
    }
  }
  if (asIs && defaults) for (const k in defaults) if (given[k] === undefined) asIs = false;
  if (asIs) return given as Record<string, string>;
  const labels: Record<string, string> = {};
  for (const [k, x] of Object.entries(given)) labels[k] = String(x);
  if (defaults) for (const [k, x] of Object.entries(defaults)) labels[k] ??= x;
  return labels;
}
