// eoswatch status: one summary of a running eoswatch.
import { EosError, ErrorCodes, ExitCodes } from '../errors.js';
import { choiceOption, durationOption, parse, printHelp } from './options.js';

export const help = `Usage: eoswatch status [--url URL] [--format table|json]

Reads a running eoswatch's /status.json and prints its summary: records in/out and their rates
over the daemon's last 60 s, checkpoints, commit latency p50/p99, pending, LSO lag, canary counts,
audit findings, and the alert conditions of alerts/eoswatch.rules.yml that hold, judged by the
daemon as Prometheus judges them: pending until a condition has held for its rule's for:, then
firing (the daemon keeps the timers and 30 min of history since it started).

Options:
  --url URL            eoswatch's HTTP address (default http://127.0.0.1:7395)
  --format F           table (default) or json (with --format json the chart history too)
  --window DURATION    ignored, kept for scripts: the rates come from the daemon's history
  -h, --help           show this help

Exit codes: 0 healthy (nothing firing; pending conditions do not count), 1 eoswatch cannot be
reached, 3 an alert is firing.
`;

export async function handler(args: string[]): Promise<number> {
  const { values } = parse(args, { url: { type: 'string', default: 'http://127.0.0.1:7395' }, window: { type: 'string', default: '0' }, format: { type: 'string', default: 'table' } });
  if (values.help) return printHelp(help);
  const url = values.url.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+$/.test(url)) throw new EosError(ErrorCodes.USAGE, `--url: expected http://HOST:PORT, found "${values.url}"`);
  const format = choiceOption('format', values.format, ['table', 'json']);
  await durationOption('window', values.window);
  const { StatusReader } = await import('../status/reader.js');
  const { formatSummary } = await import('../status/summary.js');
  const summary = await new StatusReader(url).read({ history: format === 'json' });
  process.stdout.write(format === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
  return summary.firing > 0 ? ExitCodes.VIOLATION : ExitCodes.OK;
}
