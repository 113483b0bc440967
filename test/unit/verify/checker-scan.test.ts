// The checker's byte scanner must judge exactly like its JSON.parse path: a differential run over
// generated sink values (the benchmark runs a longer one before it measures; this one stays short
// because mutation testing re-runs it for every mutant of the scanner).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fuzzCheckerScan } from '../../../bench/checker-scan-fuzz.js';

test('byte scanner and JSON.parse path give identical results on 5,000 generated values', () => {
  const r = fuzzCheckerScan(5_000, 7);
  assert.equal(r.mismatch, undefined, r.mismatch);
  assert.equal(r.cases, 5_000);
  assert.ok(r.scannedShare > 0.3 && r.scannedShare < 1, `both paths exercised (scanned share ${r.scannedShare})`);
});
