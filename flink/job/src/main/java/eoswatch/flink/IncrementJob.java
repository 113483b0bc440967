package eoswatch.flink;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaPartitioner;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

/**
 * The seed's job: topic A {id, ts, value} -> value + 1 -> topic B through the two-phase-commit
 * KafkaSink with EXACTLY_ONCE, source read_committed with offsets committed on checkpoint.
 * Records are eoswatch verification records (src/verify/record.ts), so `eoswatch verify check`
 * can judge the sink. Every checkpoint setting is an argument so tests can submit both a safe
 * and a deliberately unsafe job (the live audit must tell them apart).
 *
 * Arguments (--key value): bootstrap, source-topic, sink-topic, group, transactional-id-prefix,
 * transaction-timeout-ms, delivery (EXACTLY_ONCE | AT_LEAST_ONCE | NONE), checkpoint-interval-ms,
 * checkpoint-timeout-ms, checkpointing-mode, tolerable-failed, max-concurrent, min-pause-ms,
 * unaligned, retention (RETAIN_ON_CANCELLATION | DELETE_ON_CANCELLATION | NO_EXTERNALIZED_CHECKPOINTS),
 * parallelism, name.
 */
public final class IncrementJob {
  private static final Pattern VALUE = Pattern.compile("\"value\"\\s*:\\s*(-?\\d+)");
  private static final Pattern SOURCE_PARTITION = Pattern.compile("\"p\"\\s*:\\s*(\\d+)");

  private IncrementJob() {}

  static Map<String, String> parseArgs(String[] args) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --key value pairs, found \"" + args[i] + "\"");
      }
      out.put(args[i].substring(2), args[++i]);
    }
    return out;
  }

  private static String required(Map<String, String> a, String key) {
    String v = a.get(key);
    if (v == null) throw new IllegalArgumentException("missing --" + key);
    return v;
  }

  /** value + 1; a record without a numeric value fails the job rather than being dropped silently. */
  static String increment(String record) {
    Matcher m = VALUE.matcher(record);
    if (!m.find()) throw new IllegalArgumentException("record has no numeric \"value\": " + record);
    long next = Long.parseLong(m.group(1)) + 1;
    return record.substring(0, m.start(1)) + next + record.substring(m.end(1));
  }

  /** Keeps a verification record in the sink partition of its source partition, so per-partition order holds. */
  static final class SourcePartitioner implements KafkaPartitioner<String> {
    @Override
    public int partition(String record, byte[] key, byte[] value, String topic, int[] partitions) {
      Matcher m = SOURCE_PARTITION.matcher(record);
      int p = m.find() ? Integer.parseInt(m.group(1)) : Math.abs(record.hashCode() % partitions.length);
      return partitions[p % partitions.length];
    }
  }

  /**
   * The sink's transactional-id naming (FLIP-511): INCREMENTING (prefix-subtask-checkpoint, the
   * default) or POOLING (ids reused from a pool, lingering ones found by listing the coordinator's
   * transactions). Only the Kafka connector of the Flink 2.x line has it, so it is looked up by name
   * and the job builds against both lines.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static void setTransactionNaming(KafkaSinkBuilder<String> builder, String name) throws Exception {
    Class<?> strategy;
    try {
      strategy = Class.forName("org.apache.flink.connector.kafka.sink.TransactionNamingStrategy");
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          "--transaction-naming " + name + ": this Kafka connector has no TransactionNamingStrategy (FLIP-511: the connector of the Flink 2.x line)");
    }
    Object value = Enum.valueOf((Class<? extends Enum>) strategy, name);
    builder.getClass().getMethod("setTransactionNamingStrategy", strategy).invoke(builder, value);
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = parseArgs(argv);
    String bootstrap = required(a, "bootstrap");
    String sourceTopic = required(a, "source-topic");
    String sinkTopic = required(a, "sink-topic");
    String group = a.getOrDefault("group", "eoswatch-flink-" + sourceTopic);
    String prefix = a.getOrDefault("transactional-id-prefix", "eoswatch-flink-" + sinkTopic);
    DeliveryGuarantee delivery = DeliveryGuarantee.valueOf(a.getOrDefault("delivery", "EXACTLY_ONCE"));

    Map<String, String> conf = new HashMap<>();
    conf.put("execution.checkpointing.interval", a.getOrDefault("checkpoint-interval-ms", "1000") + " ms");
    conf.put("execution.checkpointing.mode", a.getOrDefault("checkpointing-mode", "EXACTLY_ONCE"));
    conf.put("execution.checkpointing.timeout", a.getOrDefault("checkpoint-timeout-ms", "60000") + " ms");
    conf.put("execution.checkpointing.tolerable-failed-checkpoints", a.getOrDefault("tolerable-failed", "0"));
    conf.put("execution.checkpointing.max-concurrent-checkpoints", a.getOrDefault("max-concurrent", "1"));
    conf.put("execution.checkpointing.min-pause", a.getOrDefault("min-pause-ms", "500") + " ms");
    conf.put("execution.checkpointing.unaligned.enabled", a.getOrDefault("unaligned", "false"));
    conf.put(
        "execution.checkpointing.externalized-checkpoint-retention",
        a.getOrDefault("retention", "RETAIN_ON_CANCELLATION"));
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "2147483647");
    conf.put("restart-strategy.fixed-delay.delay", "1 s");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    if (a.containsKey("parallelism")) env.setParallelism(Integer.parseInt(a.get("parallelism")));

    KafkaSource<String> source =
        KafkaSource.<String>builder()
            .setBootstrapServers(bootstrap)
            .setTopics(sourceTopic)
            .setGroupId(group)
            .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
            .setValueOnlyDeserializer(new SimpleStringSchema())
            .setProperty("isolation.level", "read_committed")
            .setProperty("commit.offsets.on.checkpoint", "true")
            .build();

    KafkaSinkBuilder<String> sinkBuilder =
        KafkaSink.<String>builder()
            .setBootstrapServers(bootstrap)
            .setRecordSerializer(
                KafkaRecordSerializationSchema.builder()
                    .setTopic(sinkTopic)
                    .setValueSerializationSchema(new SimpleStringSchema())
                    .setPartitioner(new SourcePartitioner())
                    .build())
            .setDeliveryGuarantee(delivery)
            .setTransactionalIdPrefix(prefix)
            // Explicit: the sink's default (1 h) exceeds the brokers' transaction.max.timeout.ms (15 min).
            .setProperty("transaction.timeout.ms", a.getOrDefault("transaction-timeout-ms", "60000"));
    if (a.containsKey("transaction-naming")) setTransactionNaming(sinkBuilder, a.get("transaction-naming"));
    KafkaSink<String> sink = sinkBuilder.build();

    env.fromSource(source, WatermarkStrategy.noWatermarks(), "source: " + sourceTopic)
        .map((MapFunction<String, String>) IncrementJob::increment)
        .name("increment")
        .sinkTo(sink)
        .name("sink: " + sinkTopic);
    env.execute(a.getOrDefault("name", "eoswatch-increment " + sourceTopic + " -> " + sinkTopic));
  }
}
