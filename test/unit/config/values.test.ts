// Edges of the config file's value syntax: durations and ${VAR} expansion.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from '../../../src/config/duration.js';
import { expandEnv, expandString } from '../../../src/config/env.js';

describe('parseDuration edges', () => {
  test('numbers are milliseconds; negative, NaN and infinite numbers are refused with the value', () => {
    assert.equal(parseDuration(0), 0);
    assert.equal(parseDuration(1.5), 1.5);
    for (const n of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => parseDuration(n), { code: 'EOS_CONFIG_INVALID', message: `invalid duration ${n}: expected a non-negative number of milliseconds` });
    }
  });

  test('surrounding spaces are ignored; digits only are milliseconds; units sum; fractions round', () => {
    assert.equal(parseDuration(' 10s '), 10_000);
    assert.equal(parseDuration(' 42 '), 42);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('1m30s500ms'), 90_500);
    assert.equal(parseDuration('1d1h1m1s1ms'), 90_061_001);
    assert.equal(parseDuration('0.0005s'), 1, '0.5 ms rounds up');
    assert.equal(parseDuration('0.0004s'), 0);
  });

  test('anything but whole unit parts is refused, naming the value and the units', () => {
    for (const bad of ['s5', 'x10s', '10s x', '10s5', '1.s', '.5s', '10S', '1 h']) {
      assert.throws(() => parseDuration(bad), (e: Error) => e.message === `invalid duration "${bad}": expected a number with a unit (ms, s, m, h, d), e.g. 500ms, 10s, 5m, 1h30m`, bad);
    }
  });

  test('a failed parse leaves nothing behind for the next one', () => {
    assert.throws(() => parseDuration('10s x'));
    assert.equal(parseDuration('5m'), 300_000);
    assert.throws(() => parseDuration('1h?'));
    assert.equal(parseDuration('2h'), 7_200_000);
  });
});

describe('formatDuration edges', () => {
  test('zero and parts of a unit are milliseconds; whole units use the largest', () => {
    assert.equal(formatDuration(0), '0ms');
    assert.equal(formatDuration(1000), '1s');
    assert.equal(formatDuration(1500), '1500ms');
    assert.equal(formatDuration(60_000), '1m');
    assert.equal(formatDuration(61_000), '61s');
    assert.equal(formatDuration(7_200_000), '2h');
    assert.equal(formatDuration(5_400_000), '90m');
  });
});

describe('${VAR} expansion edges', () => {
  const expand = (text: string, env: NodeJS.ProcessEnv) => {
    const missing: string[] = [];
    return { text: expandString(text, env, (v) => missing.push(v)), missing };
  };

  test('names of letters, digits and underscores, not starting with a digit', () => {
    assert.deepEqual(expand('${A_1}-${_b}-${Cc9}', { A_1: 'x', _b: 'y', Cc9: 'z' }), { text: 'x-y-z', missing: [] });
    // Anything else after ${ is an error that says what was expected, never silent literal text.
    assert.throws(() => expand('${1A}', { '1A': 'no' }), /at character 3: expected a variable name/);
    assert.throws(() => expand('${A-B}', { A: 'no' }), /at character 4: expected } or :-default after \$\{A\}?/);
    assert.throws(() => expand('${A', { A: 'no' }), /expected } or :-default/);
    assert.throws(() => expand('${A:-x', {}), /unclosed/);
    assert.deepEqual(expand('$A {A}', { A: 'no' }), { text: '$A {A}', missing: [] }, 'no ${: not a reference');
  });

  test('defaults nest: ${A:-${B:-x}} is A, else B, else x; an unused default is not expanded', () => {
    assert.deepEqual(expand('${A:-${B:-x}}', {}), { text: 'x', missing: [] });
    assert.deepEqual(expand('${A:-${B:-x}}', { B: 'b' }), { text: 'b', missing: [] });
    assert.deepEqual(expand('${A:-${B:-x}}', { A: 'a', B: 'b' }), { text: 'a', missing: [] });
    assert.deepEqual(expand('${A:-${B}}', { A: 'a' }), { text: 'a', missing: [] }, 'B is not needed when A is set');
    assert.deepEqual(expand('${A:-${B}}', {}), { text: '', missing: ['B'] });
    assert.throws(() => expand('${A:-'.repeat(9) + 'x' + '}'.repeat(9), {}), /nested more than 8 deep/);
    assert.deepEqual(expand('${A:-'.repeat(8) + 'x' + '}'.repeat(8), {}), { text: 'x', missing: [] });
  });

  test('defaults: used when unset or empty, may be empty or hold colons; no default reports the variable', () => {
    assert.deepEqual(expand('${H:-localhost:9092}', {}), { text: 'localhost:9092', missing: [] });
    assert.deepEqual(expand('${H:-}', {}), { text: '', missing: [] });
    assert.deepEqual(expand('${H:-d}', { H: '' }), { text: 'd', missing: [] }, 'an empty value counts as unset');
    assert.deepEqual(expand('${H:-d}', { H: 'set' }), { text: 'set', missing: [] });
    assert.deepEqual(expand('a${H}b${I}c', {}), { text: 'abc', missing: ['H', 'I'] });
    assert.deepEqual(expand('${H}', { H: '' }), { text: '', missing: ['H'] });
  });

  test('$${VAR} is the literal ${VAR}, also with a default, and its variable is not needed', () => {
    assert.deepEqual(expand('$${H}', {}), { text: '${H}', missing: [] });
    assert.deepEqual(expand('$${H:-d} ${H:-e}', {}), { text: '${H:-d} e', missing: [] });
    assert.deepEqual(expand('$$', {}), { text: '$$', missing: [] });
  });

  test('every string of a document is expanded, other values pass unchanged, problems name their path', () => {
    const { value, problems } = expandEnv(
      { a: ['${X}', 2, { b: '${NOPE}' }], c: true, d: null, e: 1.5, f: { g: { h: '${X}-${ALSO_NOPE}' } } },
      { X: 'x' },
    );
    assert.deepEqual(value, { a: ['x', 2, { b: '' }], c: true, d: null, e: 1.5, f: { g: { h: 'x-' } } });
    assert.deepEqual(problems, [
      { path: ['a', 2, 'b'], variable: 'NOPE' },
      { path: ['f', 'g', 'h'], variable: 'ALSO_NOPE' },
    ]);
    assert.deepEqual(expandEnv('${X}', { X: 'top' }), { value: 'top', problems: [], fromEnv: [[]] }, 'the value came from the environment');
    assert.deepEqual(expandEnv({ a: 'plain', b: '${X:-d}', c: '${NOPE:-d}' }, { X: 'x' }).fromEnv, [['b']], 'only places whose value came from the environment');
  });
});
