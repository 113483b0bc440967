// The first start of a Kafka version fetches its jars with Maven, which can take minutes: say so,
// and show the time going by (a live line on a terminal, a line every 10 s in CI logs).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fmtDuration, ProgressLine } from '../../src/progress.js';
import { cacheRoot, ensureKafka } from './kafka-dist.js';

export async function fetchKafkaWithProgress(version: string): Promise<void> {
  if (existsSync(join(cacheRoot(), 'kafka', version, '.complete'))) return;
  const progress = new ProgressLine();
  const t0 = Date.now();
  progress.log(`fetching Kafka ${version} and its dependencies with Maven into ${cacheRoot()} (first run of this version only)`);
  const timer = setInterval(() => progress.update(`fetching Kafka ${version} with Maven: ${fmtDuration((Date.now() - t0) / 1000)} elapsed`), 1000);
  try {
    await ensureKafka(version);
  } finally {
    clearInterval(timer);
  }
  progress.done(`Kafka ${version} fetched in ${fmtDuration((Date.now() - t0) / 1000)}`);
}
