// kafkajs' own error and log texts, for the redaction tests: every message literal in kafkajs'
// source (node_modules/kafkajs/src: errors thrown, lines logged, the protocol error table), with
// its template placeholders filled in as kafkajs fills them at run time (API names, keys and
// versions, broker addresses, topic names, error codes), and texts recorded from a real cluster.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const KAFKAJS_SRC = join(dirname(require.resolve('kafkajs/package.json')), 'src');

/** A placeholder's value, by what its expression names. */
function fill(expr: string): string {
  if (/requestInfo/.test(expr)) return 'Produce(key: 0, version: 7)';
  if (/broker|host|address/i.test(expr)) return 'kafka-2.example.internal:9092';
  if (/topic/i.test(expr)) return 'orders.events-v1';
  if (/group/i.test(expr)) return 'eoswatch-orders';
  if (/apiName|name/.test(expr)) return 'Produce';
  if (/code/i.test(expr)) return '51';
  if (/key|version|id|count|retry|time|partition|size|offset|epoch|length|ms/i.test(expr)) return '7';
  if (/message|error|e\b/i.test(expr)) return 'Connection error: connect ECONNREFUSED 10.0.0.2:9092';
  return 'value';
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) {
      if (!['fixtures', 'testHelpers'].includes(f)) sourceFiles(p, out);
    } else if (p.endsWith('.js') && !p.endsWith('.spec.js')) out.push(p);
  }
  return out;
}

/** Message literals of kafkajs' source: the first argument of an Error, a log call or super(). */
export function kafkajsSourceTexts(): string[] {
  const texts = new Set<string>();
  for (const file of sourceFiles(KAFKAJS_SRC)) {
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:Error|logger\.\w+|log(?:Debug|Error|Info|Warn)|super)\(\s*(`[^`]*`|'[^'\n]*')/g)) {
      const text = m[1]!.slice(1, -1).replace(/\$\{([^}]*)\}/g, (_x, expr: string) => fill(expr));
      if (text.trim()) texts.add(text);
    }
  }
  const table = require('kafkajs/src/protocol/error') as { errorCodes: { message: string }[] };
  for (const e of table.errorCodes) texts.add(e.message);
  // How kafkajs names a request in its log lines and timeouts (src/network/connection.js requestInfo).
  for (const [name, key, version] of [['Produce', 0, 7], ['Fetch', 1, 11], ['ListOffsets', 2, 3], ['Metadata', 3, 6], ['FindCoordinator', 10, 2], ['InitProducerId', 22, 1], ['AddPartitionsToTxn', 24, 1], ['EndTxn', 26, 1]] as const) {
    texts.add(`Request ${name}(key: ${key}, version: ${version})`);
    texts.add(`Response ${name}(key: ${key}, version: ${version})`);
    texts.add(`Request ${name}(key: ${key}, version: ${version}) timed out`);
  }
  return [...texts].sort();
}

/**
 * Texts kafkajs 2.2.4 logged or threw against a real local cluster (1 and 3 nodes): produce to a
 * missing topic, a closed port, topics created twice and deleted when missing, a group coordinator
 * looked up, a broker SIGKILLed under a pipeline. Recorded as they came, ports included.
 */
export const RECORDED_KAFKAJS_TEXTS = [
  'Connection error: connect ECONNREFUSED 127.0.0.1:1',
  'Connection error: read ECONNRESET',
  'Could not delete topics',
  'Failed to connect to seed broker, trying another broker from the list: Connection error: connect ECONNREFUSED 127.0.0.1:1',
  'Failed to send messages: Closed connection',
  'Failed to send messages: Connection error: connect ECONNREFUSED 127.0.0.1:39093',
  'Found group coordinator',
  'Group coordinator not available, retrying...',
  'KafkaJS v2.0.0 switched default partitioner. To retain the same partitioning behavior as in previous versions, create the producer with the option "createPartitioner: Partitioners.LegacyPartitioner". See the migration guide at https://kafka.js.org/docs/migration-guide-v2.0.0#producer-new-default-partitioner for details. Silence this warning by setting the environment variable "KAFKAJS_NO_PARTITIONER_WARNING=1"',
  'Request ApiVersions(key: 18, version: 2)',
  'Request CreateTopics(key: 19, version: 3)',
  'Request DeleteTopics(key: 20, version: 1)',
  'Request DescribeConfigs(key: 32, version: 2)',
  'Request GroupCoordinator(key: 10, version: 2)',
  'Request Metadata(key: 3, version: 6)',
  'Request Produce(key: 0, version: 7)',
  'Response ApiVersions(key: 18, version: 2)',
  'Response CreateTopics(key: 19, version: 3)',
  'Response DeleteTopics(key: 20, version: 1)',
  'Response DescribeConfigs(key: 32, version: 2)',
  'Response GroupCoordinator(key: 10, version: 2)',
  'Response Metadata(key: 3, version: 6)',
  'Response without match',
  'The group coordinator is not available',
  'This server does not host this topic-partition',
  'Topic creation errors',
  'Tried to find group coordinator',
  'Verified support for SaslAuthenticate',
];
