// The peer of bench/transactions.bench.ts in one warm JVM: Kafka's own TransactionsCommand (what
// kafka-transactions.sh runs) executed unchanged through its package-private
// execute(args, adminFactory, out, time), `list` once and then `describe --transactional-id` for
// every id it listed, all sharing one Admin client — what the tool costs without a JVM start per
// call (its best case; the benchmark also runs the script's way, one JVM per call).
//
//   TxnDescribeAll BOOTSTRAP OUTFILE
//   stdout: LIST <ms> <ids listed>, then DESCRIBED <ms> <ids> <lines of output> <failed calls>
//
// Built by bench/transactions.bench.ts with javac against the Kafka jars; not part of the product.
package org.apache.kafka.tools;

import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.Exit;

public final class TxnDescribeAll {
    /** The tool calls Exit.exit after each command (0) or on an error: here that ends the call, not the JVM. */
    static final class Exited extends RuntimeException {
        final int status;
        Exited(int status, String message) { super(message, null, false, false); this.status = status; }
    }

    static int failures = 0;

    static void run(String[] args, Admin admin, PrintStream out) throws Exception {
        try {
            TransactionsCommand.execute(args, ns -> admin, out, Time.SYSTEM);
        } catch (Exited e) {
            if (e.status != 0) failures++;
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Exit.setExitProcedure((status, message) -> { throw new Exited(status, message); });
        Admin admin = Admin.create(p);
        PrintStream file = new PrintStream(new FileOutputStream(args[1]), true, "UTF-8");
        long t0 = System.nanoTime();
        ByteArrayOutputStream listed = new ByteArrayOutputStream();
        run(new String[] {"--bootstrap-server", bootstrap, "list"}, admin, new PrintStream(listed, true, "UTF-8"));
        List<String> ids = new ArrayList<>();
        String[] lines = listed.toString("UTF-8").split("\n");
        for (int i = 1; i < lines.length; i++) {
            String[] f = lines[i].trim().split("\\s+");
            if (f.length > 1) ids.add(f[0]);
        }
        file.print(listed.toString("UTF-8"));
        System.out.println("LIST " + (System.nanoTime() - t0) / 1_000_000 + " " + ids.size());
        long t1 = System.nanoTime();
        ByteArrayOutputStream described = new ByteArrayOutputStream();
        PrintStream d = new PrintStream(described, true, "UTF-8");
        for (String id : ids) run(new String[] {"--bootstrap-server", bootstrap, "describe", "--transactional-id", id}, admin, d);
        String text = described.toString("UTF-8");
        file.print(text);
        System.out.println("DESCRIBED " + (System.nanoTime() - t1) / 1_000_000 + " " + ids.size() + " " + text.split("\n").length + " " + failures);
        file.close();
        admin.close();
        System.exit(0);
    }
}
