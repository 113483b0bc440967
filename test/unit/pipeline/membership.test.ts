// GroupMembership (src/pipeline/membership.ts) on a manual clock: when the group's last word is
// recent enough to initialise a partition's producer on, and what a wait for its next word ends in.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, settle } from '../../../src/runtime/clock.js';
import { GroupMembership, isMembershipRefusal } from '../../../src/pipeline/membership.js';

const SESSION = 6000;

function setup() {
  const clock = new ManualClock(0);
  return { clock, m: new GroupMembership(clock, SESSION) };
}

/** The outcome of confirm() so far: undefined while it waits. */
function watch(m: GroupMembership): { result: boolean | undefined } {
  const w = { result: undefined as boolean | undefined };
  void m.confirm().then((r) => (w.result = r));
  return w;
}

describe('GroupMembership', () => {
  test('fresh for less than half a session timeout after the group confirmed this member, not before any word', async () => {
    const { clock, m } = setup();
    assert.equal(m.fresh, false, 'no word yet');
    m.confirmed();
    assert.equal(m.fresh, true);
    await clock.advance(SESSION / 2 - 1);
    assert.equal(m.fresh, true);
    assert.equal(await m.confirm(), true, 'at once while fresh');
    await clock.advance(1);
    assert.equal(m.fresh, false, 'half a session without a word');
    m.confirmed();
    assert.equal(m.fresh, true, 'a heartbeat accepted renews it');
  });

  test('a refusal ends freshness at once, and confirm() says false without waiting; the next confirmation clears it', async () => {
    const { clock, m } = setup();
    m.confirmed();
    m.lost();
    assert.equal(m.fresh, false);
    assert.equal(await m.confirm(), false);
    assert.equal(clock.timersPending, 0, 'no wait was started');
    await clock.advance(1);
    m.confirmed();
    assert.equal(m.fresh, true);
    assert.equal(await m.confirm(), true);
  });

  test('an old word: confirm() waits for the next one and is true when the group confirms this member', async () => {
    const { clock, m } = setup();
    m.confirmed();
    await clock.advance(SESSION); // a pause past the session
    const w = watch(m);
    await clock.advance(SESSION - 1);
    assert.equal(w.result, undefined, 'still waiting');
    m.confirmed();
    await settle();
    assert.equal(w.result, true);
    assert.equal(clock.timersPending, 0, 'the wait timer is gone');
  });

  test("an answer read late, after a pause, speaks of the time it was asked: it neither makes the member fresh nor answers a waiter", async () => {
    const { clock, m } = setup();
    m.confirmed();
    const asked = clock.now();
    await clock.advance(SESSION * 2); // paused with a heartbeat in flight
    const w = watch(m);
    m.confirmed(asked); // the heartbeat's answer, read on resuming
    await settle();
    assert.equal(m.fresh, false);
    assert.equal(w.result, undefined, 'still waiting for a word asked since');
    m.confirmed(clock.now() - SESSION / 2 + 1); // asked within the last half session
    await settle();
    assert.equal(w.result, true);
  });

  test('a refusal is cleared only by a word asked after it', async () => {
    const { clock, m } = setup();
    m.confirmed();
    const before = clock.now();
    await clock.advance(100);
    m.lost();
    m.confirmed(before);
    assert.equal(m.fresh, false, 'asked before the refusal');
    m.confirmed(clock.now());
    assert.equal(m.fresh, false, 'asked in the same instant as the refusal');
    await clock.advance(1);
    m.confirmed(clock.now());
    assert.equal(m.fresh, true);
  });

  test('an old word: confirm() is false when the group refuses this member meanwhile (a zombie learns it was replaced)', async () => {
    const { clock, m } = setup();
    m.confirmed();
    await clock.advance(SESSION * 2);
    const w1 = watch(m);
    const w2 = watch(m);
    await clock.advance(100);
    m.lost();
    await settle();
    assert.deepEqual([w1.result, w2.result], [false, false], 'every waiter answered');
    assert.equal(clock.timersPending, 0);
  });

  test('an old word and silence: confirm() is false after one session timeout', async () => {
    const { clock, m } = setup();
    const w = watch(m);
    await clock.advance(SESSION - 1);
    assert.equal(w.result, undefined);
    await clock.advance(1);
    assert.equal(w.result, false);
    m.confirmed();
    await settle();
    assert.equal(w.result, false, 'a later word does not change an answer given');
  });

  test('refusals are the group errors of a member that may no longer hold its assignment, anywhere in the cause chain', () => {
    for (const type of ['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'FENCED_INSTANCE_ID']) {
      assert.equal(isMembershipRefusal(Object.assign(new Error('x'), { type })), true, type);
      assert.equal(isMembershipRefusal(new Error('wrapped', { cause: Object.assign(new Error('x'), { type }) })), true, `${type} as a cause`);
    }
    for (const type of ['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE', 'REQUEST_TIMED_OUT', 'NETWORK_EXCEPTION']) {
      assert.equal(isMembershipRefusal(Object.assign(new Error('x'), { type })), false, type);
    }
    assert.equal(isMembershipRefusal(new Error('The group is rebalancing')), false, 'a message alone is no refusal');
    assert.equal(isMembershipRefusal(undefined), false);
  });
});
