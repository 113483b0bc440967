// Every scenario of `eoswatch chaos`: the process faults (./scenarios.ts) and the network faults
// (./net-scenarios.ts), and the names that select them, one by one or by group.
import { NETWORK_SCENARIOS } from './net-scenarios.js';
import { SCENARIOS, type Scenario } from './scenarios.js';

export const ALL_SCENARIOS: Scenario[] = [...SCENARIOS, ...NETWORK_SCENARIOS];

/** Groups a --scenario list may name besides single scenarios. */
export const SCENARIO_GROUPS: Record<string, () => Scenario[]> = {
  all: () => ALL_SCENARIOS,
  process: () => SCENARIOS,
  network: () => NETWORK_SCENARIOS,
};

/** Scenarios of a comma-separated list of names and groups, each once, in the catalogue's order. */
export function selectScenarios(spec: string): Scenario[] {
  const chosen = new Set<Scenario>();
  for (const raw of spec.split(',')) {
    const name = raw.trim();
    const group = SCENARIO_GROUPS[name];
    if (group) {
      for (const s of group()) chosen.add(s);
      continue;
    }
    const s = ALL_SCENARIOS.find((x) => x.name === name);
    if (!s) throw new Error(`unknown scenario "${name}"; expected one of: ${[...ALL_SCENARIOS.map((x) => x.name), ...Object.keys(SCENARIO_GROUPS)].join(', ')}`);
    chosen.add(s);
  }
  return ALL_SCENARIOS.filter((s) => chosen.has(s));
}
