// Kafka's primitive types as src/kafka/wire.ts reads and writes them: varints at their byte
// boundaries, and malformed messages refused with the message, the field and the byte named.
// (The headers are held to Kafka's own bytes in txn-protocol.test.ts, with the messages they carry.)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Reader, Writer } from '../../../src/kafka/wire.js';

describe('primitives', () => {
  test('unsigned varints round-trip at the byte boundaries', () => {
    for (const v of [0, 1, 127, 128, 16383, 16384, 2 ** 21, 2 ** 28 - 1, 2 ** 28, 0xffffffff]) {
      const b = new Writer().uvarint(v).build();
      const r = new Reader(b, 'varint');
      assert.equal(r.uvarint('v'), v, `value ${v}`);
      r.end();
    }
    assert.deepEqual([...new Writer().uvarint(300).build()], [0xac, 0x02]);
    assert.throws(() => new Reader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), 'm').uvarint('v'), /longer than 5 bytes/);
  });

  test('an int64 beyond 2^53 is refused with the field named', () => {
    const b = new Writer().int64(2n ** 60n).build();
    assert.throws(() => new Reader(b, 'm').int64('ProducerId'), /m: ProducerId 1152921504606846976 at byte 0 is beyond 2\^53/);
  });

  test('an array count larger than the message is refused before allocating', () => {
    const b = new Writer().uvarint(1_000_000).build();
    assert.throws(() => new Reader(b, 'm').compactArray('Topics', (r) => r.int32('x')), /Topics count 999999 at byte 3 exceeds the message/);
  });

  test('a known tagged field must fill its declared size', () => {
    const b = Buffer.from('010003000000', 'hex'); // tag 0 of 3 bytes, read as int16
    assert.throws(() => new Reader(b, 'm').taggedFields('s', { 0: (r) => void r.int16('x') }), /tag 0 is 3 bytes but its value took 2/);
  });
});
