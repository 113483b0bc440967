#!/usr/bin/env node
// Entry point of the installed CLI: runs the compiled build (npm run build; npm install does it).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('eoswatch: dist/cli.js is missing; run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exit(await main(process.argv.slice(2)));
