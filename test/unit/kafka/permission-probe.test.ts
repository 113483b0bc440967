// The kind of a failure inside a service's run (src/kafka/permission-probe.ts failureKind): a refusal
// by the brokers, however kafkajs wraps it, is "permission"; anything else is "error".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureKind } from '../../../src/kafka/permission-probe.js';

test('failureKind: a refusal (its type, its message, or a cause\'s) is permission; other failures are error', () => {
  assert.equal(failureKind(Object.assign(new Error('x'), { type: 'GROUP_AUTHORIZATION_FAILED' })), 'permission');
  assert.equal(failureKind(new Error('Not authorized to access topics: [Topic authorization failed]')), 'permission');
  assert.equal(failureKind(new Error('wrapped', { cause: Object.assign(new Error('y'), { type: 'TOPIC_AUTHORIZATION_FAILED' }) })), 'permission');
  assert.equal(failureKind(new Error('Connection timeout')), 'error');
  assert.equal(failureKind(new Error('There is no leader for this topic-partition as we are in the middle of a leadership election')), 'error');
  assert.equal(failureKind(undefined), 'error');
});
