// The documentation holds together: every relative link of README.md and docs/*.md reaches a file
// (and, where it names one, a heading of it), no table is broken by a blank line or a row with
// the wrong number of cells, the README keeps the blocks `npm run docs:captures` rewrites, and its
// "point it at your cluster" configuration validates.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { parseConfigText } from '../../../src/config/load.js';
import { CAPTURES, README, captureBlock } from '../../../scripts/readme-captures.js';

const DOCS = [README, ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The file's lines outside fenced code blocks, with their numbers; inline code spans blanked. */
function proseLines(text: string): { n: number; line: string }[] {
  const out: { n: number; line: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const f = /^\s*(```+|~~~+)/.exec(line);
    if (f) {
      if (fence === undefined) fence = f[1]![0];
      else if (f[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ n: i + 1, line });
  });
  return out;
}

/** GitHub's anchors of a Markdown file's headings (a repeated heading gets -1, -2, ...). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of proseLines(readFileSync(file, 'utf8'))) {
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (!h) continue;
    const base = h[1]!
      .trim()
      .toLowerCase()
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    out.add(k === 0 ? base : `${base}-${k}`);
  }
  return out;
}

/** Unescaped pipes: a table row's cell separators (GitHub splits cells at a pipe inside a code span too). */
const pipes = (line: string): number => (line.replace(/\\\|/g, '').match(/\|/g) ?? []).length;

/** Rows after a blank line without a header and separator above them, and rows with another number of cells than their header. */
function tableProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = proseLines(text);
  let header: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const { n, line } = lines[i]!;
    const prev = lines[i - 1];
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const continues = prev !== undefined && prev.n === n - 1 && prev.line.startsWith('|');
    if (!continues) {
      const sep = lines[i + 1];
      if (!sep || sep.n !== n + 1 || !/^\|(\s*:?-{3,}:?\s*\|)+\s*$/.test(sep.line)) problems.push(`${file}:${n}: a table row without a header and separator line above it (a blank line inside a table?)`);
      header = pipes(line);
    } else if (header !== undefined && pipes(line) !== header) {
      problems.push(`${file}:${n}: ${pipes(line) - 1} cells, the header has ${header - 1}`);
    }
  }
  return problems;
}

describe('documentation links and tables', () => {
  test('every relative link of README.md and docs/*.md reaches a file, and a heading where it names one', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of DOCS) {
      for (const { n, line } of proseLines(readFileSync(file, 'utf8'))) {
        // Links inside inline code are not links.
        const text = line.replace(/`[^`]*`(?!\]\()/g, '');
        for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = m[1]!;
          if (/^[a-z]+:/i.test(target)) continue;
          checked++;
          const [path, anchor] = target.split('#') as [string, string | undefined];
          const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
          if (!existsSync(resolved)) {
            problems.push(`${file}:${n}: ${target}: no file ${resolved}`);
            continue;
          }
          if (anchor !== undefined && resolved.endsWith('.md') && !statSync(resolved).isDirectory() && !anchors(resolved).has(anchor)) {
            problems.push(`${file}:${n}: ${target}: no heading #${anchor} in ${resolved}`);
          }
        }
      }
    }
    assert.ok(checked > 100, `only ${checked} links found`);
    assert.deepEqual(problems, []);
  });

  test('tables: a header and its separator after every blank line, and as many cells in each row as in the header', () => {
    assert.deepEqual(DOCS.flatMap((file) => tableProblems(file, readFileSync(file, 'utf8'))), []);
  });

  test('the table check finds a blank line inside a table (the old Configuration table) and a row with a stray pipe', () => {
    const broken = '| section | keys |\n|---|---|\n| `lag` | `enabled` |\n\n| `flink` | `enabled` |\n';
    assert.deepEqual(tableProblems('t.md', broken), ['t.md:5: a table row without a header and separator line above it (a blank line inside a table?)']);
    assert.deepEqual(tableProblems('t.md', '| a | b |\n|---|---|\n| `x|y` | z |\n| `x\\|y` | z |\n'), ['t.md:3: 3 cells, the header has 2']);
    assert.deepEqual(tableProblems('t.md', '```\n| not | a table |\n```\n'), []);
  });
});

describe('README.md', () => {
  const readme = readFileSync(README, 'utf8');

  test('is a front door: at most 300 lines, linking every document of docs/', () => {
    assert.ok(readme.split('\n').length <= 300, `README.md has ${readme.split('\n').length} lines`);
    for (const f of readdirSync('docs').filter((x) => x.endsWith('.md'))) assert.ok(readme.includes(`](docs/${f})`), `README.md does not link docs/${f}`);
    assert.match(readme, /^npm install && npm run demo$/m);
    assert.match(readme, /^npm test$/m);
  });

  test('keeps a block for every capture of npm run docs:captures', () => {
    const names = Object.keys(CAPTURES);
    assert.ok(names.length >= 2);
    for (const name of names) assert.match(readme, captureBlock(name), `README.md has no \`\`\`text block after <!-- capture: ${name} -->`);
  });

  test('the "point it at your cluster" configuration validates', () => {
    const m = /<!-- config-example[^>]*-->\n```yaml\n([\s\S]*?)```/.exec(readme);
    assert.ok(m, 'README.md has no ```yaml block after <!-- config-example -->');
    const config = parseConfigText(m[1]!, 'README.md (config-example)', { KAFKA_SASL_PASSWORD: 'not-a-real-password' });
    assert.equal(config.pipeline.enabled, false);
    assert.equal(config.lag.enabled, true);
    assert.deepEqual(config.lag.groups, ['orders-enricher']);
    assert.equal(config.kafka.sasl?.mechanism, 'scram-sha-512');
    assert.ok(m[1]!.split('\n').length <= 20, 'the example should stay about a dozen lines');
  });
});
