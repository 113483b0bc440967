// eoswatch's own prom-client Registry (never the global one): process metrics and build info.
// Each service adds its metrics to it with `registers: [registry]`. Nothing in a collect()
// here talks to Kafka: /metrics only renders what the schedulers have set.
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION } from '../version.js';

export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const buildInfo = new Gauge({
    name: 'eos_build_info',
    help: 'Build information of eoswatch; always 1.',
    labelNames: ['version', 'nodejs'],
    registers: [registry],
  });
  buildInfo.set({ version: VERSION, nodejs: process.versions.node }, 1);
  return registry;
}
