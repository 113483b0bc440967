// Sending records whose partition is chosen by the caller, one partition per request.
//
// kafkajs can lose records of a send that spans several partition leaders: when a leader moves
// during the send, its retry only goes to brokers that have not answered yet (sendMessages keeps a
// response per broker), so a partition whose new leader had already answered is skipped, and the
// send still resolves (tulios/kafkajs#1303). One partition per request means one leader per
// request, which the retry always reaches. Every eoswatch producer sends through here.
import type { Message } from 'kafkajs';

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
  for (const group of groups.values()) await sender.send({ topic, messages: group, acks: -1 });
}
