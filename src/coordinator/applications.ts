// Transactional ids grouped into applications. Ids are unbounded (a Kafka Streams app gets new
// ones with every process, Flink's KafkaSink one per subtask and checkpoint), so they are never a
// metric label: the application is, bounded by a cap. Pure: no I/O, no clock.
//
// Recognisers, first match wins:
// - user patterns: a regular expression with a named group `app` (config), e.g. ^(?<app>orders)-\d+$;
// - eoswatch's own pipeline: `<transactionalIdPrefix>-<source topic>-<partition>`
//   (src/pipeline/partition-task.ts), for the prefixes the config names;
// - Kafka Streams exactly_once_v2: `<application.id>-<process UUID>-<thread index>`;
// - Flink's KafkaSink: `<transactionalIdPrefix>-<subtask>-<checkpoint or pool counter>` (the
//   connector's TransactionalIdFactory, for both its incrementing and its pooling naming);
// - else the id itself is its own application.
import { EosError, ErrorCodes } from '../errors.js';

export type Engine = 'eoswatch' | 'kafka-streams' | 'flink' | 'pattern' | 'id';

export interface Recognised {
  application: string;
  engine: Engine;
}

export interface RecogniserOptions {
  /** Regular expressions with a named group `app`, tried first, in order. */
  patterns?: RegExp[];
  /** eoswatch pipelines' transactionalIdPrefix values. */
  eoswatchPrefixes?: string[];
}

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const STREAMS_EOS_V2 = new RegExp(`^(.+)-${UUID}-\\d+$`);
const FLINK_KAFKA_SINK = /^(.+)-\d+-\d+$/;

/** Checks that a user pattern has the named group `app`; the message names the pattern. */
export function checkPattern(source: string): RegExp {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (err) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `transactional id pattern ${JSON.stringify(source)} is not a regular expression: ${(err as Error).message}`);
  }
  if (!/\(\?<app>/.test(source)) throw new EosError(ErrorCodes.CONFIG_INVALID, `transactional id pattern ${JSON.stringify(source)} has no named group "app" (e.g. ^(?<app>orders)-\\d+$)`);
  return re;
}

/** `<prefix>-<topic>-<partition>`: the ids of an eoswatch pipeline with that prefix. */
function eoswatchShaped(prefix: string): RegExp {
  return new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-.+-\\d+$`);
}

/** The application a transactional id belongs to, by the recognisers above. */
export function recognise(transactionalId: string, opts: RecogniserOptions = {}): Recognised {
  for (const re of opts.patterns ?? []) {
    const app = re.exec(transactionalId)?.groups?.app;
    if (app) return { application: app, engine: 'pattern' };
  }
  for (const prefix of opts.eoswatchPrefixes ?? []) {
    if (eoswatchShaped(prefix).test(transactionalId)) return { application: prefix, engine: 'eoswatch' };
  }
  const streams = STREAMS_EOS_V2.exec(transactionalId);
  if (streams) return { application: streams[1]!, engine: 'kafka-streams' };
  const flink = FLINK_KAFKA_SINK.exec(transactionalId);
  if (flink) return { application: flink[1]!, engine: 'flink' };
  return { application: transactionalId, engine: 'id' };
}

/** The application label of ids beyond the cap. */
export const OTHER_APPLICATION = '(other)';

/**
 * Names applications with a cap on how many distinct names it hands out: the first `cap` keep
 * their names, later ones are OTHER_APPLICATION (counted in `overflowed`), so a cluster with
 * thousands of ungroupable ids cannot explode the series count.
 */
export class ApplicationNamer {
  private readonly known = new Map<string, Recognised>();
  private readonly overflow = new Set<string>();

  constructor(
    private readonly opts: RecogniserOptions,
    private readonly cap: number,
  ) {}

  name(transactionalId: string): Recognised {
    const r = recognise(transactionalId, this.opts);
    const key = `${r.engine}\u0000${r.application}`;
    if (this.known.has(key)) return this.known.get(key)!;
    if (this.known.size < this.cap) {
      this.known.set(key, r);
      return r;
    }
    this.overflow.add(key);
    return { application: OTHER_APPLICATION, engine: r.engine };
  }

  /** Distinct applications named so far (at most the cap). */
  get size(): number {
    return this.known.size;
  }

  /** Distinct applications folded into OTHER_APPLICATION. */
  get overflowed(): number {
    return this.overflow.size;
  }
}
