// The replacements of kafkajs 2.2.4 modules, each put in Node's module cache before kafkajs is
// first loaded (src/kafka/module-cache.ts): src/cli.ts imports this module first, and the test and
// benchmark scripts preload it (`--import ./src/kafka/preload.ts`, package.json).
// - read-committed.ts: the Java consumer's read_committed filter (kafkajs passes records of some
//   aborted transactions);
// - linear-grouping.ts: a send's messages grouped per partition in linear time, not quadratic;
// - txn-retry.ts: the transactional producer's coordinator calls retried on retriable errors;
// - produce-encoding.ts: produce requests encoded into one Buffer, not through per-record objects.
import './read-committed.js';
import './linear-grouping.js';
import './txn-retry.js';
import './produce-encoding.js';
