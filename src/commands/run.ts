// eoswatch run: the daemon and exporter.
import type { Config } from '../config/types.js';
import { redactConfig } from '../config/load.js';
import { EosError, ErrorCodes } from '../errors.js';
import { createLogger } from '../log.js';
import { VERSION } from '../version.js';
import { runUntilStopped } from '../lifecycle.js';
import { WEB_OPTIONS, choiceOption, configFrom, logFormatOption, parse, printHelp, webSettings } from './options.js';

export const help = `Usage: eoswatch run [--config FILE] [--start-from earliest|latest] [--log-format auto|json|pretty]
                    [--web.listen-address [HOST]:PORT] [--web.config.file FILE]

Starts the daemon: the HTTP server (/metrics, /healthz, /readyz) and every service the
configuration enables. SIGTERM or SIGINT stops it within shutdown.gracePeriod.

Options:
  -c, --config FILE        YAML configuration (default: $EOSWATCH_CONFIG, else built-in defaults)
  --start-from POSITION    this run only: partitions of the pipeline's source without a committed
                           offset start at earliest or latest (bootstrapping a new group); the
                           config's pipeline.startFrom (none: refuse) applies to every later run,
                           and is what the audit judges
  --log-format F           json (one object a line), pretty (readable lines) or auto: pretty
                           on a terminal, else json (default: the config's log.format, auto)
  --web.listen-address ADDR  where to listen, e.g. :7395, 127.0.0.1:7395, [::1]:7395 (overrides
                           http.host/port)
  --web.config.file FILE   TLS and basic auth, the Prometheus exporter toolkit's web configuration
                           file (overrides http.webConfigFile)
  -h, --help               show this help
`;

/** When the daemon gives back the memory it grew while starting (src/memory.ts). */
const STARTUP_TRIM_AFTER_MS = 30_000;

/** `run --start-from`: a one-run bootstrap position; the configured startFrom stays what the audit judges. */
export function withStartFrom(config: Config, flag: string | undefined): Config {
  if (flag === undefined) return config;
  const startFrom = choiceOption('start-from', flag, ['earliest', 'latest']);
  if (!config.pipeline.enabled) throw new EosError(ErrorCodes.USAGE, '--start-from: the configuration has no enabled pipeline');
  return { ...config, pipeline: { ...config.pipeline, startFrom, configuredStartFrom: config.pipeline.startFrom } };
}

export async function handler(args: string[]): Promise<number> {
  const { values } = parse(args, { config: { type: 'string', short: 'c' }, 'start-from': { type: 'string' }, 'log-format': { type: 'string' }, ...WEB_OPTIONS });
  if (values.help) return printHelp(help);
  const config = withStartFrom(await configFrom(values.config), values['start-from']);
  const web = await webSettings(config, values, values.config ?? process.env.EOSWATCH_CONFIG);
  const { logDestination } = await import('../log-format.js');
  const logger = createLogger(config.log.level, logDestination(logFormatOption(values['log-format'], config.log.format)));
  logger.info({ version: VERSION, config: redactConfig(config) }, 'eoswatch starting');
  if (config.pipeline.configuredStartFrom !== undefined) {
    logger.warn(
      { startFrom: config.pipeline.startFrom, configured: config.pipeline.configuredStartFrom },
      `this run only: partitions without a committed offset start at ${config.pipeline.startFrom} (--start-from); later runs use pipeline.startFrom: ${config.pipeline.configuredStartFrom}`,
    );
  }
  return runUntilStopped(async () => {
    // Loaded here, not at the top: the daemon's modules load only once it starts.
    const { createDaemon } = await import('../create-daemon.js');
    const { checkTransform } = await import('../pipeline/transforms/index.js');
    await checkTransform(config.pipeline, values.config);
    const { daemon, fatal } = createDaemon(config, logger, web);
    await daemon.start();
    // Start-up grew V8's young generation; give it back once the first readings are done (src/memory.ts).
    const { trimAfterStartup } = await import('../memory.js');
    const trim = trimAfterStartup(STARTUP_TRIM_AFTER_MS);
    return {
      stop: () => {
        clearTimeout(trim);
        return daemon.stop();
      },
      fatal,
    };
  }, logger, { gracePeriodMs: config.shutdown.gracePeriod });
}
