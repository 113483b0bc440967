// Regenerates the terminal captures in README.md: each block after a `<!-- capture: NAME -->`
// marker is replaced by what the command behind NAME prints now. `npm run docs:captures`
// (starts a local 3-node demo for about a minute; stops it by pid at the end).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoInstructions } from '../harness/demo/kafka.js';
import { StatusReader } from '../src/status/reader.js';
import { formatSummary } from '../src/status/summary.js';

export const README = 'README.md';
const SHOWN_URL = 'http://127.0.0.1:7395';

/** The demo's summary once it has run a while (the port it got replaced by the default one). */
async function demoSummary(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'eoswatch-captures-'));
  const demo = spawn('node', ['--import', 'tsx', 'harness/cli.ts', 'demo', '--port', '0', '--dir', join(dir, 'demo'), '--log-format', 'json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buf = '';
      demo.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const m = /status page:\s+(http:\/\/\S+)\//.exec(buf);
        if (m) resolve(m[1]!);
      });
      demo.once('exit', (code) => reject(new Error(`the demo exited (${code}) before printing its URL:\n${buf.slice(-2000)}`)));
    });
    const reader = new StatusReader(url);
    for (const deadline = Date.now() + 180_000; ; ) {
      const s = await reader.read();
      if (s.pipeline.checkpointsCompleted >= 30 && (s.canary?.received ?? 0) > 0 && s.audit && s.windowSeconds !== null) {
        return formatSummary(s).replaceAll(url, SHOWN_URL);
      }
      if (Date.now() > deadline) throw new Error(`the demo did not settle:\n${formatSummary(s)}`);
      await new Promise((r) => setTimeout(r, 5000));
    }
  } finally {
    const exited = new Promise((r) => demo.once('exit', r));
    if (demo.exitCode === null) demo.kill('SIGINT');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}

/** The block a capture replaces: the ```text fence after its marker (test/unit/docs/links.test.ts checks README.md has each). */
export const captureBlock = (name: string): RegExp => new RegExp(`(<!-- capture: ${name} -->\\n\`\`\`text\\n)[\\s\\S]*?(\`\`\`)`);

export const CAPTURES: Record<string, () => Promise<string>> = {
  'demo-summary': demoSummary,
  'demo-instructions': async () => demoInstructions({ dir: '.eoswatch/demo', nodes: 3, url: SHOWN_URL }),
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const readme = await readFile(README, 'utf8');
  let out = readme;
  for (const [name, produce] of Object.entries(CAPTURES)) {
    const block = captureBlock(name);
    if (!block.test(out)) throw new Error(`${README} has no block for capture ${name}`);
    const text = (await produce()).replace(/\s+$/, '');
    out = out.replace(block, (_m, open: string, close: string) => `${open}${text}\n${close}`);
    process.stderr.write(`captured ${name}\n`);
  }
  if (out !== readme) await writeFile(README, out);
  process.stderr.write(out === readme ? 'README.md unchanged\n' : 'README.md updated\n');
}
