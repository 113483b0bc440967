// eoswatch status: one summary of a running eoswatch.
import { EosError, ErrorCodes, ExitCodes } from '../errors.js';
import { choiceOption, durationOption, parse, printHelp } from './options.js';

export const help = `Usage: eoswatch status [--url URL] [--window DURATION] [--format table|json]

Reads a running eoswatch's /metrics (twice, --window apart, for rates), /readyz and /audit and
prints one summary: records in/out, checkpoints, commit latency p50/p99, pending, LSO lag,
canary counts, audit findings, and which alert conditions of alerts/eoswatch.rules.yml hold
(without their for: durations; canary duplicates and losses count since eoswatch started).

Options:
  --url URL            eoswatch's HTTP address (default http://127.0.0.1:7395)
  --window DURATION    time between the two readings (default 5s; 0: one reading, no rates)
  --format F           table (default) or json
  -h, --help           show this help

Exit codes: 0 healthy, 1 eoswatch cannot be reached, 3 an alert condition holds.
`;

export async function handler(args: string[]): Promise<number> {
  const { values } = parse(args, { url: { type: 'string', default: 'http://127.0.0.1:7395' }, window: { type: 'string', default: '5s' }, format: { type: 'string', default: 'table' } });
  if (values.help) return printHelp(help);
  const url = values.url.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+$/.test(url)) throw new EosError(ErrorCodes.USAGE, `--url: expected http://HOST:PORT, found "${values.url}"`);
  const format = choiceOption('format', values.format, ['table', 'json']);
  const windowMs = await durationOption('window', values.window);
  const { StatusReader } = await import('../status/reader.js');
  const { formatSummary } = await import('../status/summary.js');
  const reader = new StatusReader(url);
  let summary = await reader.read();
  if (windowMs > 0) {
    await new Promise((r) => setTimeout(r, windowMs));
    summary = await reader.read();
  }
  process.stdout.write(format === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
  return summary.alerts.length ? ExitCodes.VIOLATION : ExitCodes.OK;
}
