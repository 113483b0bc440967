// Temporary directories a test file makes, all removed when the file's tests are done.
import { after } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Returns a maker of fresh directories named `<prefix>XXXXXX`; registers their removal. */
export function tempDirs(prefix: string): { make(): Promise<string>; track(dir: string): void } {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  return {
    async make() {
      const d = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    track(dir) {
      dirs.push(dir);
    },
  };
}
