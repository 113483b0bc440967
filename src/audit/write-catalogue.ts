// npm run docs:checks — regenerates docs/audit-checks.md.
import { writeFileSync, mkdirSync } from 'node:fs';
import { ALL_CHECKS } from './checks/index.js';
import { renderCatalogue } from './catalogue.js';

mkdirSync('docs', { recursive: true });
writeFileSync('docs/audit-checks.md', renderCatalogue(ALL_CHECKS));
process.stdout.write(`docs/audit-checks.md: ${ALL_CHECKS.length + 1} checks\n`);
