package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.errors.ClosedException;
import io.herald.client.errors.ConnectException;
import io.herald.client.errors.RequestTimeoutException;
import io.herald.client.errors.ServerErrorException;
import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.AckLevel;
import io.herald.client.wire.Filter;
import io.herald.client.wire.HeraldTime;
import io.herald.client.wire.Kind;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The client against a real `herald serve`: publish, subscribe, request, flush, monitor, close. */
@ExtendWith(ServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientIT {
    static final Duration WAIT = Duration.ofSeconds(10);

    static Map<String, Object> everyValueType() {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("flag", true);
        fields.put("small", -5L);
        fields.put("big", new BigInteger("18446744073709551615"));
        fields.put("float", -273.15);
        fields.put("text", "Δt µs 望遠鏡");
        fields.put("bytes", new byte[] {0, 1, (byte) 0xff});
        fields.put("when", new HeraldTime(1763604000123456789L));
        fields.put("array", List.of(1L, "two", 3.5));
        fields.put("nested", Map.of("depth", 2L));
        return fields;
    }

    @Test
    void publishedRecordsReachASubscriberWithTheirTypedFields(HeraldServer server) {
        try (HeraldClient client = HeraldClient.connect(server.url() + "?name=java-it");
                Subscription subscription = client.subscribe(Filter.subject("IT.values.*"))) {
            Record sent = Record.builder(Kind.LOG, "IT.values.one").priority(Priority.WARNING).text("encoder fault")
                    .fields(everyValueType()).build();
            client.publish(sent);
            client.flush(WAIT);
            SubscriptionEvent.Delivered got = subscription.next(WAIT);
            assertNotNull(got, "no record delivered");
            assertEquals("IT.values.one", got.record().subject());
            assertEquals(Priority.WARNING, got.record().priority());
            assertEquals("encoder fault", got.record().text());
            assertEquals(java.util.HexFormat.of().formatHex(sent.toBytes()), java.util.HexFormat.of().formatHex(got.record().toBytes()),
                    "the subscriber gets the producer's bytes");
            assertTrue(got.seq() > 0);
            assertEquals("herald", client.server());
        }
    }

    @Test
    void aCallbackSubscriptionGetsEveryRecordInOrder(HeraldServer server) throws Exception {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            List<String> texts = new CopyOnWriteArrayList<>();
            CountDownLatch all = new CountDownLatch(1000);
            try (Subscription subscription = client.subscribe(Filter.subject("IT.cb"), d -> {
                texts.add(d.record().text());
                all.countDown();
            })) {
                for (int i = 0; i < 1000; i++) {
                    client.log(Priority.INFO, "IT.cb", "n" + i);
                }
                client.flush(WAIT);
                assertTrue(all.await(10, TimeUnit.SECONDS), "got " + texts.size() + " of 1000");
                for (int i = 0; i < 1000; i++) {
                    assertEquals("n" + i, texts.get(i));
                }
                assertEquals(0, subscription.lost());
            }
        }
    }

    @Test
    void theBlockingIteratorEndsWhenTheSubscriptionCloses(HeraldServer server) throws Exception {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            Subscription subscription = client.subscribe(Filter.subject("IT.iter"));
            List<String> seen = new CopyOnWriteArrayList<>();
            Thread reader = new Thread(() -> subscription.forEach(d -> seen.add(d.record().text())));
            reader.start();
            client.log(Priority.NOTICE, "IT.iter", "a");
            client.log(Priority.NOTICE, "IT.iter", "b");
            client.flush(WAIT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (seen.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            subscription.close();
            reader.join(5_000);
            assertEquals(List.of("a", "b"), seen);
            assertTrue(!reader.isAlive(), "the iterator did not end");
        }
    }

    @Test
    void aRequestGetsTheFirstReplyAndTimesOutWithoutResponder(HeraldServer server) {
        try (HeraldClient responder = HeraldClient.connect(server.url());
                HeraldClient requester = HeraldClient.connect(server.url())) {
            try (Subscription service = responder.subscribe(Filter.subject("IT.svc.add"),
                    d -> responder.reply(d.record(), "sum", Map.of("sum", (Long) d.record().fields().get("a") + 1)))) {
                Record reply = requester.request(
                        Record.builder(Kind.MESSAGE, "IT.svc.add").field("a", 41L).build(), WAIT);
                assertEquals(42L, reply.fields().get("sum"));
                assertEquals("sum", reply.text());
            }
            RequestTimeoutException timeout = assertThrows(RequestTimeoutException.class,
                    () -> requester.request(Record.builder(Kind.MESSAGE, "IT.svc.nobody").build(), Duration.ofMillis(300)));
            assertTrue(timeout.getMessage().contains("IT.svc.nobody"), timeout.getMessage());
        }
    }

    @Test
    void flushAtStoredWaitsForTheArchiveAndMonitorCounts(HeraldServer server) {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            for (int i = 0; i < 10; i++) {
                client.log(Priority.ERROR, "IT.stored", "kept " + i);
            }
            client.flush(AckLevel.STORED, WAIT);
            long count = client.publish(Record.builder(Kind.LOG, "IT.stored").text("one more").build(), AckLevel.RECEIVED, WAIT);
            assertEquals(1, count);
            Map<String, Object> monitor = client.monitor(WAIT);
            assertEquals("herald", monitor.get("server"));
            assertTrue(((Long) monitor.get("records_in")) >= 11, "records_in " + monitor.get("records_in"));
        }
    }

    @Test
    void flushAtStoredWithoutArchiveIsRefusedByName() {
        try (HeraldServer server = HeraldServer.start(Map.of("archive_backend", "none"));
                HeraldClient client = HeraldClient.connect(server.url())) {
            client.log(Priority.INFO, "IT.noarchive", "x");
            ServerErrorException error = assertThrows(ServerErrorException.class, () -> client.flush(AckLevel.STORED, WAIT));
            assertEquals("archive", error.code());
            client.flush(WAIT); // the connection lives on
        }
    }

    @Test
    void recordsTheServerRefusesAreCountedAndNamed(HeraldServer server) {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            // A field holding MessagePack extension 5, which the client would never write.
            byte[] bad = java.util.HexFormat.of().parseHex("85" + "0001" + "01a3626164" + "0300" + "0404" + "0881a163d7050000000000000001");
            client.connection().publish(bad, 0, bad.length, true);
            client.log(Priority.INFO, "IT.good", "taken");
            ServerErrorException error = assertThrows(ServerErrorException.class, () -> client.flush(WAIT));
            assertEquals("bad_record", error.code());
            assertEquals(1, client.refusedRecords());
            client.flush(WAIT);
        }
    }

    @Test
    void badInputFailsAtTheCallNamingTheProblem(HeraldServer server) {
        IllegalArgumentException subject = assertThrows(IllegalArgumentException.class,
                () -> Record.builder(Kind.LOG, "A.*").build());
        assertTrue(subject.getMessage().contains("`A.*`"), subject.getMessage());
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            IllegalArgumentException field = assertThrows(IllegalArgumentException.class,
                    () -> client.publish(Record.builder(Kind.LOG, "x").field("thing", new Object()).build()));
            assertTrue(field.getMessage().contains("`thing`"), field.getMessage());
            IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
                    () -> client.publish(Record.builder(Kind.LOG, "x").text("x".repeat(2 << 20)).build()));
            assertTrue(huge.getMessage().contains("max_frame_bytes"), huge.getMessage());
            // A wait for no acknowledgement would wait out its timeout: refused, nothing sent.
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                    () -> client.publish(Record.builder(Kind.LOG, "x").build(), AckLevel.NONE, WAIT));
            assertTrue(none.getMessage().contains("not NONE"), none.getMessage());
            assertEquals(0, client.pendingRecords());
        }
        String closed = HeraldServer.closedPortUrl();
        ConnectException refused = assertThrows(ConnectException.class, () -> HeraldClient.connect(closed));
        assertTrue(refused.getMessage().contains(closed.substring("herald://".length())), refused.getMessage());
    }

    @Test
    void aClosedClientRefusesWork(HeraldServer server) {
        HeraldClient client = HeraldClient.connect(server.url());
        client.log(Priority.INFO, "IT.close", "before");
        client.close();
        client.close();
        assertThrows(ClosedException.class, () -> client.log(Priority.INFO, "IT.close", "after"));
    }

    @Test
    void theSubscriptionQueueOverflowIsAGapNotice(HeraldServer server) throws Exception {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            Subscription subscription = new Subscription(client.connection(), client.connection().nextId(),
                    cid -> null, 10);
            client.connection().addSubscription(subscription.id(), subscription);
            long cid = client.connection().nextId();
            io.herald.client.connection.Connection.await(client.connection().request(cid,
                    new io.herald.client.wire.Frame.Subscribe(cid, subscription.id(), Filter.subject("IT.gap"),
                            io.herald.client.wire.DeliveryOptions.DEFAULT)), 10_000, "subscribe");
            for (int i = 0; i < 25; i++) {
                client.log(Priority.DEBUG, "IT.gap", "n" + i);
            }
            client.flush(WAIT);
            Thread.sleep(200);
            List<SubscriptionEvent> events = new ArrayList<>();
            SubscriptionEvent event;
            while ((event = subscription.nextEvent(Duration.ofMillis(200))) != null) {
                events.add(event);
            }
            SubscriptionEvent.Gap gap = (SubscriptionEvent.Gap) events.get(0);
            assertTrue(gap.local());
            assertEquals(15, gap.count());
            assertEquals(Map.of(Priority.DEBUG, 15L), gap.byPriority());
            assertEquals(10, events.size() - 1);
            assertEquals(15, subscription.lost());
            assertNull(subscription.nextEvent(Duration.ofMillis(10)));
            subscription.close();
        }
    }
}
