// A real 3-node Kafka 4.x cluster (the default version): transactions, a node killed with
// SIGKILL and restarted, and a teardown that leaves no Java process behind.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_KAFKA_VERSION } from '../../harness/localcluster/kafka-dist.js';
import { useCluster } from '../harness/index.js';
import { until } from '../harness/wait.js';
import { commitAndAbort, healthReportsUp, javaProcessesUnder } from './cluster-scenarios.js';

describe(`3-node Kafka ${DEFAULT_KAFKA_VERSION} cluster`, () => {
  const h = useCluster({ nodes: 3 });

  test('every node runs and the admin client sees all three', async () => {
    assert.equal(h.cluster.version, DEFAULT_KAFKA_VERSION);
    for (const n of h.cluster.nodes) assert.equal(h.cluster.status(n.id), 'running');
    await healthReportsUp(h.cluster);
  });

  test('a transactional producer commits one transaction and aborts another; read_committed sees only the committed one', async () => {
    await commitAndAbort(h.cluster, 'before-kill');
  });

  test('kill -9 of one node leaves the cluster usable, and restart brings it back', async () => {
    await h.cluster.kill(2);
    assert.equal(h.cluster.status(2), 'stopped');
    // Until the controller fences it (broker.session.timeout.ms), metadata still routes to node 2.
    await h.cluster.waitFenced(2);
    await commitAndAbort(h.cluster, 'node-2-down');
    await h.cluster.start(2);
    assert.equal(h.cluster.status(2), 'running');
    await healthReportsUp(h.cluster);
    await commitAndAbort(h.cluster, 'node-2-back');
  });

  test('pause and resume a node', async () => {
    await h.cluster.pause(3);
    assert.equal(h.cluster.status(3), 'paused');
    await h.cluster.resume(3);
    assert.equal(h.cluster.status(3), 'running');
  });

  test('down kills every node and leaves no Java process of the harness behind', async () => {
    const pids = Object.values(h.cluster.pids()).filter((p): p is number => p !== null);
    assert.equal(pids.length, 3);
    const dir = h.cluster.dir;
    assert.equal(javaProcessesUnder(dir).length, 3);
    await h.cluster.down();
    assert.deepEqual(javaProcessesUnder(dir), []);
    // Dead children are reaped by Node's event loop shortly after: poll for it.
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until('every process of the cluster reaped', () => pids.filter(alive), 5000, { intervalMs: 100, done: (left) => left.length === 0 });
  });
});
