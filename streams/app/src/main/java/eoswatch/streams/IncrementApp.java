package eoswatch.streams;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The seed's Kafka Streams app: input {id, ts, value, ...} -> value + 1 -> output, with
 * processing.guarantee=exactly_once_v2. Records are eoswatch verification records
 * (src/verify/record.ts): a record keeps its source partition ("p") in the output, so `eoswatch
 * verify` can judge order as well as exactly-once. With --stateful the app also counts records per
 * key in a persistent state store ("counts", changelogged), which makes Streams keep its process
 * UUID in the state directory across restarts.
 *
 * Arguments (--key value, or --stateful alone): bootstrap, application-id, input, output, threads
 * (1), state-dir, commit-interval-ms (200), properties (a file of more Streams/client properties,
 * applied last), stateful. Prints one line per state change to stdout: "eoswatch-streams state OLD -> NEW".
 */
public final class IncrementApp {
  private static final Pattern VALUE = Pattern.compile("\"value\"\\s*:\\s*(-?\\d+)");
  private static final Pattern SOURCE_PARTITION = Pattern.compile("\"p\"\\s*:\\s*(\\d+)");
  static final String STORE = "counts";

  private IncrementApp() {}

  static Map<String, String> parseArgs(String[] args) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("expected --key value pairs, found \"" + args[i] + "\"");
      String key = args[i].substring(2);
      if (key.equals("stateful")) {
        out.put(key, "true");
        continue;
      }
      if (i + 1 >= args.length) throw new IllegalArgumentException("--" + key + " needs a value");
      out.put(key, args[++i]);
    }
    return out;
  }

  private static String required(Map<String, String> a, String key) {
    String v = a.get(key);
    if (v == null) throw new IllegalArgumentException("missing --" + key);
    return v;
  }

  /** value + 1; a record without a numeric value fails the task rather than being dropped silently. */
  static String increment(String record) {
    Matcher m = VALUE.matcher(record);
    if (!m.find()) throw new IllegalArgumentException("record has no numeric \"value\": " + record);
    long next = Long.parseLong(m.group(1)) + 1;
    return record.substring(0, m.start(1)) + next + record.substring(m.end(1));
  }

  /** Keeps a verification record in the output partition of its source partition, so per-partition order holds. */
  static final class SourcePartitioner implements StreamPartitioner<String, String> {
    @Override
    public Optional<Set<Integer>> partitions(String topic, String key, String value, int numPartitions) {
      Matcher m = value == null ? null : SOURCE_PARTITION.matcher(value);
      if (m == null || !m.find()) return Optional.empty();
      return Optional.of(Set.of(Integer.parseInt(m.group(1)) % numPartitions));
    }
  }

  /** Counts records per key (the record's key, or its source partition without one) in the state store. */
  static final class Counter implements FixedKeyProcessor<String, String, String> {
    private FixedKeyProcessorContext<String, String> context;
    private KeyValueStore<String, Long> counts;

    @Override
    public void init(FixedKeyProcessorContext<String, String> context) {
      this.context = context;
      this.counts = context.getStateStore(STORE);
    }

    @Override
    public void process(FixedKeyRecord<String, String> record) {
      String k = record.key();
      if (k == null) k = "partition-" + context.recordMetadata().map(r -> r.partition()).orElse(-1);
      Long n = counts.get(k);
      counts.put(k, n == null ? 1L : n + 1);
      context.forward(record);
    }
  }

  static Topology topology(String input, String output, boolean stateful) {
    StreamsBuilder builder = new StreamsBuilder();
    KStream<String, String> in = builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()));
    if (stateful) {
      StoreBuilder<KeyValueStore<String, Long>> store =
          Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE), Serdes.String(), Serdes.Long());
      builder.addStateStore(store);
      in = in.processValues(Counter::new, STORE);
    }
    in.mapValues(IncrementApp::increment)
        .to(output, Produced.with(Serdes.String(), Serdes.String()).withStreamPartitioner(new SourcePartitioner()));
    return builder.build();
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> a;
    try {
      a = parseArgs(argv);
      required(a, "bootstrap");
      required(a, "application-id");
      required(a, "input");
      required(a, "output");
    } catch (IllegalArgumentException e) {
      System.err.println("eoswatch-streams: " + e.getMessage());
      System.exit(2);
      return;
    }
    Properties props = new Properties();
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, a.get("application-id"));
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, a.getOrDefault("threads", "1"));
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, a.getOrDefault("commit-interval-ms", "200"));
    if (a.containsKey("state-dir")) props.put(StreamsConfig.STATE_DIR_CONFIG, a.get("state-dir"));
    if (a.containsKey("properties")) {
      try (InputStream f = new FileInputStream(a.get("properties"))) {
        props.load(f);
      } catch (IOException e) {
        System.err.println("eoswatch-streams: cannot read --properties " + a.get("properties") + ": " + e.getMessage());
        System.exit(2);
        return;
      }
    }
    boolean stateful = Boolean.parseBoolean(a.getOrDefault("stateful", "false"));
    KafkaStreams streams = new KafkaStreams(topology(a.get("input"), a.get("output"), stateful), props);
    CountDownLatch done = new CountDownLatch(1);
    streams.setStateListener((next, old) -> {
      System.out.println("eoswatch-streams state " + old + " -> " + next);
      System.out.flush();
      if (next == KafkaStreams.State.NOT_RUNNING || next == KafkaStreams.State.ERROR) done.countDown();
    });
    // A failed thread is replaced: the app keeps running as a real deployment would.
    streams.setUncaughtExceptionHandler(e -> {
      System.err.println("eoswatch-streams: stream thread failed: " + e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close(Duration.ofSeconds(30));
      done.countDown();
    }, "eoswatch-streams-shutdown"));
    System.out.println("eoswatch-streams starting application.id=" + a.get("application-id") + " stateful=" + stateful
        + " threads=" + props.getProperty(StreamsConfig.NUM_STREAM_THREADS_CONFIG));
    streams.start();
    done.await();
    System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
  }
}
