// The status page as a service: the sampler (src/status/sampler.ts, every 5 s: the summary,
// alert timers and chart history, from the same registry, readiness, audit and transactions
// and Streams report) and the page at / (src/http/status-page.ts) with /status.json.
import { auditService } from '../audit/audit-service.js';
import { transactionsService } from '../coordinator/transactions-service.js';
import { statusPageRouter } from '../http/status-page.js';
import { streamsService } from '../streams/streams-service.js';
import { defineService } from '../service.js';
import { StatusSampler } from './sampler.js';

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
