// eoswatch's own prom-client Registry (never the global one): process metrics and build info.
// Each service adds its metrics to it with `registers: [registry]`. Nothing in a collect()
// here talks to Kafka: /metrics only renders what the schedulers have set.
//
// prom-client's process metrics are collected on every render; the event-loop delay statistics
// alone walk the whole delay histogram seven times (min, max, mean, stddev, three percentiles:
// about 1 ms a scrape, as much as rendering 3,000 series; bench/scrape.bench.ts). They are collected
// at most once per DEFAULT_METRICS_MIN_INTERVAL_MS: a scrape within that time of the last collection
// shows its values (the delay statistics then cover the time between the two collections, at least
// that long, as they cover the time between two scrapes with prom-client alone).
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION } from '../version.js';

export const DEFAULT_METRICS_MIN_INTERVAL_MS = 1000;

/** Lets `metric`'s collect() run at most once per `minIntervalMs`; calls in between do nothing. */
export function throttleCollect(metric: object, minIntervalMs: number, now: () => number = () => performance.now()): void {
  const m = metric as { collect?: () => unknown };
  const collect = m.collect;
  if (typeof collect !== 'function') return;
  let last = -Infinity;
  m.collect = function (this: unknown) {
    const t = now();
    if (t - last < minIntervalMs) return undefined;
    last = t;
    return collect.call(this);
  };
}

export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const m of registry.getMetricsAsArray()) throttleCollect(m, DEFAULT_METRICS_MIN_INTERVAL_MS);
  // prom-client's totals of active handles, requests and resources are gauges named like counters,
  // which `promtool check metrics` rejects; the per-type gauges without the suffix stay.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  const buildInfo = new Gauge({
    name: 'eos_build_info',
    help: 'Build information of eoswatch; always 1.',
    labelNames: ['version', 'nodejs'],
    registers: [registry],
  });
  buildInfo.set({ version: VERSION, nodejs: process.versions.node }, 1);
  return registry;
}

export type LabelSet = Readonly<Record<string, string>>;

const defaultLabels = new WeakMap<Registry, LabelSet>();

/**
 * Sets the labels prom-client adds to every series of `registry` (`registry.setDefaultLabels`) and
 * keeps them for eoswatch's readers of the registry (src/metrics/render.ts, src/metrics/samples.ts):
 * prom-client has no public reader of them. Default labels set on the registry directly are not seen
 * by those readers; eoswatch sets none itself.
 */
export function setDefaultLabels(registry: Registry, labels: Record<string, string>): void {
  const copy: LabelSet = Object.freeze({ ...labels });
  registry.setDefaultLabels(copy);
  if (Object.keys(copy).length) defaultLabels.set(registry, copy);
  else defaultLabels.delete(registry);
}

/** The default labels set with setDefaultLabels (undefined: none). */
export function defaultLabelsOf(registry: Registry): LabelSet | undefined {
  return defaultLabels.get(registry);
}

/**
 * A family's metrics, defined once per registry: `define` runs the first time a registry asks, and
 * every later caller (a service built again after a restart, another service sharing the family)
 * gets the same objects.
 */
export function definedOnce<T>(define: (registry: Registry) => T): (registry: Registry) => T {
  const byRegistry = new WeakMap<Registry, T>();
  return (registry) => {
    let m = byRegistry.get(registry);
    if (m === undefined) {
      m = define(registry);
      byRegistry.set(registry, m);
    }
    return m;
  };
}
