// The transform contract: one input record in, zero or more output records out, synchronously or
// as a Promise (settled within pipeline.transformTimeout). Throwing a RejectedRecord (or anything
// else), rejecting, timing out or returning something that is not an output record sends the
// input record to the dead-letter topic, inside the same transaction, with the reason in a
// header (src/pipeline/transforms/route.ts): a record is never dropped silently.
export interface InputRecord {
  topic: string;
  partition: number;
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

export interface OutputRecord {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string>;
}

export type TransformResult = OutputRecord | OutputRecord[] | null | undefined;

export type TransformFn = (record: InputRecord) => TransformResult | Promise<TransformResult>;

/** A record the transform refuses, with a reason for the dead-letter header. */
export class RejectedRecord extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'RejectedRecord';
  }
}
