// promtool on the shipped alerts: the rules check, their unit tests (alerts/tests) pass, and they
// still pass on the rules rendered with another runbook_url base (scripts/alerts-runbook.ts).
// promtool (Debian package `prometheus`) is required: without it these tests FAIL with an install
// hint, they never skip. The rules' contracts without promtool: test/unit/alerts/contracts.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNBOOK_FILES, setRunbookBase } from '../../scripts/alerts-runbook.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES = 'alerts/eoswatch.rules.yml';
const RULE_TESTS = 'alerts/tests/eoswatch.rules.test.yml';
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';
const BASE = 'https://git.example.com/sre/eoswatch/blob/v0.1.0/alerts/RUNBOOK.md';

const read = (f: string): string => readFileSync(join(ROOT, f), 'utf8');
const render = (base: string): Map<string, string> => new Map(RUNBOOK_FILES.map(({ file, alertKey }) => [file, setRunbookBase(read(file), base, file, alertKey)]));

function promtool(args: string[]): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    assert.fail(
      `promtool not found (${PROMTOOL}). Install the Debian package "prometheus" (apt-get update && apt-get install -y prometheus), ` +
        'or set PROMTOOL to the promtool binary. These tests never skip.',
    );
  }
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

describe('alerts: promtool', () => {
  test(`promtool check rules ${RULES}`, () => {
    const r = promtool(['check', 'rules', RULES]);
    assert.equal(r.status, 0, r.output);
  });

  test(`promtool test rules ${RULE_TESTS}`, () => {
    const r = promtool(['test', 'rules', RULE_TESTS]);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /SUCCESS/);
  });
});

describe('alerts: runbook_url base', () => {
  test('promtool test rules passes on the rules rendered with another base', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eoswatch-runbook-'));
    try {
      const out = render(BASE);
      mkdirSync(join(dir, 'alerts', 'tests'), { recursive: true });
      writeFileSync(join(dir, 'alerts', 'eoswatch.rules.yml'), out.get('alerts/eoswatch.rules.yml')!);
      writeFileSync(join(dir, 'alerts', 'tests', 'eoswatch.rules.test.yml'), out.get('alerts/tests/eoswatch.rules.test.yml')!);
      const r = spawnSync(PROMTOOL, ['test', 'rules', 'alerts/tests/eoswatch.rules.test.yml'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') assert.fail(`promtool not found (${PROMTOOL}): install the Debian package "prometheus"; this test never skips`);
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(`${r.stdout}${r.stderr}`, /SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
