// `eoswatch audit`: one run with the sources a configuration asks for, quiet logs.
import type { Config } from '../config/types.js';
import { createKafka } from '../kafka/client.js';
import { createLogger } from '../log.js';
import { ALL_CHECKS } from './checks/index.js';
import { runAudit, type AuditReport } from './runner.js';
import { sourcesFromConfig } from './sources/index.js';

export async function runConfiguredAudit(config: Config): Promise<AuditReport> {
  const logger = createLogger('silent');
  const kafka = config.audit.cluster ? createKafka(config.kafka, logger, { retry: { retries: 1 } }) : undefined;
  const built = sourcesFromConfig(config, kafka);
  try {
    return await runAudit(built.sources, ALL_CHECKS, { sourceTimeoutMs: config.audit.sourceTimeout });
  } finally {
    await built.close();
  }
}
