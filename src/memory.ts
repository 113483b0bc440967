// Gives back the young generation V8 grew while the daemon started.
//
// Loading the modules, compiling the config schema and the first readings of every service make V8
// grow its young generation (the semi-spaces) to its maximum, 2 × 16 MiB. V8 shrinks it again only
// in a scavenge that runs while little is being allocated, and an idle daemon allocates so little
// that none comes for a long time: it kept 32 MiB of young generation it did not use (about a third
// of its RSS; bench/scrape.bench.ts). One minor collection once start-up is over, while allocation
// is low, lets V8 shrink it (to about 5 MiB measured). V8 has no API for this besides its testing
// hook `gc`, which is reached through a flag set at run time and then unset again.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One minor (young generation) collection; false when V8 does not offer it. */
export function collectYoungGeneration(): boolean {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as ((o?: { type: 'minor' | 'major' }) => void) | undefined;
    setFlagsFromString('--no-expose-gc');
    if (typeof gc !== 'function') return false;
    gc({ type: 'minor' });
    return true;
  } catch {
    return false;
  }
}

/** collectYoungGeneration() once, `afterMs` from now (an unref'd timer: it never keeps the process alive). */
export function trimAfterStartup(afterMs: number): NodeJS.Timeout {
  const t = setTimeout(collectYoungGeneration, afterMs);
  t.unref();
  return t;
}
