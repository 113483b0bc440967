// eoswatch's own prom-client Registry (never the global one): process metrics and build info.
// Each service adds its metrics to it with `registers: [registry]`. Nothing in a collect()
// here talks to Kafka: /metrics only renders what the schedulers have set.
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION } from '../version.js';

export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
