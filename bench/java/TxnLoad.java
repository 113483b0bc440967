// The load generator of bench/transactions.bench.ts: APPS × IDS transactional ids named
// app<NNN>-<i> (100 applications of 10 ids by default), one KafkaProducer each, driven by THREADS
// threads (each owns every THREADS-th producer and takes them in turn), paced together to RATE
// transactions per second; each transaction is RECORDS small records with the id as key (one
// partition) and a commitTransaction().
//
// Protocol (stdin/stdout, one line each):
//   stdout  READY <epochMs> <initMs>        every producer has run initTransactions()
//   stdin   GO                              start the transactions
//   stdout  C <epochMs> <committed> <failed>  every 100 ms from GO on: cumulative commitTransaction()
//                                            calls that returned, and transactions that failed
//   stdin   STOP (or end of stdin, or SECONDS after GO)  stop, close the producers
//   stdout  END <epochMs> <committed> <failed> <seconds since GO>
//
// Built by bench/transactions.bench.ts with javac against the Kafka jars; not part of the product.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class TxnLoad {
    private static final AtomicLong committed = new AtomicLong();
    private static final AtomicLong failed = new AtomicLong();
    private static volatile boolean stop = false;

    public static void main(String[] args) throws Exception {
        if (args.length < 8) {
            System.err.println("usage: TxnLoad BOOTSTRAP TOPIC APPS IDS RATE SECONDS THREADS RECORDS");
            System.exit(2);
        }
        final String bootstrap = args[0];
        final String topic = args[1];
        final int apps = Integer.parseInt(args[2]);
        final int ids = Integer.parseInt(args[3]);
        final double rate = Double.parseDouble(args[4]);
        final long seconds = Long.parseLong(args[5]);
        final int threads = Integer.parseInt(args[6]);
        final int records = Integer.parseInt(args[7]);
        final java.io.PrintStream out = new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");

        final List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        final List<byte[]> keys = new ArrayList<>();
        for (int a = 0; a < apps; a++) {
            for (int i = 0; i < ids; i++) {
                String id = String.format("app%03d-%d", a, i);
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
                p.put(ProducerConfig.CLIENT_ID_CONFIG, id);
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
                p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096");
                p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, String.valueOf(256 * 1024));
                p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "120000");
                p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                producers.add(new KafkaProducer<>(p));
                keys.add(id.getBytes("UTF-8"));
            }
        }
        // initTransactions() of every producer, spread over the threads.
        long i0 = System.currentTimeMillis();
        Thread[] init = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int tt = t;
            init[t] = new Thread(() -> {
                for (int k = tt; k < producers.size(); k += threads) producers.get(k).initTransactions();
            });
            init[t].start();
        }
        for (Thread t : init) t.join();
        out.println("READY " + System.currentTimeMillis() + " " + (System.currentTimeMillis() - i0));

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("GO")) {
            if (line.trim().equals("STOP")) { line = null; break; }
        }
        if (line == null) {
            for (KafkaProducer<byte[], byte[]> p : producers) p.close(Duration.ofSeconds(1));
            return;
        }
        final long go = System.currentTimeMillis();
        final long goNs = System.nanoTime();
        Thread stdin = new Thread(() -> {
            try {
                String l;
                while ((l = in.readLine()) != null) if (l.trim().equals("STOP")) break;
            } catch (Exception e) {
                // end of stdin
            }
            stop = true;
        });
        stdin.setDaemon(true);
        stdin.start();
        Thread reporter = new Thread(() -> {
            while (!stop) {
                out.println("C " + System.currentTimeMillis() + " " + committed.get() + " " + failed.get());
                try { Thread.sleep(100); } catch (InterruptedException e) { return; }
                if (System.currentTimeMillis() - go > seconds * 1000) stop = true;
            }
        });
        reporter.setDaemon(true);
        reporter.start();

        final byte[] value = new byte[32];
        final double perThread = rate / threads;
        final CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            final int tt = t;
            new Thread(() -> {
                try {
                    long n = 0;
                    int k = tt;
                    while (!stop) {
                        // The n-th transaction of this thread is due n / perThread seconds after GO;
                        // a thread that fell behind does not burst more than 1 s of backlog.
                        long dueNs = goNs + (long) (n / perThread * 1e9);
                        long nowNs = System.nanoTime();
                        if (dueNs > nowNs) {
                            long ms = (dueNs - nowNs) / 1_000_000;
                            Thread.sleep(ms, (int) ((dueNs - nowNs) % 1_000_000));
                        } else if (nowNs - dueNs > 1_000_000_000L) {
                            n = (long) ((nowNs - goNs) / 1e9 * perThread) - (long) perThread;
                        }
                        n++;
                        KafkaProducer<byte[], byte[]> p = producers.get(k);
                        try {
                            p.beginTransaction();
                            for (int r = 0; r < records; r++) p.send(new ProducerRecord<>(topic, keys.get(k), value));
                            p.commitTransaction();
                            committed.incrementAndGet();
                        } catch (Exception e) {
                            failed.incrementAndGet();
                            try { p.abortTransaction(); } catch (Exception e2) { /* fenced or fatal: counted */ }
                        }
                        k += threads;
                        if (k >= producers.size()) k = tt;
                    }
                } catch (InterruptedException e) {
                    // stop
                } finally {
                    done.countDown();
                }
            }).start();
        }
        done.await();
        double s = (System.nanoTime() - goNs) / 1e9;
        out.println("END " + System.currentTimeMillis() + " " + committed.get() + " " + failed.get() + " " + s);
        for (KafkaProducer<byte[], byte[]> p : producers) p.close(Duration.ofMillis(500));
        System.exit(0);
    }
}
