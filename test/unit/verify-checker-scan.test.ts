// The checker's byte scanner must judge exactly like its JSON.parse path: a differential run over
// generated sink values (the benchmark runs a longer one before it measures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fuzzCheckerScan } from '../../bench/checker-scan-fuzz.js';

test('byte scanner and JSON.parse path give identical results on 20,000 generated values', () => {
  const r = fuzzCheckerScan(20_000, 7);
  assert.equal(r.mismatch, undefined, r.mismatch);
  assert.equal(r.cases, 20_000);
  assert.ok(r.scannedShare > 0.3 && r.scannedShare < 1, `both paths exercised (scanned share ${r.scannedShare})`);
});
