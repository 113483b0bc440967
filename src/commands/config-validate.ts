// eoswatch config validate: a configuration file against the schema.
import { loadConfig, redactConfig } from '../config/load.js';
import { EosError, ErrorCodes, ExitCodes } from '../errors.js';
import { parse, printHelp, subcommand } from './options.js';

export const help = `Usage: eoswatch config validate FILE [--print]

Validates FILE against config/schema.json, expanding \${ENV_VAR} references. Prints every
problem with file, line:column, key and what was expected; exit 2 when there is any.

Options:
  --print      print the effective configuration (defaults filled, secrets redacted) as JSON
  -h, --help   show this help
`;

export async function handler(args: string[]): Promise<number> {
  const cmd = subcommand('config', args, ['validate'], help);
  if (typeof cmd === 'number') return cmd;
  const { values, positionals } = parse(cmd.rest, { print: { type: 'boolean' } }, true);
  if (values.help) return printHelp(help);
  if (positionals.length !== 1) throw new EosError(ErrorCodes.USAGE, 'config validate takes exactly one FILE');
  const file = positionals[0]!;
  const config = await loadConfig(file);
  const { checkTransform } = await import('../pipeline/transforms/index.js');
  await checkTransform(config.pipeline, file);
  if (values.print) process.stdout.write(`${JSON.stringify(redactConfig(config), null, 2)}\n`);
  else process.stdout.write(`${file}: valid\n`);
  return ExitCodes.OK;
}
