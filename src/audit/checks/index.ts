// Every check, in catalogue order. Adding a check group = one file in this folder + one line here.
import type { Check } from '../types.js';
import { brokerChecks } from './broker.js';
import { liveChecks } from './live.js';
import { producerChecks } from './producer.js';
import { consumerChecks } from './consumer.js';
import { checkpointChecks } from './checkpoint.js';
import { coordinatorChecks } from './coordinator.js';
import { streamsChecks } from './streams.js';
import { aclChecks } from './acl.js';

export const ALL_CHECKS: Check[] = [...brokerChecks, ...liveChecks, ...producerChecks, ...consumerChecks, ...checkpointChecks, ...coordinatorChecks, ...aclChecks, ...streamsChecks];
