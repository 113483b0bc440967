import { readFileSync } from 'node:fs';

// src/ and dist/ sit at the same depth, so package.json is one level up from either.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION: string = pkg.version;
