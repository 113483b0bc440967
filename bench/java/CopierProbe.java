// Runs Kafka's own org.apache.kafka.tools.TransactionalMessageCopier unchanged, in the same JVM,
// and reports the commit latency its producer measures itself: the cumulative producer metric
// txn-commit-time-ns-total (time spent in KafkaProducer.commitTransaction()), read from the
// platform MBeanServer where the client's JmxReporter publishes it.
//
// The copier commits at most one transaction between two of its status lines, and the metric is
// a cumulative sum, so each increase of the metric is exactly one commitTransaction() call. The
// metric is read at every status line the tool prints (System.out is wrapped) and, to catch the
// last commit before producer.close() unregisters the MBean, by a 1 ms poller thread that is armed
// only once a status line shows that the next transaction is the last one (remaining <= size), so
// it costs the copier nothing the rest of the time.
//
// Output (stdout, one event per line):
//   P <epochMs> <the tool's own line>          every line the tool prints
//   C <epochMs> <commitNs> <cumulativeNs>      one commitTransaction() call finished
//
// Built by bench/pipeline.bench.ts with javac against the Kafka jars; not part of the product.
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;

public final class CopierProbe {
    private static final MBeanServer MBS = ManagementFactory.getPlatformMBeanServer();
    private static PrintStream realOut;
    private static ObjectName producerMetrics;
    private static double lastCommitNs = 0;
    private static volatile boolean armed = false;
    private static final java.util.regex.Pattern REMAINING = java.util.regex.Pattern.compile("\"remaining\":(\\d+)");

    /** txn-commit-time-ns-total of the (only) producer in this JVM, or NaN when not registered. */
    private static double commitNsTotal() {
        try {
            if (producerMetrics == null || !MBS.isRegistered(producerMetrics)) {
                Set<ObjectName> names = MBS.queryNames(new ObjectName("kafka.producer:type=producer-metrics,*"), null);
                if (names.isEmpty()) return Double.NaN;
                producerMetrics = names.iterator().next();
            }
            Object v = MBS.getAttribute(producerMetrics, "txn-commit-time-ns-total");
            return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** Emits a C line when the cumulative commit time grew since the last look. */
    private static synchronized void sample() {
        double total = commitNsTotal();
        if (Double.isNaN(total) || total <= lastCommitNs) return;
        long delta = Math.round(total - lastCommitNs);
        lastCommitNs = total;
        realOut.println("C " + System.currentTimeMillis() + " " + delta + " " + Math.round(total));
    }

    public static void main(String[] args) throws Exception {
        long size = 200; // the copier's default --transaction-size
        for (int i = 0; i + 1 < args.length; i++) if (args[i].equals("--transaction-size")) size = Long.parseLong(args[i + 1]);
        final long txnSize = size;
        realOut = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(new PrintStream(realOut, true, "UTF-8") {
            @Override
            public void println(String x) {
                sample();
                java.util.regex.Matcher m = REMAINING.matcher(x == null ? "" : x);
                if (m.find() && Long.parseLong(m.group(1)) <= txnSize) armed = true;
                synchronized (CopierProbe.class) {
                    realOut.println("P " + System.currentTimeMillis() + " " + x);
                }
            }
        });
        Thread poller = new Thread(() -> {
            while (true) {
                if (armed) sample();
                try {
                    Thread.sleep(armed ? 1 : 20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "copier-probe-poller");
        poller.setDaemon(true);
        poller.start();
        org.apache.kafka.tools.TransactionalMessageCopier.main(args);
    }
}
