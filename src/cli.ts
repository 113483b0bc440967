#!/usr/bin/env node
// eoswatch command line: subcommand dispatch and exit codes (0 ok, 1 runtime failure, 2 usage or
// configuration error, 3 a check found a violation). Each command lives in src/commands/ and is
// imported only when it is called, so a one-shot command loads only its own modules. These are the
// product's commands, what the installed CLI and the image run; the repository's CLI
// (harness/cli.ts: `npm run demo`, `npm run chaos`) adds the harness's commands through `main`'s
// second argument, so nothing under src/ imports the harness.
// First: kafkajs modules replaced before kafkajs is loaded (src/kafka/preload.ts).
import './kafka/preload.js';
import { pathToFileURL } from 'node:url';
import { EosError, ErrorCodes, ExitCodes, reportError } from './errors.js';
import { VERSION } from './version.js';

/** The product's commands in the help: name (as typed) and what it does. */
const PRODUCT_USAGE: [string, string][] = [
  ['run', 'run the daemon and exporter (services enabled in the config)'],
  ['audit', 'one-shot exactly-once configuration audit (cluster, client and Flink files)'],
  ['verify', 'write verification records / check a sink for duplicates, loss and order'],
  ['topics create', 'create the topics a configuration needs, replicated safely for the cluster'],
  ['transactions', 'list, describe, find-hanging and abort transactions at the coordinators'],
  ['status', 'summary of a running eoswatch (its /metrics, /readyz and /audit)'],
  ['config validate', 'check a configuration file against the schema'],
];

/** Commands a CLI adds to the product's (harness/cli.ts: chaos and demo). */
export interface ExtraCommands {
  commands: Record<string, () => Promise<Command>>;
  usage: [string, string][];
  /** How the commands that are not in this CLI are run, for the unknown-command error. */
  elsewhere?: string;
}

function mainHelp(usage: [string, string][]): string {
  return `eoswatch ${VERSION} — exactly-once watchdog for Kafka transactional pipelines

Usage: eoswatch <command> [options]

Commands:
${usage.map(([name, what]) => `  ${name.padEnd(18)}${what}`).join('\n')}

Options:
  -h, --help        show help (also after a command: eoswatch run --help)
  -v, --version     print the version

Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error,
            3 a check ran and found a violation.
`;
}

/** In the installed CLI: where the harness's commands are (they need a checkout: java, Maven, the jobs' sources). */
const HARNESS_ELSEWHERE = 'chaos and demo run from a checkout of the repository: npm run chaos -- …, npm run demo';

/** What every module of src/commands/ exports. */
export interface Command {
  help: string | (() => Promise<string>);
  handler(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  run: () => import('./commands/run.js'),
  config: () => import('./commands/config-validate.js'),
  audit: () => import('./commands/audit.js'),
  verify: () => import('./commands/verify.js'),
  topics: () => import('./commands/topics.js'),
  transactions: () => import('./commands/transactions.js'),
  status: () => import('./commands/status.js'),
};

/** An error that ended a command: its message (redacted) on stderr, its exit code. */
const report = (err: unknown): number => reportError(err, 'eoswatch', 'eoswatch --help');

export async function main(argv: string[], extra?: ExtraCommands): Promise<number> {
  const [cmd, ...rest] = argv;
  const usage = [...PRODUCT_USAGE, ...(extra?.usage ?? [])];
  const MAIN_HELP = mainHelp(usage);
  const commands = { ...COMMANDS, ...extra?.commands };
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
    const load = Object.hasOwn(commands, cmd) ? commands[cmd] : undefined;
    if (!load) {
      const elsewhere = extra ? extra.elsewhere : HARNESS_ELSEWHERE;
      throw new EosError(ErrorCodes.USAGE, `unknown command "${cmd}"; expected one of: ${usage.map(([name]) => name).join(', ')}${elsewhere ? ` (${elsewhere})` : ''}`);
    }
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
