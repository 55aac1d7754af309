package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.connection.Connection;
import io.herald.client.connection.ConnectionOptions;
import io.herald.client.connection.SubscriptionSink;
import io.herald.client.errors.ClosedException;
import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.DeliveryOptions;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Frame;
import io.herald.client.wire.Priority;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Losing a server: failover to the next of the URL, and the server's gap notices. */
@ExtendWith(ServerExtension.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FailoverIT {
    static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void theClientMovesToTheNextServerAndMakesItsSubscriptionsAgain(HeraldServer first, HeraldServer second) {
        try (HeraldClient client = HeraldClient.connect("herald://" + first.address() + "," + second.address());
                Subscription subscription = client.subscribe(Filter.subject("IT.fo"))) {
            assertEquals(first.address(), client.address());
            client.log(Priority.INFO, "IT.fo", "before");
            client.flush(WAIT);
            assertEquals("before", subscription.next(WAIT).record().text());
            first.kill();
            SubscriptionEvent event = subscription.nextEvent(WAIT);
            assertTrue(event instanceof SubscriptionEvent.Interrupted, "expected an interruption, got " + event);
            assertEquals(second.address(), ((SubscriptionEvent.Interrupted) event).server());
            client.log(Priority.INFO, "IT.fo", "after");
            client.flush(WAIT);
            SubscriptionEvent.Delivered after = subscription.next(WAIT);
            assertNotNull(after, "the subscription was not made again on the second server");
            assertEquals("after", after.record().text());
            assertEquals(1, client.failovers());
            assertEquals(second.address(), client.address());
        }
    }

    static java.util.Set<String> drain(Subscription subscription) {
        java.util.Set<String> texts = new java.util.HashSet<>();
        SubscriptionEvent.Delivered delivered;
        while ((delivered = subscription.next(Duration.ofSeconds(1))) != null) {
            texts.add(delivered.record().text());
        }
        return texts;
    }

    @Test
    void recordsUnacknowledgedByALostServerAreSentToTheNextOne(HeraldServer first, HeraldServer second) {
        int records = 20_000;
        try (HeraldClient onSecond = HeraldClient.connect(second.url());
                Subscription seenBySecond = onSecond.subscribe(Filter.subject("IT.window"));
                HeraldClient producer = HeraldClient.connect("herald://" + first.address() + "," + second.address())) {
            producer.log(Priority.INFO, "IT.before", "taken by the first server");
            producer.flush(WAIT);
            first.pause(); // takes nothing more: what follows stays unacknowledged in the window
            for (int i = 0; i < records; i++) {
                producer.publish(io.herald.client.wire.Record.builder(io.herald.client.wire.Kind.MESSAGE, "IT.window")
                        .text("n" + i).build());
            }
            first.kill();
            producer.flush(Duration.ofSeconds(30));
            java.util.Set<String> seen = drain(seenBySecond);
            assertEquals(records, seen.size(), "records lost in the failover");
            assertEquals(1, producer.failovers());
            assertEquals(second.address(), producer.address());
            assertEquals(0, producer.refusedRecords());
        }
    }

    @Test
    void withoutAnyServerTheClientGivesUpAfterItsReconnectTimeout(HeraldServer server) throws Exception {
        HeraldClient client = HeraldClient.connect(server.url(), ConnectionOptions.defaults().withReconnectTimeoutMs(500));
        Subscription subscription = client.subscribe(Filter.subject("IT.gone"));
        server.pause(); // takes nothing more: what follows is never acknowledged
        for (int i = 0; i < 25; i++) {
            client.log(Priority.INFO, "IT.gone", "unacknowledged " + i);
        }
        assertEquals(0, client.abandoned(), "nothing is given up while the client runs");
        server.kill();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!client.connection().isClosed() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(client.connection().isClosed(), "the client did not give up");
        ClosedException closed = org.junit.jupiter.api.Assertions.assertThrows(ClosedException.class,
                () -> client.log(Priority.INFO, "IT.gone", "x"));
        assertTrue(closed.getMessage().contains("no server answered within 500 ms"), closed.getMessage());
        assertEquals(25, client.abandoned(), "the records no server acknowledged are counted");
        assertTrue(closed.getMessage().contains("with 25 records unacknowledged"), closed.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(ClosedException.class, () -> subscription.next(Duration.ofSeconds(1)));
        client.close();
    }

    @Test
    void closingBeforeTheServerAcknowledgedCountsWhatWasGivenUp(HeraldServer server) {
        HeraldClient client = HeraldClient.connect(server.url());
        client.log(Priority.INFO, "IT.close", "acknowledged");
        client.flush(WAIT);
        server.pause();
        for (int i = 0; i < 10; i++) {
            client.log(Priority.INFO, "IT.close", "unacknowledged " + i);
        }
        client.connection().close(200);
        assertEquals(10, client.abandoned());
        assertEquals("closed by the program, with 10 records unacknowledged", client.connection().closeReason());
    }

    /** Blocks the connection's reader on its first record until released. */
    static final class Blocker implements SubscriptionSink {
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void deliver(Frame.DeliverEntry entry) {
            reached.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void gap(Frame.Gap gap) {
        }

        @Override
        public void interrupted(String server) {
        }

        @Override
        public void closed(String why) {
            release.countDown();
        }

        @Override
        public Frame subscribeFrame(long cid) {
            return null;
        }
    }

    @Test
    void recordsTheServerDropsForASlowSubscriberArriveAsAGapNotice(HeraldServer server) throws Exception {
        int records = 20_000;
        try (HeraldClient slow = HeraldClient.connect(server.url()); HeraldClient producer = HeraldClient.connect(server.url())) {
            Subscription subscription = slow.subscribe(Filter.subject("IT.slow"), new DeliveryOptions(null, 10L, null, null, null, null),
                    null, null);
            Blocker blocker = new Blocker();
            Connection connection = slow.connection();
            long id = connection.nextId();
            connection.addSubscription(id, blocker);
            long cid = connection.nextId();
            Connection.await(connection.request(cid, new Frame.Subscribe(cid, id, Filter.subject("IT.block"), DeliveryOptions.DEFAULT)),
                    10_000, "subscribe");
            producer.log(Priority.INFO, "IT.block", "stop reading");
            producer.flush(WAIT);
            assertTrue(blocker.reached.await(10, TimeUnit.SECONDS));
            String text = "x".repeat(1000);
            for (int i = 0; i < records; i++) {
                producer.log(i % 2 == 0 ? Priority.DEBUG : Priority.WARNING, "IT.slow", i + text); // distinct: no storm
            }
            producer.flush(Duration.ofSeconds(30));
            blocker.release.countDown();
            // A GAP goes before the records that follow the loss: one more record brings the last one.
            Thread.sleep(500);
            producer.log(Priority.WARNING, "IT.slow", "end");
            producer.flush(WAIT);
            long delivered = 0;
            long gapped = 0;
            List<SubscriptionEvent.Gap> gaps = new ArrayList<>();
            SubscriptionEvent event;
            while ((event = subscription.nextEvent(Duration.ofSeconds(2))) != null) {
                if (event instanceof SubscriptionEvent.Delivered) {
                    delivered++;
                } else if (event instanceof SubscriptionEvent.Gap gap) {
                    gaps.add(gap);
                    gapped += gap.count();
                }
            }
            assertTrue(!gaps.isEmpty(), "no gap notice after " + delivered + " records");
            assertTrue(gaps.stream().noneMatch(SubscriptionEvent.Gap::local), "the local queue overflowed: " + gaps);
            assertEquals(records + 1, delivered + gapped, "every record delivered or counted in a gap: " + gaps);
            assertEquals(gapped, subscription.lost());
            subscription.close();
        }
    }
}
