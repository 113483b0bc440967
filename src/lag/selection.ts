// Which consumer groups and topics the lag service watches: `lag.groups` and `lag.topics` entries
// are exact names, regular expressions written between slashes (/^flink-.*/), or `all`.

import { selectorPattern } from '../config/selector.js';

export type NameMatcher = (name: string) => boolean;


/** A matcher for a list of selectors (validated by the config loader). */
export function nameMatcher(selectors: string[]): NameMatcher {
  if (selectors.includes('all')) return () => true;
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const s of selectors) {
    const p = selectorPattern(s);
    if (p) patterns.push(p);
    else exact.add(s);
  }
  return (name) => exact.has(name) || patterns.some((p) => p.test(name));
}

/** Groups whose lag is read: the matching groups of the cluster's listing (an Empty group with offsets is listed too). */
export function selectGroups(listed: string[], match: NameMatcher): string[] {
  return [...new Set(listed.filter(match))].sort();
}

/** Kafka's internal topics never count as consumed data. */
export function watchedTopic(topic: string, topicMatch: NameMatcher | null): boolean {
  if (topic.startsWith('__')) return false;
  return topicMatch ? topicMatch(topic) : true;
}

/** The exact group names among the selectors (not `all`, not patterns): groups expected to exist. */
export function exactNames(selectors: string[]): string[] {
  if (selectors.includes('all')) return [];
  return [...new Set(selectors.filter((s) => !selectorPattern(s)))].sort();
}
