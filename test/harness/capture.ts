// A writable stream that keeps what was written, for tests of terminal and log output.
import { PassThrough } from 'node:stream';

export function captureStream(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => (text += d));
  return { stream, text: () => text };
}
