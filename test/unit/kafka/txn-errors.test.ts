// The errors of the transaction coordinator's admin APIs (src/kafka/txn-errors.ts): what each code
// asks for (a retry, a permission, nothing to do), and the error an entry of an answer carries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS, errorKind, errorName, kafkaError, thrownError, unsupported } from '../../../src/kafka/txn-errors.js';

test('error kinds: moved or loading coordinators are retried, ACL failures are permission errors', () => {
  assert.equal(errorKind(0), 'none');
  for (const c of [14, 15, 16, 6]) assert.equal(errorKind(c), 'retry', errorName(c));
  for (const c of [29, 31, 53]) assert.equal(errorKind(c), 'permission', errorName(c));
  for (const c of [-1, 3, 105, 128, 35]) assert.equal(errorKind(c), 'error', errorName(c));
  assert.equal(errorName(53), 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
  assert.equal(errorName(9999), 'ERROR_9999');
});

test('an entry\'s error: a code keeps its kind (UNSUPPORTED_VERSION its own), a thrown error without a code is a client error', () => {
  assert.deepEqual(kafkaError(53), { code: 53, name: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', kind: 'permission', message: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' });
  assert.deepEqual(kafkaError(16, 'moved'), { code: 16, name: 'NOT_COORDINATOR', kind: 'retry', message: 'moved' });
  assert.equal(kafkaError(ERRORS.UNSUPPORTED_VERSION).kind, 'unsupported');
  assert.equal(kafkaError(0).kind, 'error', 'no error code is no answer either');
  assert.deepEqual(thrownError(Object.assign(new Error('This is not the correct coordinator'), { code: 16, type: 'NOT_COORDINATOR' })), { code: 16, name: 'NOT_COORDINATOR', kind: 'retry', message: 'This is not the correct coordinator' });
  assert.deepEqual(thrownError(new Error('Connection error: connect ECONNREFUSED')), { code: -1, name: 'CLIENT_ERROR', kind: 'error', message: 'Connection error: connect ECONNREFUSED' });
  assert.equal(thrownError(Object.assign(new Error('x'), { code: 'ECONNRESET' })).name, 'CLIENT_ERROR', 'a system error code is no Kafka code');
  assert.equal(thrownError('plain').message, 'plain');
  assert.deepEqual(unsupported('no ListTransactions'), { code: 35, name: 'UNSUPPORTED_VERSION', kind: 'unsupported', message: 'no ListTransactions' });
});
