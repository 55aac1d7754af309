package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The non-blocking logger: threshold, origin, losses counted and reported. */
@ExtendWith(ServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoggerIT {
    static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void theThresholdDecidesWhatIsSent(HeraldServer server) {
        try (HeraldClient client = HeraldClient.connect(server.url());
                Subscription subscription = client.subscribe(Filter.subject("IT.log"));
                HeraldLogger logger = client.logger(new LoggerOptions("IT.log").withThreshold(Priority.WARNING))) {
            logger.log(Priority.INFO, "hidden");
            logger.log(Priority.ERROR, "shown", Map.of("axis", "az"));
            assertTrue(logger.flush(WAIT));
            Record shown = subscription.next(WAIT).record();
            assertEquals("shown", shown.text());
            assertEquals(Priority.ERROR, shown.priority());
            assertEquals("az", shown.fields().get("axis"));
            assertEquals(Thread.currentThread().getName(), shown.origin().thread());
            assertNotNull(shown.origin().host());
            logger.setThreshold(Priority.DEBUG);
            logger.log(Priority.DEBUG, "now shown");
            assertTrue(logger.flush(WAIT));
            assertEquals("now shown", subscription.next(WAIT).record().text());
            assertNull(subscription.next(Duration.ofMillis(100)));
            assertEquals(0, logger.dropped());
        }
    }

    @Test
    void withoutAServerTheCallsNeverWaitAndEveryLossIsCounted() {
        LoggerOptions options = new LoggerOptions("IT.nowhere").withBufferRecords(10);
        HeraldLogger logger = HeraldLogger.connect(HeraldServer.closedPortUrl(), options);
        long start = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            logger.log(Priority.INFO, "n" + i);
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs < 1_000, "100 log calls took " + tookMs + " ms");
        assertEquals(90, logger.drops().count(DropCounter.Reason.BUFFER_FULL));
        logger.close(Duration.ofMillis(200));
        assertEquals(10, logger.drops().count(DropCounter.Reason.CLOSED));
        logger.log(Priority.INFO, "after close");
        assertEquals(101, logger.dropped());
        assertNotNull(logger.lastError());
    }

    @Test
    void whyItCannotConnectIsSaidOnStandardErrorOnceForEachReason() throws Exception {
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
        String url = HeraldServer.closedPortUrl();
        HeraldLogger logger;
        System.setErr(new java.io.PrintStream(said, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            logger = HeraldLogger.connect(url, new LoggerOptions("IT.said"));
            logger.log(Priority.NOTICE, "waits");
            // Attempts after 50, 100, 200, 400 ms and more: the same reason, said once.
            Thread.sleep(1_200);
            logger.close(Duration.ofMillis(100));
        } finally {
            System.setErr(err);
        }
        String text = said.toString(java.nio.charset.StandardCharsets.UTF_8);
        String[] lines = text.strip().split("\n");
        assertEquals(1, lines.length, text);
        assertTrue(lines[0].startsWith("herald logger (" + url + "): cannot connect yet: "), text);
        assertTrue(lines[0].contains(logger.lastError()), text);
    }

    @Test
    void aLoggerStartedBeforeTheServerSendsOnceItIsUp() {
        String url = HeraldServer.closedPortUrl();
        HeraldLogger logger = HeraldLogger.connect(url, new LoggerOptions("IT.early"));
        for (int i = 0; i < 5; i++) {
            logger.log(Priority.NOTICE, "early " + i);
        }
        assertTrue(!logger.flush(Duration.ofMillis(200)), "flushed without a server");
        try (HeraldServer server = HeraldServer.start(Map.of(), url.substring("herald://".length()))) {
            assertTrue(logger.flush(WAIT), "not flushed once the server was up: " + logger.lastError());
            try (HeraldClient client = HeraldClient.connect(server.url())) {
                assertEquals(5L, client.monitor(WAIT).get("records_in"));
            }
            assertEquals(0, logger.dropped());
            logger.close();
        }
    }

    @Test
    void lossesAreReportedToTheServer(HeraldServer server) throws Exception {
        try (HeraldClient client = HeraldClient.connect(server.url());
                Subscription reports = client.subscribe(Filter.subject("IT.storm").withType(DropCounter.DROP_REPORT_TYPE))) {
            HeraldLogger logger = client.logger(new LoggerOptions("IT.storm").withBufferRecords(4));
            for (int i = 0; i < 2_000; i++) {
                logger.log(Priority.NOTICE, "n" + i);
            }
            long dropped = logger.dropped();
            assertTrue(dropped > 0, "nothing dropped");
            long reported = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (reported < dropped && System.nanoTime() < deadline) {
                SubscriptionEvent.Delivered report = reports.next(Duration.ofSeconds(3));
                if (report != null) {
                    assertEquals(Priority.WARNING, report.record().priority());
                    assertEquals(ProcessInfo.hostName(), report.record().origin().host(), "the report says where from");
                    reported += (Long) report.record().fields().get("dropped");
                    assertTrue(report.record().text().contains("NOTICE"), report.record().text());
                }
            }
            assertEquals(dropped, reported);
            logger.close();
        }
    }
}
