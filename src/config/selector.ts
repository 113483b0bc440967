// The selector grammar of name lists in the configuration (lag.groups, lag.topics): an exact name,
// a regular expression written between slashes (/^flink-.*/), or `all`. The config loader checks
// that every pattern compiles; src/lag/selection.ts matches names with them.

/** The regular expression of a /pattern/ selector, null for a plain name; throws when it does not compile. */
export function selectorPattern(selector: string): RegExp | null {
  return selector.length > 2 && selector.startsWith('/') && selector.endsWith('/') ? new RegExp(selector.slice(1, -1)) : null;
}
