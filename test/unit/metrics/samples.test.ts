// The samples of a registry (src/metrics/samples.ts) share the label objects of the series they
// come from where those are already what a sample holds (the per-partition families: tens of
// thousands of label objects, copied every status sample before), and copy them otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Gauge, Registry } from 'prom-client';
import { setDefaultLabels } from '../../../src/metrics/registry.js';
import { registrySamples } from '../../../src/metrics/samples.js';

test('a series\' label object is its sample\'s when its values are strings and no default label is missing; a copy otherwise', async () => {
  for (const defaults of [undefined, { instance: 'a' }]) {
    const registry = new Registry();
    if (defaults) setDefaultLabels(registry, defaults);
    const g = new Gauge({ name: 'g', help: 'h', labelNames: ['topic', 'partition', 'instance'], registers: [registry] });
    const strings = { topic: 't', partition: '1', instance: 'b' };
    const withoutDefault = { topic: 't', partition: '2' };
    const numbers = { topic: 't', partition: 3, instance: 'b' };
    g.set(strings, 1);
    g.set(withoutDefault, 2);
    g.set(numbers, 3);
    const read = (await registrySamples(registry)).samples;
    const of = (v: number) => read.find((s) => s.value === v)!;
    assert.equal(of(1).labels, strings, 'no copy');
    assert.deepEqual(of(2).labels, defaults ? { ...withoutDefault, ...defaults } : withoutDefault);
    assert.equal(of(2).labels === withoutDefault, !defaults, 'a copy with the default label added, only when there is one');
    assert.deepEqual(of(3).labels, { topic: 't', partition: '3', instance: 'b' });
    assert.notEqual(of(3).labels, numbers);
    assert.deepEqual(numbers, { topic: 't', partition: 3, instance: 'b' }, 'the series\' own object unchanged');
    assert.deepEqual(withoutDefault, { topic: 't', partition: '2' }, 'the series\' own object unchanged');
  }
});
