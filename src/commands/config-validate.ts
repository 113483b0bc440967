// eoswatch config validate: a configuration file against the schema, and what run would load with
// it (the transform module, the web configuration file).
import { loadConfig, redactConfig } from '../config/load.js';
import { EosError, ErrorCodes, ExitCodes } from '../errors.js';
import { WEB_OPTIONS, parse, printHelp, subcommand, webSettings } from './options.js';

export const help = `Usage: eoswatch config validate FILE [--print] [--web.listen-address [HOST]:PORT] [--web.config.file FILE]

Validates FILE against config/schema.json, expanding \${ENV_VAR} references, and what \`run\`
would load with it: the transform module and the web configuration file (http.webConfigFile,
or --web.config.file, as run takes them). Prints every problem with file, line:column, key and
what was expected; exit 2 when there is any.

Options:
  --print                  print the effective configuration (defaults filled, secrets redacted) as JSON
  --web.listen-address ADDR  as for run: overrides http.host/port
  --web.config.file FILE   as for run: the web configuration file to check (overrides http.webConfigFile)
  -h, --help               show this help
`;

/** `out`: where the result goes (stdout; a test passes its own stream). */
export async function handler(args: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const cmd = subcommand('config', args, ['validate'], help);
  if (typeof cmd === 'number') return cmd;
  const { values, positionals } = parse(cmd.rest, { print: { type: 'boolean' }, ...WEB_OPTIONS }, true);
  if (values.help) return printHelp(help);
  if (positionals.length !== 1) throw new EosError(ErrorCodes.USAGE, 'config validate takes exactly one FILE');
  const file = positionals[0]!;
  const config = await loadConfig(file);
  const { checkTransform } = await import('../pipeline/transforms/index.js');
  await checkTransform(config.pipeline, file);
  const web = await webSettings(config, values, file);
  if (values.print) out.write(`${JSON.stringify(redactConfig(config), null, 2)}\n`);
  else out.write(`${file}: valid\n${web ? `${web.file}: valid\n` : ''}`);
  return ExitCodes.OK;
}
