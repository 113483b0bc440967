#!/usr/bin/env node
// eoswatch command line: subcommand dispatch and exit codes (0 ok, 1 runtime failure, 2 usage or
// configuration error, 3 a check found a violation). Each command lives in src/commands/ and is
// imported only when it is called, so a one-shot command loads only its own modules.
// First: kafkajs modules replaced before kafkajs is loaded (src/kafka/preload.ts).
import './kafka/preload.js';
import { pathToFileURL } from 'node:url';
import { EosError, ErrorCodes, ExitCodes, reportError } from './errors.js';
import { VERSION } from './version.js';

const MAIN_HELP = `eoswatch ${VERSION} — exactly-once watchdog for Kafka transactional pipelines

Usage: eoswatch <command> [options]

Commands:
  run               run the daemon and exporter (services enabled in the config)
  audit             one-shot exactly-once configuration audit (cluster, client and Flink files)
  verify            write verification records / check a sink for duplicates, loss and order
  chaos             fault scenarios against a local cluster and pipeline, verified end to end
  topics create     create the topics a configuration needs, replicated safely for the cluster
  transactions      list, describe, find-hanging and abort transactions at the coordinators
  status            summary of a running eoswatch (its /metrics, /readyz and /audit)
  config validate   check a configuration file against the schema
  demo              start a local 3-node Kafka cluster and run eoswatch against it

Options:
  -h, --help        show help (also after a command: eoswatch run --help)
  -v, --version     print the version

Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error,
            3 a check ran and found a violation.
`;

/** What every module of src/commands/ exports. */
export interface Command {
  help: string | (() => Promise<string>);
  handler(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  run: () => import('./commands/run.js'),
  config: () => import('./commands/config-validate.js'),
  demo: () => import('./commands/demo.js'),
  audit: () => import('./commands/audit.js'),
  verify: () => import('./commands/verify.js'),
  chaos: () => import('./commands/chaos.js'),
  topics: () => import('./commands/topics.js'),
  transactions: () => import('./commands/transactions.js'),
  status: () => import('./commands/status.js'),
};

/** An error that ended a command: its message (redacted) on stderr, its exit code. */
const report = (err: unknown): number => reportError(err, 'eoswatch', 'eoswatch --help');

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case undefined:
        process.stderr.write(MAIN_HELP);
        return ExitCodes.USAGE;
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(MAIN_HELP);
        return ExitCodes.OK;
      case '-v':
      case '--version':
        process.stdout.write(`${VERSION}\n`);
        return ExitCodes.OK;
    }
    const load = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
    if (!load) throw new EosError(ErrorCodes.USAGE, `unknown command "${cmd}"; expected one of: run, audit, verify, chaos, topics create, transactions, status, config validate, demo`);
    return await (await load()).handler(rest);
  } catch (err) {
    return report(err);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => process.exit(report(err)),
  );
}
