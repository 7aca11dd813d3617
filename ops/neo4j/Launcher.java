// Runs Neo4j Community embedded with a Bolt connector, for `esc stack` (no Neo4j tarball, no Docker).
//
// Usage (Java 11+ runs this single source file directly):
//   java <JVM flags from ops/neo4j/jvm.flags> -cp "<libs>/*" ops/neo4j/Launcher.java <home> <host> <port> \
//        <pagecache bytes> <transaction memory, all transactions, bytes> <transaction memory, one transaction, bytes>
//
// Prints "ESC_NEO4J_READY bolt://<host>:<port>" once the default database is available, then stays up until
// SIGTERM/SIGINT, when the shutdown hook stops the database cleanly (checkpoint, close the store).

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

public class Launcher {
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: Launcher <home> <host> <port> <pagecache bytes> <tx total bytes> <tx max bytes>");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        String host = args[1];
        int port = Integer.parseInt(args[2]);
        long pageCache = Long.parseLong(args[3]);
        long txTotal = Long.parseLong(args[4]);
        long txMax = Long.parseLong(args[5]);

        long started = System.nanoTime();
        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, txTotal)
                .setConfig(GraphDatabaseSettings.memory_transaction_max_size, txMax)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "128M size")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("ESC_NEO4J_STOPPING");
            System.out.flush();
            try {
                service.shutdown();
            } finally {
                stopped.countDown();
            }
            System.out.println("ESC_NEO4J_STOPPED");
            System.out.flush();
        }, "esc-neo4j-shutdown"));

        GraphDatabaseService db = service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(TimeUnit.MINUTES.toMillis(3))) {
            System.err.println("ESC_NEO4J_FAILED default database not available after 3 minutes");
            System.exit(1);
        }
        long millis = Duration.ofNanos(System.nanoTime() - started).toMillis();
        System.out.println("ESC_NEO4J_READY bolt://" + host + ":" + port + " in " + millis + " ms");
        System.out.flush();
        stopped.await();
    }
}
