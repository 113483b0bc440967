// Configuration files on disk: Java client .properties (producer, consumer, Kafka Streams, Flink
// KafkaSource/KafkaSink properties) and Flink configuration (flink-conf.yaml or config.yaml). Each
// file is its own source: one unreadable or malformed file is a finding, never a crash, and the
// keys that did parse are still audited.
import { readPropertiesFile } from '../parsers/properties.js';
import { flinkCheckpointFacts, readFlinkConfigFile } from '../parsers/flink-config.js';
import type { AuditFacts, ClientFacts } from '../types.js';
import type { AuditSource } from '../runner.js';

export function propertiesSource(role: ClientFacts['role'], path: string): AuditSource {
  return {
    name: `${role}:${path}`,
    async gather(facts: AuditFacts) {
      const parsed = await readPropertiesFile(path);
      facts.clients.push({ role, file: path, props: parsed.props });
      // Messages already name file and line.
      return parsed.problems.map((p) => p.message);
    },
  };
}

export function flinkSource(path: string): AuditSource {
  return {
    name: `flink:${path}`,
    async gather(facts: AuditFacts) {
      const parsed = await readFlinkConfigFile(path);
      // Throws on a value Flink itself would reject: the file then counts as a failed source.
      facts.checkpoints.push(flinkCheckpointFacts(parsed.props, `flink:${path}`));
      // Kafka client settings Flink passes through to its KafkaSink producer.
      const producer = new Map<string, string>();
      for (const [k, v] of parsed.props) {
        const m = /^(?:properties\.|kafka\.producer\.)(.+)$/.exec(k);
        if (m) producer.set(m[1]!, v);
      }
      if (producer.size) facts.clients.push({ role: 'producer', file: `flink:${path}`, props: producer });
      return parsed.problems.map((p) => p.message);
    },
  };
}
