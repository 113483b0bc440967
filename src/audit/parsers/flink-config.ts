// Flink configuration files, read the way Flink reads them, and the checkpointing facts in them.
//
// Two formats exist. The legacy flink-conf.yaml (Flink <= 1.x) is not YAML: GlobalConfiguration
// reads it line by line, cuts at the first `#`, splits at the first ": " and keeps both sides
// literally (`a.b: 1 min` is the string "1 min"). The config.yaml of Flink 1.19+ and 2.x is real
// YAML whose nested maps are flattened into dotted keys.
import { basename } from 'node:path';
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { CheckpointFacts } from '../types.js';
import { readConfigText, type ConfigProblem } from './properties.js';
import { EosError, ErrorCodes } from '../../errors.js';

export type FlinkConfigFormat = 'legacy' | 'standard';

export interface ParsedFlinkConfig {
  props: Map<string, string>;
  /** 1-based line where each (flattened) key was defined. */
  lines: Map<string, number>;
  problems: ConfigProblem[];
  format: FlinkConfigFormat;
}

function parseLegacy(text: string, file: string): ParsedFlinkConfig {
  const props = new Map<string, string>();
  const lines = new Map<string, number>();
  const problems: ConfigProblem[] = [];
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = i + 1;
    // As GlobalConfiguration: everything after the first `#` is a comment, even inside a value.
    const conf = raw.split('#', 1)[0]!.trim();
    if (conf === '') return;
    const sep = conf.indexOf(': ');
    if (sep < 0) {
      problems.push({ line, message: `${file}:${line}: not a key-value pair (Flink needs ": " between key and value); the line is ignored` });
      return;
    }
    const key = conf.slice(0, sep).trim();
    const value = conf.slice(sep + 2).trim();
    if (key === '' || value === '') {
      problems.push({ line, message: `${file}:${line}: empty key or value; the line is ignored` });
      return;
    }
    props.set(key, value);
    lines.set(key, line);
  });
  return { props, lines, problems, format: 'legacy' };
}

function scalarText(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

function parseStandard(doc: Document.Parsed, counter: LineCounter, file: string): ParsedFlinkConfig {
  const props = new Map<string, string>();
  const lines = new Map<string, number>();
  const problems: ConfigProblem[] = [];
  const lineOf = (offset: number | undefined): number => (offset === undefined ? 1 : counter.linePos(offset).line);
  for (const err of doc.errors) {
    const line = lineOf(err.pos[0]);
    // First line only: the yaml library appends the offending source text, which may hold a secret.
    problems.push({ line, message: `${file}:${line}: ${err.message.split('\n')[0]!.replace(/:$/, '')}` });
  }

  const resolve = (node: unknown): unknown => (isAlias(node) ? node.resolve(doc) : node);
  const walk = (node: unknown, prefix: string): void => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const keyNode = resolve(pair.key);
      const line = lineOf(isNode(keyNode) ? keyNode.range?.[0] : undefined);
      if (!isScalar(keyNode) || keyNode.value === null || String(keyNode.value) === '') {
        problems.push({ line, message: `${file}:${line}: a key that is not a plain value is ignored` });
        continue;
      }
      const key = prefix + String(keyNode.value);
      const value = resolve(pair.value);
      if (isMap(value)) {
        walk(value, `${key}.`);
      } else if (isSeq(value)) {
        // Flink's list-typed options take a list; we keep it as one string for the checks.
        const items = value.items.map((item) => {
          const v = resolve(item);
          return isScalar(v) ? scalarText(v.value) : String(v);
        });
        props.set(key, items.join(','));
        lines.set(key, line);
      } else if (isScalar(value) && value.value !== null && scalarText(value.value) !== '') {
        props.set(key, scalarText(value.value));
        lines.set(key, line);
      } else {
        problems.push({ line, message: `${file}:${line}: ${key} has no value; it is ignored` });
      }
    }
  };
  walk(doc.contents, '');
  return { props, lines, problems, format: 'standard' };
}

/**
 * The lines of a Java .properties file (`key=value`, the `=` before any `:`) among the
 * meaningful lines of a text (not blank, not a `#` or `!` comment), when they are the majority:
 * such a file is a Kafka client's or a connector's configuration, not Flink's, and read as Flink's
 * every line would be "not a key-value pair" and checkpointing look disabled. Pure.
 */
export function javaPropertiesLines(text: string): number[] | null {
  let meaningful = 0;
  const found: number[] = [];
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) return;
    meaningful++;
    if (/^[^\s:=]+\s*=/.test(line)) found.push(i + 1);
  });
  return found.length > 0 && found.length * 2 > meaningful ? found : null;
}

/**
 * Parses a Flink configuration file. `flink-conf.yaml` is the legacy flat format, `config.yaml`
 * is YAML; any other name is read as YAML when it is a YAML map and as the flat format otherwise.
 * A Java .properties file (key=value lines) is refused with one error saying so.
 */
export function parseFlinkConfig(text: string, file: string): ParsedFlinkConfig {
  const name = basename(file);
  const propsLines = javaPropertiesLines(text);
  if (propsLines) {
    const at = propsLines.length > 3 ? `${propsLines.slice(0, 3).join(', ')}, …` : propsLines.join(', ');
    throw new EosError(ErrorCodes.CONFIG_INVALID, 
      `${file}: not a Flink configuration file (looks like a Java .properties file: "name=value" at line${propsLines.length > 1 ? 's' : ''} ${at}); ` +
        'Flink reads config.yaml (YAML) or flink-conf.yaml ("name: value" lines); a Kafka client\'s .properties file is audited with --producer, --consumer or --streams',
    );
  }
  if (name === 'flink-conf.yaml') return parseLegacy(text, file);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  if (name === 'config.yaml') return parseStandard(doc, counter, file);
  if (doc.errors.length === 0 && isMap(doc.contents)) return parseStandard(doc, counter, file);
  return parseLegacy(text, file);
}

export async function readFlinkConfigFile(path: string): Promise<ParsedFlinkConfig> {
  return parseFlinkConfig(await readConfigText(path, 'utf8'), path);
}

// Flink's TimeUtils labels. Fractions, signs and compound values ("1h 30min") are not Flink syntax.
const FLINK_UNIT_MS: Record<string, number> = {};
for (const [ms, labels] of [
  [86_400_000, ['d', 'day', 'days']],
  [3_600_000, ['h', 'hour', 'hours']],
  [60_000, ['min', 'm', 'minute', 'minutes']],
  [1000, ['s', 'sec', 'secs', 'second', 'seconds']],
  [1, ['ms', 'milli', 'millis', 'millisecond', 'milliseconds']],
  [0.001, ['µs', 'micro', 'micros', 'microsecond', 'microseconds']],
  [0.000001, ['ns', 'nano', 'nanos', 'nanosecond', 'nanoseconds']],
] as const) {
  for (const label of labels) FLINK_UNIT_MS[label] = ms;
}

/** Flink duration syntax (`10 s`, `1 min`, `5min`, `500 ms`, `1h`; a plain number is milliseconds) → ms. */
export function parseFlinkDuration(text: string): number {
  const m = /^([0-9]+)\s*(\S*)$/.exec(text.trim());
  const unit = m?.[2]?.toLowerCase() ?? '';
  const factor = unit === '' ? 1 : FLINK_UNIT_MS[unit];
  if (!m || factor === undefined) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `invalid Flink duration "${text}": expected a whole number with an optional unit (ms, s, min, h, d), e.g. 500 ms, 10 s, 1 min`);
  }
  return Math.floor(Number(m[1]) * factor);
}

// Option names across Flink versions, newest first: Flink 1.20/2.x renamed some and kept the old
// name as a deprecated key (state.backend → state.backend.type, state.backend.incremental →
// execution.checkpointing.incremental); the execution.checkpointing.* keys exist since 1.10.
const KEYS = {
  mode: ['execution.checkpointing.mode'],
  interval: ['execution.checkpointing.interval'],
  timeout: ['execution.checkpointing.timeout'],
  minPause: ['execution.checkpointing.min-pause'],
  tolerable: ['execution.checkpointing.tolerable-failed-checkpoints'],
  maxConcurrent: ['execution.checkpointing.max-concurrent-checkpoints'],
  unaligned: ['execution.checkpointing.unaligned.enabled', 'execution.checkpointing.unaligned'],
  // RETAIN_ON_CANCELLATION | DELETE_ON_CANCELLATION | NO_EXTERNALIZED_CHECKPOINTS (the default).
  retention: ['execution.checkpointing.externalized-checkpoint-retention'],
  stateBackend: ['state.backend.type', 'state.backend'],
  incremental: ['execution.checkpointing.incremental', 'state.backend.incremental'],
  // The KafkaSink is built in job code (KafkaSink.builder().setDeliveryGuarantee(...)
  // .setTransactionalIdPrefix(...).setProperty("transaction.timeout.ms", ...)), so a cluster
  // config cannot show it. Teams that pass these through the config (the SQL connector's option
  // names, or the builder's names read by their job) are audited; we accept both spellings.
  sinkDeliveryGuarantee: ['sink.delivery-guarantee', 'delivery.guarantee'],
  sinkTransactionalIdPrefix: ['sink.transactional-id-prefix', 'transactional.id.prefix'],
  sinkTransactionTimeout: ['properties.transaction.timeout.ms', 'transaction.timeout.ms'],
} as const;

function first(props: Map<string, string>, keys: readonly string[]): { key: string; value: string } | undefined {
  for (const key of keys) {
    const value = props.get(key)?.trim();
    if (value !== undefined && value !== '') return { key, value };
  }
  return undefined;
}

/** `exactly-once`, `exactly_once`, `EXACTLY_ONCE` → `EXACTLY_ONCE`, as Flink's enum options accept. */
const enumName = (v: string): string => v.trim().toUpperCase().replace(/-/g, '_');

/**
 * The checkpointing facts of a Flink configuration. Only what is configured is filled in (the
 * checks know Flink's defaults and say so), except `mode`, which is EXACTLY_ONCE (Flink's default)
 * whenever an interval is set and undefined when checkpointing is not enabled at all.
 * A value Flink would reject (a bad duration, a non-number) throws an Error naming the key: the
 * job would not start with it either.
 */
export function flinkCheckpointFacts(props: Map<string, string>, target: string): CheckpointFacts {
  const get = (keys: readonly string[]) => first(props, keys);
  const fail = (key: string, value: string, what: string): never => {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${target}: ${key}: "${value}" is not ${what}`);
  };
  const duration = (keys: readonly string[]): number | undefined => {
    const e = get(keys);
    if (!e) return undefined;
    try {
      return parseFlinkDuration(e.value);
    } catch {
      return fail(e.key, e.value, 'a Flink duration (e.g. 10 s, 1 min, 500 ms)');
    }
  };
  const int = (keys: readonly string[]): number | undefined => {
    const e = get(keys);
    if (!e) return undefined;
    return /^-?[0-9]+$/.test(e.value) ? Number(e.value) : fail(e.key, e.value, 'an integer');
  };
  const bool = (keys: readonly string[]): boolean | undefined => {
    const e = get(keys);
    if (!e) return undefined;
    const v = e.value.toLowerCase();
    return v === 'true' ? true : v === 'false' ? false : fail(e.key, e.value, 'true or false');
  };

  const facts: CheckpointFacts = { origin: 'flink', target };
  const interval = duration(KEYS.interval);
  // Flink rejects intervals below 10 ms; 0 or less is how people write "off".
  if (interval !== undefined && interval > 0) {
    facts.intervalMs = interval;
    facts.mode = enumName(get(KEYS.mode)?.value ?? 'EXACTLY_ONCE');
  }
  const timeout = duration(KEYS.timeout);
  if (timeout !== undefined) facts.timeoutMs = timeout;
  const minPause = duration(KEYS.minPause);
  if (minPause !== undefined) facts.minPauseMs = minPause;
  const tolerable = int(KEYS.tolerable);
  if (tolerable !== undefined) facts.tolerableFailed = tolerable;
  const maxConcurrent = int(KEYS.maxConcurrent);
  if (maxConcurrent !== undefined) facts.maxConcurrent = maxConcurrent;
  const unaligned = bool(KEYS.unaligned);
  if (unaligned !== undefined) facts.unaligned = unaligned;
  const retention = get(KEYS.retention);
  if (retention) facts.retainOnCancellation = enumName(retention.value) === 'RETAIN_ON_CANCELLATION';
  const backend = get(KEYS.stateBackend);
  if (backend) facts.stateBackend = backend.value;
  const incremental = bool(KEYS.incremental);
  if (incremental !== undefined) facts.incremental = incremental;

  const guarantee = get(KEYS.sinkDeliveryGuarantee);
  if (guarantee) facts.sinkDeliveryGuarantee = enumName(guarantee.value);
  const prefix = get(KEYS.sinkTransactionalIdPrefix);
  if (prefix) facts.sinkTransactionalIdPrefix = prefix.value;
  const txTimeout = int(KEYS.sinkTransactionTimeout);
  if (txTimeout !== undefined) facts.sinkTransactionTimeoutMs = txTimeout;
  return facts;
}
