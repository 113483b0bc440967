// Sending records whose partition is chosen by the caller, one partition per request.
//
// kafkajs can lose records of a send that spans several partition leaders: when a leader moves
// during the send, its retry only goes to brokers that have not answered yet (sendMessages keeps a
// response per broker), so a partition whose new leader had already answered is skipped, and the
// send still resolves (tulios/kafkajs#1303). One partition per request means one leader per
// request, which the retry always reaches. Every eoswatch producer sends through here.
import type { Message } from 'kafkajs';
import { EosError, ErrorCodes } from '../errors.js';

interface Sender {
  send(record: { topic: string; messages: Message[]; acks?: number }): Promise<unknown>;
}

/** Sends `messages` (each with its `partition` set) to `topic`, one request per partition, in order of first appearance. */
export async function sendPerPartition(sender: Sender, topic: string, messages: Message[]): Promise<void> {
  const groups = new Map<number, Message[]>();
  for (const m of messages) {
    if (m.partition === undefined) throw new Error(`sendPerPartition: a message for ${topic} has no partition`);
    (groups.get(m.partition) ?? groups.set(m.partition, []).get(m.partition)!).push(m);
  }
  for (const [partition, group] of groups) {
    const acks = await sender.send({ topic, messages: group, acks: -1 });
    assertAcknowledged(acks, topic, partition);
  }
}

/**
 * kafkajs resolves a send whose partition was missing from its metadata (its findLeaderForPartitions
 * skips it) without sending anything: in a transaction, the offsets would then commit without the
 * records. A send counts only when the broker's answer names the partition, without an error.
 */
export function assertAcknowledged(acks: unknown, topic: string, partition: number): void {
  const ok = Array.isArray(acks) && acks.some((a: { topicName?: string; partition?: number; errorCode?: number }) => a?.topicName === topic && a.partition === partition && (a.errorCode ?? 0) === 0);
  if (!ok) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `the send to ${topic} partition ${partition} was not acknowledged by the broker (kafkajs resolved it without an answer for that partition); it counts as failed`);
}
