// Every scenario of `npm run chaos`: the process faults (./scenarios.ts) and the network faults
// (./net-scenarios.ts), and the names that select them, one by one or by group.
import { NETWORK_SCENARIOS } from './net-scenarios.js';
import { SCENARIOS, pickScenarios, type Scenario } from './scenarios.js';

export const ALL_SCENARIOS: Scenario[] = [...SCENARIOS, ...NETWORK_SCENARIOS];

/** Groups a --scenario list may name besides single scenarios. */
export const SCENARIO_GROUPS: Record<string, () => Scenario[]> = {
  all: () => ALL_SCENARIOS,
  process: () => SCENARIOS,
  network: () => NETWORK_SCENARIOS,
};

/** Scenarios of a comma-separated list of names and groups, each once, in the catalogue's order. */
export function selectScenarios(spec: string): Scenario[] {
  return pickScenarios(ALL_SCENARIOS, spec, SCENARIO_GROUPS);
}
