// The loop of Kafka's TransactionalMessageCopier (one input partition, read_committed consumer,
// max.poll.records = transaction size, one transaction per poll: begin, send every record to the
// same partition number of the output topic, send the offsets, commit), with two differences:
//   - the producer keeps the Java client's defaults (batch.size 16384, linger.ms 5, 5 in flight)
//     instead of the copier's batch.size=512, which it sets to force many in-flight requests per
//     transaction for system tests and which bounds its throughput;
//   - producer.flush() runs before sendOffsetsToTransaction(), so the timed commitTransaction()
//     is only EndTxn, the same span eoswatch times (its sends are acknowledged before it commits).
// A benchmark baseline for bench/pipeline.bench.ts, not part of the product.
//
//   java -cp <classes>:<kafka libs>/* EosCopy <bootstrap> <inputTopic> <partition> <outputTopic>
//        <transactionSize> <transactionalId> <groupId>
//
// Output (stdout, one event per line):
//   S <epochMs> <recordsToCopy>                                       ready (after initTransactions)
//   C <epochMs> <commitNs> <records> <flushNs> <sendOffsetsNs>       one transaction committed
//   D <epochMs> <recordsCopied>                                       done
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class EosCopy {
    public static void main(String[] args) {
        if (args.length != 7) {
            System.err.println("usage: EosCopy <bootstrap> <inputTopic> <partition> <outputTopic> <transactionSize> <transactionalId> <groupId>");
            System.exit(2);
        }
        String bootstrap = args[0];
        TopicPartition input = new TopicPartition(args[1], Integer.parseInt(args[2]));
        String output = args[3];
        int txnSize = Integer.parseInt(args[4]);

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[5]);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, args[6]);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(txnSize));
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp);
             KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
            consumer.assign(Collections.singleton(input));
            long end = consumer.endOffsets(Collections.singleton(input)).get(input);
            long remaining = end - consumer.position(input);
            producer.initTransactions();
            System.out.println("S " + System.currentTimeMillis() + " " + remaining);
            long copied = 0;
            while (remaining > 0) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) continue;
                producer.beginTransaction();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    producer.send(new ProducerRecord<>(output, r.partition(), r.key(), r.value()));
                }
                long t0 = System.nanoTime();
                producer.flush();
                long t1 = System.nanoTime();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                offsets.put(input, new OffsetAndMetadata(consumer.position(input)));
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                long t2 = System.nanoTime();
                producer.commitTransaction();
                long t3 = System.nanoTime();
                int n = records.count();
                remaining -= n;
                copied += n;
                System.out.println("C " + System.currentTimeMillis() + " " + (t3 - t2) + " " + n + " " + (t1 - t0) + " " + (t2 - t1));
            }
            System.out.println("D " + System.currentTimeMillis() + " " + copied);
        }
    }
}
