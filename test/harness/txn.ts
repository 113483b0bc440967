// A transactional producer that dies with its transaction open: a kafkajs child process sends
// records in a transaction (transaction.timeout.ms 15 min by default) and is SIGKILLed, so the
// transaction holds the partitions' last stable offset until the coordinator's timeout or an abort.
import { endTracked, spawnTracked, waitForLine } from './index.js';

const PRODUCER = `
import { Kafka, logLevel } from 'kafkajs';
const [brokers, id, topic, partition, count, timeout] = process.argv.slice(1);
const kafka = new Kafka({ clientId: id, brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const p = kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1, transactionTimeout: Number(timeout) });
await p.connect();
const txn = await p.transaction();
const t0 = Date.now();
await txn.send({ topic, messages: Array.from({ length: Number(count) }, (_, i) => ({ partition: Number(partition), value: id + '-' + i })) });
console.log('SENT ' + t0);
setInterval(() => {}, 1 << 30);
`;

/** Opens a transaction of `id` with `count` records on topic-partition, then SIGKILLs its producer; resolves with when it began (epoch ms). */
export async function killedWithOpenTransaction(brokers: string[], id: string, topic: string, partition: number, count: number, transactionTimeoutMs = 900_000): Promise<number> {
  const child = spawnTracked('node', ['--input-type=module', '-e', PRODUCER, brokers.join(','), id, topic, String(partition), String(count), String(transactionTimeoutMs)]);
  const m = await waitForLine(child, /^SENT (\d+)$/);
  await endTracked(child);
  return Number(m[1]);
}
