// The entry of the local-cluster CLIs (npm run kafka, npm run flink, npm run streams), as of
// src/cli.ts: run when the module is the process's main one, exit with the command's code, or
// report the error that ended it through reportError (src/errors.ts: redacted; exit 2 for a bad
// option or value, naming it, 1 for a runtime failure).
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { reportError } from '../../src/errors.js';

/** Whether the module at moduleUrl is the script node was started with (not imported by a test). */
function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/** `npm run NAME -- …`: runs main with the arguments when moduleUrl is the main module. */
export function runCliMain(moduleUrl: string, name: string, main: (argv: string[]) => Promise<number>): void {
  if (!isMain(moduleUrl)) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => process.exit(reportError(err, name, `npm run ${name} -- --help`)),
  );
}
