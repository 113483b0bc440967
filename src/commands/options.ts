// Option handling shared by the commands of src/commands/ and by the local-cluster CLIs (`npm run
// kafka|flink|streams`, harness/localcluster/*cli.ts): one parser, one wording for each kind of bad
// option value, each an EosError USAGE (exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, validateConfig } from '../config/load.js';
import type { Config, KafkaConfig, LogFormat } from '../config/types.js';
import { EosError, ErrorCodes, ExitCodes, errorMessage } from '../errors.js';
import type { TopicRequest } from '../kafka/topics.js';
import type { WebConfig } from '../http/web-config.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/** A command line that cannot be run, saying what was expected (exit 2). */
export const usage = (message: string): EosError => new EosError(ErrorCodes.USAGE, message);

/** Strict parseArgs plus -h/--help; option types come from the literal `options` (no casts at the call site). */
export function parse<const T extends Options, const P extends boolean = false>(args: string[], options: T, allowPositionals?: P) {
  try {
    return parseArgs({ args, options: { ...options, ...HELP_OPTION }, allowPositionals: (allowPositionals ?? false) as P, strict: true });
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, errorMessage(err));
  }
}

/** "a", "a or b", "a, b or c": how the expected values of an option are named in errors. */
function spoken(choices: readonly string[]): string {
  return choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}` : (choices[0] ?? '');
}

/** One of a closed list of values (`--format`, `--fail-on`, `--log-format`, ...). */
export function choiceOption<const C extends string>(name: string, v: string, choices: readonly C[]): C {
  if (!(choices as readonly string[]).includes(v)) throw new EosError(ErrorCodes.USAGE, `--${name}: expected ${spoken(choices)}, found "${v}"`);
  return v as C;
}

export const REPORT_FORMATS = ['table', 'json', 'markdown'] as const;

export function logFormatOption(v: string | undefined, dflt: LogFormat): LogFormat {
  return v === undefined ? dflt : choiceOption('log-format', v, ['auto', 'json', 'pretty']);
}

export function numberOption<D extends number | undefined>(name: string, v: string | undefined, dflt: D, check: (n: number) => boolean, what: string): number | D {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || !check(n)) throw new EosError(ErrorCodes.USAGE, `--${name}: expected ${what}, found "${v}"`);
  return n;
}

const isPositiveInteger = (n: number) => Number.isInteger(n) && n > 0;

export function positiveIntegerOption<D extends number | undefined>(name: string, v: string | undefined, dflt: D): number | D {
  return numberOption(name, v, dflt, isPositiveInteger, 'a positive integer');
}

/** A positive integer option without a default: `--NAME is required` (with `hint`) when absent. */
export function requiredPositiveInteger(name: string, v: string | undefined, hint = ''): number {
  if (v === undefined) throw new EosError(ErrorCodes.USAGE, `--${name} is required${hint}`);
  return positiveIntegerOption(name, v, NaN);
}

export async function durationOption(name: string, v: string): Promise<number> {
  const { parseDuration } = await import('../config/duration.js');
  try {
    return parseDuration(v);
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, `--${name}: ${errorMessage(err)}`);
  }
}

/** `--nodes` of a local cluster (npm run demo, npm run kafka -- up): 1 or 3. */
export function nodesOption(v: string | undefined): 1 | 3 {
  return v === undefined ? 3 : Number(choiceOption('nodes', v, ['1', '3'])) as 1 | 3;
}

/** A repeatable `--NAME key=value` (`--set`, `--arg`): the pairs, the last of a key winning. */
export function keyValueOption(name: string, list: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list ?? []) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new EosError(ErrorCodes.USAGE, `--${name}: expected name=value, found "${kv}"`);
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/** `--bootstrap-server`, repeatable and comma-separated. */
export function brokersOption(v: string[] | undefined): string[] {
  const brokers = (v ?? []).flatMap((b) => b.split(',')).map((b) => b.trim()).filter(Boolean);
  for (const b of brokers) if (!/^[^\s:,]+:[0-9]{1,5}$/.test(b)) throw new EosError(ErrorCodes.USAGE, `--bootstrap-server: expected HOST:PORT, found "${b}"`);
  return brokers;
}

/** The config's kafka section with the brokers of `--bootstrap-server`, when any were given. */
export function kafkaWithBrokers(kafka: KafkaConfig, brokers: string[]): KafkaConfig {
  return brokers.length ? { ...kafka, brokers } : kafka;
}

/** `--config FILE`, else $EOSWATCH_CONFIG, else the built-in defaults (run, topics). */
export async function configFrom(file: string | undefined): Promise<Config> {
  return configFileOrDefaults(file ?? process.env.EOSWATCH_CONFIG);
}

/** `--config FILE`, else the built-in defaults; $EOSWATCH_CONFIG is not read (audit, verify). */
export async function configFileOrDefaults(file: string | undefined): Promise<Config> {
  return file ? loadConfig(file) : validateConfig({}, '(defaults)');
}

/** node_exporter's flags, taken by `run` and `config validate` alike. */
export const WEB_OPTIONS = {
  'web.listen-address': { type: 'string' },
  'web.config.file': { type: 'string' },
} as const;

/**
 * The HTTP settings `run` serves with: `--web.listen-address` over http.host/port, and the web
 * configuration file (`--web.config.file` over http.webConfigFile) loaded and validated. `run`
 * and `config validate` both come through here; a bad file is exit 2 naming the file and key.
 */
export async function webSettings(config: Config, values: { 'web.listen-address'?: string; 'web.config.file'?: string }, configFile?: string): Promise<WebConfig | undefined> {
  const { parseListenAddress } = await import('../http/server.js');
  const listen = values['web.listen-address'];
  if (listen !== undefined) {
    try {
      Object.assign(config.http, parseListenAddress(listen));
    } catch (err) {
      throw new EosError(ErrorCodes.USAGE, `--web.listen-address: ${errorMessage(err)}`);
    }
  }
  const flag = values['web.config.file'];
  if (flag !== undefined) config.http.webConfigFile = flag;
  const file = config.http.webConfigFile;
  if (file === undefined) return undefined;
  const { loadWebConfig } = await import('../http/web-config.js');
  try {
    return await loadWebConfig(file);
  } catch (err) {
    // A file that cannot be read at all: say where its name came from.
    if (err instanceof EosError && err.code === ErrorCodes.CONFIG_NOT_FOUND) {
      const origin = flag !== undefined ? '--web.config.file' : `${configFile ?? '(configuration)'}: http.webConfigFile`;
      throw new EosError(err.code, `${origin}: ${err.message}`, { cause: err.cause });
    }
    throw err;
  }
}

/** Options shared by `eoswatch topics create` and `npm run kafka -- topics create`. */
export const TOPIC_OPTIONS = {
  topic: { type: 'string', multiple: true },
  partitions: { type: 'string' },
  'replication-factor': { type: 'string' },
  'min-insync-replicas': { type: 'string' },
  'allow-unsafe': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
} as const;

export interface TopicValues {
  topic?: string[];
  partitions?: string;
  'replication-factor'?: string;
  'min-insync-replicas'?: string;
  'allow-unsafe'?: boolean;
}

export function topicRequestFrom(values: TopicValues): TopicRequest {
  const optional = (name: 'replication-factor' | 'min-insync-replicas') => (values[name] === undefined ? undefined : positiveIntegerOption(name, values[name], 0));
  return {
    names: values.topic ?? [],
    partitions: positiveIntegerOption('partitions', values.partitions, 6),
    replicationFactor: optional('replication-factor'),
    minInsyncReplicas: optional('min-insync-replicas'),
    allowUnsafe: Boolean(values['allow-unsafe']),
  };
}

/** Help printed for -h/--help: exit 0. */
export function printHelp(text: string): number {
  process.stdout.write(text);
  return ExitCodes.OK;
}

/**
 * `eoswatch NAME SUB ...`: no SUB or -h prints the help (exit 2 without SUB); an unknown SUB is a usage error.
 * Returns the subcommand and its arguments, or the exit code when the help was printed.
 */
export function subcommand<const S extends string>(name: string, args: string[], subs: readonly S[], help: string): { sub: S; rest: string[] } | number {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(help);
    return sub === undefined ? ExitCodes.USAGE : ExitCodes.OK;
  }
  return { sub: knownCommand(`${name} command`, sub, subs), rest };
}

function knownCommand<const S extends string>(what: string, cmd: string, commands: readonly S[]): S {
  if (!(commands as readonly string[]).includes(cmd)) throw new EosError(ErrorCodes.USAGE, `unknown ${what} "${cmd}"; expected: ${commands.join(', ')}`);
  return cmd as S;
}

/**
 * The command of a CLI whose options may stand anywhere (`npm run kafka|flink|streams -- …`): its
 * first positional. -h/--help prints the help (exit 0), no command prints it too (exit 2); an
 * unknown command is a usage error. Returns the command, or the exit code when the help was printed.
 */
export function commandOf<const S extends string>(values: { help?: boolean }, positionals: string[], commands: readonly S[], help: string): S | number {
  const cmd = positionals[0];
  if (values.help || cmd === undefined) {
    process.stdout.write(help);
    return values.help ? ExitCodes.OK : ExitCodes.USAGE;
  }
  return knownCommand('command', cmd, commands);
}

/** A command's numeric argument (`kill N`, `kill-tm N`): a positive integer, else a usage error saying what it names. */
export function numberArgument(cmd: string, arg: string | undefined, what: string): number {
  const n = Number(arg);
  if (arg === undefined || !Number.isInteger(n) || n < 1) throw new EosError(ErrorCodes.USAGE, `${cmd} needs ${what}, found "${arg ?? ''}"`);
  return n;
}
