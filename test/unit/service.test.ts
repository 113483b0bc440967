// A service's last report as a JSON route (src/service.ts, jsonReportRouter): 503 naming what is awaited,
// then the report, redacted, indented on ?pretty=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { jsonReportRouter } from '../../src/service.js';

test('503 with what is awaited before the first report, then 200 with it, redacted; ?pretty=1 indents', async () => {
  let report: unknown;
  const app = express();
  app.use('/r', jsonReportRouter(() => report, () => 'the first pass has not finished'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/r`;
  try {
    const before = await fetch(url);
    assert.equal(before.status, 503);
    assert.equal(before.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(await before.text(), '{"status":"the first pass has not finished"}\n');
    report = { ids: 2, password: 'hunter2', nested: { sasl: { password: 'x' } } };
    const after = await fetch(url);
    assert.equal(after.status, 200);
    const text = await after.text();
    assert.doesNotMatch(text, /hunter2/);
    assert.equal(JSON.parse(text).ids, 2);
    assert.equal(text.includes('\n  '), false, 'compact by default');
    const pretty = await (await fetch(`${url}?pretty=1`)).text();
    assert.match(pretty, /^\{\n {2}"ids": 2,/);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
