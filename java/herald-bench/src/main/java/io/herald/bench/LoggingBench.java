package io.herald.bench;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import io.herald.client.LoggerOptions;
import io.herald.client.wire.Priority;
import io.herald.jul.HeraldHandler;
import io.herald.logback.HeraldAppender;
import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.function.IntConsumer;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cost of one log call in the caller's thread, side by side on the same machine:
 * Herald's JUL handler, Herald's Logback appender, and Logback's AsyncAppender in front of a
 * FileAppender (same buffer, 65536, and like Herald's never blocking: {@code neverBlock}).
 * Each call is timed with {@code System.nanoTime()}; calls come in bursts of 100 with a
 * 1 ms pause (under 100 000 calls/s), so that the senders keep up and what is measured is
 * the call, not a full buffer.
 *
 * <pre>
 * java -cp "herald-bench/target/classes:$(cat herald-bench/target/classpath.txt)" \
 *     io.herald.bench.LoggingBench herald://127.0.0.1:7400 [calls=300000]
 * </pre>
 */
public final class LoggingBench {
    private static final int BURST = 100;

    private LoggingBench() {
    }

    static Latencies measure(int calls, IntConsumer call) throws InterruptedException {
        for (int i = 0; i < calls; i++) {
            call.accept(i); // warm-up
            if (i % BURST == 0) {
                Thread.sleep(1);
            }
        }
        Latencies latencies = new Latencies(calls);
        for (int i = 0; i < calls; i++) {
            long start = System.nanoTime();
            call.accept(i);
            latencies.add(System.nanoTime() - start);
            if (i % BURST == BURST - 1) {
                Thread.sleep(1);
            }
        }
        return latencies;
    }

    /** Runs the benchmark. */
    public static void main(String[] args) throws Exception {
        String url = args.length > 0 ? args[0] : "herald://127.0.0.1:7400";
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 300_000;

        HeraldHandler handler = new HeraldHandler(url, "bench.java.jul", false,
                new LoggerOptions("bench.java.jul", Priority.TRACE, 65_536, null, null, "java-bench", null, null));
        Logger jul = Logger.getLogger("bench.java.jul");
        jul.setUseParentHandlers(false);
        jul.addHandler(handler);
        Thread.sleep(500); // connected
        Latencies julCalls = measure(calls, i -> jul.log(java.util.logging.Level.WARNING, "value {0}", i));
        handler.heraldLogger().flush(Duration.ofSeconds(30));
        System.out.printf("herald JUL handler:       %s, dropped %d of %d%n", julCalls.summary(), handler.dropped(), 2L * calls);
        handler.close();

        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        HeraldAppender herald = new HeraldAppender();
        herald.setContext(context);
        herald.setName("herald");
        herald.setUrl(url);
        herald.setSubject("bench.java.logback");
        herald.setProcess("java-bench");
        herald.start();
        ch.qos.logback.classic.Logger heraldLogger = context.getLogger("bench.herald");
        heraldLogger.setAdditive(false);
        heraldLogger.setLevel(Level.TRACE);
        heraldLogger.addAppender(herald);
        Thread.sleep(500);
        Latencies heraldCalls = measure(calls, i -> heraldLogger.warn("value {}", i));
        herald.heraldLogger().flush(Duration.ofSeconds(30));
        System.out.printf("herald Logback appender:  %s, dropped %d of %d%n", heraldCalls.summary(), herald.dropped(), 2L * calls);
        herald.stop();

        File file = Files.createTempFile("herald-bench-logback-", ".log").toFile();
        try {
            PatternLayoutEncoder encoder = new PatternLayoutEncoder();
            encoder.setContext(context);
            encoder.setPattern("%d{ISO8601} %-5level [%thread] %logger - %msg%n");
            encoder.start();
            FileAppender<ILoggingEvent> fileAppender = new FileAppender<>();
            fileAppender.setContext(context);
            fileAppender.setName("file");
            fileAppender.setFile(file.getPath());
            fileAppender.setEncoder(encoder);
            fileAppender.start();
            AsyncAppender async = new AsyncAppender();
            async.setContext(context);
            async.setName("async");
            async.setQueueSize(65_536);
            async.setNeverBlock(true);
            async.addAppender(fileAppender);
            async.start();
            ch.qos.logback.classic.Logger fileLogger = context.getLogger("bench.file");
            fileLogger.setAdditive(false);
            fileLogger.setLevel(Level.TRACE);
            fileLogger.addAppender(async);
            Latencies asyncCalls = measure(calls, i -> fileLogger.warn("value {}", i));
            async.stop();
            long lines = Files.lines(file.toPath()).count();
            System.out.printf("logback Async+File:       %s, written %d of %d%n", asyncCalls.summary(), lines, 2L * calls);
            System.out.printf("medians: JUL handler %d ns, Logback appender %d ns, AsyncAppender+FileAppender %d ns%n",
                    julCalls.median(), heraldCalls.median(), asyncCalls.median());
        } finally {
            file.delete();
        }
    }
}
