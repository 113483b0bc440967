// A real 1-node Kafka 3.9 cluster: the older supported line works with the same client code.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../harness/index.js';
import { commitAndAbort, healthReportsUp, javaProcessesUnder } from './cluster-scenarios.js';

const VERSION = '3.9.1';

describe(`1-node Kafka ${VERSION} cluster`, () => {
  const h = useCluster({ nodes: 1, version: VERSION });

  test('commit and abort with replication factor 1', async () => {
    assert.equal(h.cluster.version, VERSION);
    await healthReportsUp(h.cluster);
    await commitAndAbort(h.cluster, 'v39');
  });

  test('kill -9 and restart of the only node: usable again', async () => {
    await h.cluster.kill(1);
    assert.equal(h.cluster.status(1), 'stopped');
    await h.cluster.start(1);
    await commitAndAbort(h.cluster, 'v39-restarted');
  });

  test('down leaves no Java process behind', async () => {
    const dir = h.cluster.dir;
    await h.cluster.down();
    assert.deepEqual(javaProcessesUnder(dir), []);
  });
});
