// Kafka's signed varint (zigzag, as record batches v2 encode lengths, deltas and counts), for the
// unit tests that build record batches by hand.
export function zigzag(n: number): number[] {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const out: number[] = [];
  while (z >= 0x80) {
    out.push((z % 128) | 0x80);
    z = Math.floor(z / 128);
  }
  out.push(z);
  return out;
}
