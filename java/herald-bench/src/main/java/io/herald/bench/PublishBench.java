package io.herald.bench;

import io.herald.client.HeraldClient;
import io.herald.client.wire.Kind;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.time.Duration;

/**
 * Publish throughput from Java: one thread publishes N records of 128 encoded bytes through
 * {@link HeraldClient#publish} (each encoded at the call), then flushes; the rate counts
 * until the server has acknowledged the last one.
 *
 * <pre>
 * java -cp "herald-bench/target/classes:$(cat herald-bench/target/classpath.txt)" \
 *     io.herald.bench.PublishBench herald://127.0.0.1:7400 [records=2000000] [rounds=3]
 * </pre>
 */
public final class PublishBench {
    private PublishBench() {
    }

    /** Returns a message record of exactly {@code size} encoded bytes. */
    static Record recordOf(int size) {
        for (int pad = 0; pad < size; pad++) {
            Record sized = Record.builder(Kind.MESSAGE, "bench.java.publish").time(1763604000123456789L)
                    .priority(Priority.INFO).text("x".repeat(pad)).build();
            if (sized.toBytes().length == size) {
                return sized;
            }
        }
        throw new IllegalStateException("no record of exactly " + size + " bytes");
    }

    /** Runs the benchmark. */
    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : "herald://127.0.0.1:7400";
        int records = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        Record record = recordOf(128);
        try (HeraldClient client = HeraldClient.connect(url + (url.contains("?") ? "&" : "?") + "name=java-bench")) {
            for (int i = 0; i < 200_000; i++) {
                client.publish(record); // warm-up
            }
            client.flush(Duration.ofSeconds(60));
            for (int round = 1; round <= rounds; round++) {
                long start = System.nanoTime();
                for (int i = 0; i < records; i++) {
                    client.publish(record);
                }
                client.flush(Duration.ofSeconds(120));
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("publish round %d: %d records of 128 B in %.3f s = %.0f records/s (%.1f MB/s), refused %d%n",
                        round, records, seconds, records / seconds, records * 128 / seconds / 1e6, client.refusedRecords());
            }
        }
    }
}
