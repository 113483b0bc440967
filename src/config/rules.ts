// Rules between configuration keys that a JSON schema cannot say (a checkpoint timeout below the
// transaction timeout, a Flink sink's visibility needing the LSO monitor, each Streams application
// once, a cron expression that parses...), checked on the typed configuration after the schema
// (load.ts). Pure.
import cron from 'node-cron';
import type { Path } from './schema.js';
import { selectorPattern } from './selector.js';
import type { Config } from './types.js';

/** Why a /pattern/ selector does not compile, or null. */
function regexProblem(selector: string): string | null {
  try {
    selectorPattern(selector);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Rules between keys that a JSON schema cannot say. */
export function crossFieldProblems(c: Config): { path: Path; text: string }[] {
  const out: { path: Path; text: string }[] = [];
  const p = c.pipeline;
  if (p.enabled) {
    if (p.checkpoint.timeout >= p.transactionTimeout) {
      out.push({
        path: ['pipeline', 'checkpoint', 'timeout'],
        text: `found ${p.checkpoint.timeout} ms, expected less than pipeline.transactionTimeout (${p.transactionTimeout} ms): the broker would abort a transaction the checkpoint still waits for`,
      });
    }
    if (p.heartbeatInterval * 3 > p.sessionTimeout) {
      out.push({ path: ['pipeline', 'heartbeatInterval'], text: `found ${p.heartbeatInterval} ms, expected at most a third of pipeline.sessionTimeout (${p.sessionTimeout} ms)` });
    }
    if (p.sourceTopic === p.sinkTopic) out.push({ path: ['pipeline', 'sinkTopic'], text: `found "${p.sinkTopic}", expected a topic other than sourceTopic` });
  }
  if (c.canary.enabled && !p.enabled) {
    for (const k of ['sourceTopic', 'sinkTopic'] as const) {
      if (!c.canary[k]) out.push({ path: ['canary', k], text: `missing: expected a topic (without pipeline.enabled there is no pipeline topic to default to)` });
    }
  }
  for (const k of ['groups', 'topics'] as const) {
    c.lag[k].forEach((sel, i) => {
      const bad = regexProblem(sel);
      if (bad) out.push({ path: ['lag', k, i], text: `found "${sel}", expected a name or a /regular expression/: ${bad}` });
    });
  }
  if (c.flink.enabled && c.flink.sinks.length && !c.lsoMonitor.enabled) {
    out.push({ path: ['flink', 'sinks'], text: 'set, expected lsoMonitor.enabled true: the visibility latency of a Flink sink comes from the LSO monitor\'s readings' });
  }
  if (c.streams.enabled && !c.streams.applications.length && !c.streams.discover) {
    out.push({ path: ['streams', 'applications'], text: 'empty, expected at least one application (applicationId), or streams.discover: true, when streams.enabled is true: there is nothing to watch otherwise' });
  }
  const seenApps = new Map<string, number>();
  c.streams.applications.forEach((a, i) => {
    const first = seenApps.get(a.applicationId);
    if (first !== undefined) out.push({ path: ['streams', 'applications', i, 'applicationId'], text: `found "${a.applicationId}" again (also at /streams/applications/${first}/applicationId), expected each application once` });
    else seenApps.set(a.applicationId, i);
  });
  if (c.audit.enabled && !cron.validate(c.audit.schedule)) {
    out.push({ path: ['audit', 'schedule'], text: `found "${c.audit.schedule}", expected a cron expression of 5 or 6 fields, e.g. "*/5 * * * *"` });
  }
  return out;
}
