// Preloaded by `npm run test:unit` (--import): unit tests start no process. In a test file's
// process (Node's test runner sets NODE_TEST_CONTEXT there, not in the runner itself), every
// function of node:child_process that starts one throws instead, naming the command: a test that
// needs a process (the CLI, kubectl, promtool, a process killed on purpose) is an integration test
// (test/integration/).
import { createRequire, syncBuiltinESMExports } from 'node:module';

if (process.env.NODE_TEST_CONTEXT) {
  const childProcess = createRequire(import.meta.url)('node:child_process') as Record<string, unknown>;
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    childProcess[name] = (command: unknown) => {
      throw new Error(`unit tests start no process (child_process.${name} ${String(command)}): this test belongs in test/integration/`);
    };
  }
  syncBuiltinESMExports();
}
