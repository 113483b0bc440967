// Every service of the daemon, in the order it is built (a service may use those before it:
// src/service.ts `peers`) and started; shutdown goes in reverse. A new service is its module with
// a `defineService(...)` (name, config section, factory) and one line here.
import type { ServiceDefinition } from './service.js';
import { kafkaHealthService } from './kafka/health.js';
import { pipelineService } from './pipeline/pipeline-service.js';
import { flinkService } from './flink/flink-service.js';
import { lsoMonitorService } from './kafka/lso-monitor.js';
import { lagService } from './lag/lag-service.js';
import { streamsService } from './streams/streams-service.js';
import { canaryService } from './canary/canary-service.js';
import { auditService } from './audit/audit-service.js';
import { transactionsService } from './coordinator/transactions-service.js';
import { statusService } from './status/status-service.js';

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
