// Which errors of reading topic ends the transactions service takes topic by topic
// (src/coordinator/partition-ends.ts topicSpecific): errors of one topic, as kafkajs
// reports them, directly or as the cause of a retry that gave up; never a broker that does not answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { topicSpecific } from '../../../src/coordinator/partition-ends.js';

test('an unknown, deleted or refused topic is an error of that topic; a timeout or a lost connection is not', () => {
  const protocol = (type: string, message: string) => Object.assign(new Error(message), { name: 'KafkaJSProtocolError', type });
  assert.equal(topicSpecific(protocol('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition')), true);
  assert.equal(topicSpecific(protocol('TOPIC_AUTHORIZATION_FAILED', 'Not authorized to access topics: [Topic authorization failed]')), true);
  assert.equal(topicSpecific(Object.assign(new Error('Number of retries exceeded'), { originalError: protocol('UNKNOWN_TOPIC_ID', 'x') })), true, 'the cause of a retry that gave up');
  assert.equal(topicSpecific(new Error('fetch failed', { cause: new Error('This server does not host this topic-partition') })), true);
  assert.equal(topicSpecific(protocol('REQUEST_TIMED_OUT', 'The request timed out')), false);
  assert.equal(topicSpecific(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092')), false);
  assert.equal(topicSpecific(Object.assign(new Error('Number of retries exceeded'), { originalError: protocol('NOT_LEADER_OR_FOLLOWER', 'x') })), false);
  assert.equal(topicSpecific(undefined), false);
});
