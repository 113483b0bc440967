#!/usr/bin/env node
// The repository's eoswatch command line: the product's commands (src/cli.ts) and the harness's,
// which need a checkout (java, Maven, the seed's Flink job and the Streams app built from their
// sources): `chaos` (fault scenarios against a local cluster, verified end to end) and `demo` (a
// local cluster with eoswatch watching it). `npm run chaos -- …`, `npm run demo -- …`.
// First: kafkajs modules replaced before kafkajs is loaded (src/kafka/preload.ts).
import '../src/kafka/preload.js';
import { runCliMain } from './localcluster/cli-main.js';
import { main, type ExtraCommands } from '../src/cli.js';

export const HARNESS_COMMANDS: ExtraCommands = {
  commands: {
    chaos: () => import('./commands/chaos.js'),
    demo: () => import('./commands/demo.js'),
  },
  usage: [
    ['chaos', 'fault scenarios against a local cluster and pipeline, verified end to end'],
    ['demo', 'start a local 3-node Kafka cluster and run eoswatch against it'],
  ],
};

/** The repository's CLI: every product command and the harness's. */
export function repositoryMain(argv: string[]): Promise<number> {
  return main(argv, HARNESS_COMMANDS);
}

runCliMain(import.meta.url, 'eoswatch', repositoryMain);
