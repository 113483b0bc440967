// Every service of the daemon, in the order it is built (a service may use those before it:
// src/service.ts `peers`) and started; shutdown goes in reverse. A new service is its module with
// a `defineService(...)` (name, config section, factory) and one line here. The status page,
// composed from the services above it, is defined here, at the top of the house.
import { defineService, type ServiceDefinition } from './service.js';
import { statusPageRouter } from './http/status-page.js';
import { StatusSampler } from './status/sampler.js';
import { kafkaHealthService } from './kafka/health.js';
import { pipelineService } from './pipeline/pipeline-service.js';
import { flinkService } from './flink/flink-service.js';
import { lsoMonitorService } from './kafka/lso-monitor.js';
import { lagService } from './lag/lag-service.js';
import { streamsService } from './streams/streams-service.js';
import { canaryService } from './canary/canary-service.js';
import { auditService } from './audit/audit-service.js';
import { transactionsService } from './coordinator/transactions-service.js';

/**
 * The status page at / and /status.json: the sampler (src/status/sampler.ts, every 5 s: the
 * summary, alert timers and chart history, from the same registry, readiness, the audit's,
 * transactions' and Streams' reports) and the page (src/http/status-page.ts).
 */
export const statusService = defineService({
  name: 'status',
  section: 'http',
  enabled: () => true,
  create: ({ ctx, peers, readiness }) => {
    const audit = peers.get(auditService);
    const txns = peers.get(transactionsService);
    const streams = peers.get(streamsService);
    const sampler = new StatusSampler({ registry: ctx.registry, readiness, audit: () => audit?.lastReport, transactions: () => txns?.lastReport, streams: () => streams?.lastReport, logger: ctx.logger });
    return { service: sampler, routes: [{ path: '/', description: 'live status page (summary: /status.json)', router: statusPageRouter({ sampler }) }] };
  },
});

export const SERVICES: readonly ServiceDefinition[] = [
  kafkaHealthService,
  pipelineService,
  lsoMonitorService,
  transactionsService,
  flinkService,
  streamsService,
  lagService,
  canaryService,
  auditService,
  statusService,
];
