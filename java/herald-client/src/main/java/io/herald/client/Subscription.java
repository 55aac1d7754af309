package io.herald.client;

import io.herald.client.connection.Connection;
import io.herald.client.connection.SubscriptionSink;
import io.herald.client.errors.ClosedException;
import io.herald.client.errors.HeraldException;
import io.herald.client.wire.Frame;
import io.herald.client.wire.FrameCodec;
import io.herald.client.wire.Priority;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * A subscription: records matching its filter (or its information-object selection) arrive
 * in a bounded local queue, read with {@link #next(Duration)}, {@link #nextEvent(Duration)}
 * or the blocking {@link #iterator()}, or handed to a callback on a thread of the
 * subscription's own (so a slow callback never stalls the connection). Losses are never
 * silent: the server's GAP notices and the records dropped here when the local queue is full
 * are counted in {@link #lost()} and given as {@link SubscriptionEvent.Gap} events.
 * {@link #close()} unsubscribes.
 */
public final class Subscription implements SubscriptionSink, Iterable<SubscriptionEvent.Delivered>, AutoCloseable {
    /** Default local queue bound, in events. */
    public static final int DEFAULT_QUEUE_EVENTS = 65_536;

    private static final Object END = new Object();

    private final Connection connection;
    private final long id;
    private final LongFunction<Frame> subscribeFrame;
    private final LinkedBlockingQueue<Object> queue;
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong droppedLocally = new AtomicLong();
    private final AtomicLong undecodable = new AtomicLong();
    private final Map<Priority, Long> localDrops = new EnumMap<>(Priority.class);
    private long localFirst;
    private long localLast;
    private volatile boolean closed;
    private volatile String closeReason;
    private Thread callbackThread;

    Subscription(Connection connection, long id, LongFunction<Frame> subscribeFrame, int queueEvents) {
        this.connection = connection;
        this.id = id;
        this.subscribeFrame = subscribeFrame;
        this.queue = new LinkedBlockingQueue<>(queueEvents);
    }

    /** Returns the subscription id on the connection. */
    public long id() {
        return id;
    }

    /** Returns records lost: GAP counts from the server plus local drops. */
    public long lost() {
        return lost.get();
    }

    /** Returns records dropped here because the local queue was full (part of {@link #lost()}). */
    public long droppedLocally() {
        return droppedLocally.get();
    }

    /** Returns records delivered that this client could not decode (skipped, not lost). */
    public long undecodable() {
        return undecodable.get();
    }

    /** Hands every record to {@code callback} (and every event to {@code onEvent}, may be null) on a thread of its own. */
    void startCallback(Consumer<SubscriptionEvent.Delivered> callback, Consumer<SubscriptionEvent> onEvent) {
        callbackThread = new Thread(() -> runCallback(callback, onEvent), "herald-subscription-" + id);
        callbackThread.setDaemon(true);
        callbackThread.start();
    }

    private void runCallback(Consumer<SubscriptionEvent.Delivered> callback, Consumer<SubscriptionEvent> onEvent) {
        while (true) {
            SubscriptionEvent event;
            try {
                event = nextEvent(Duration.ofDays(365));
            } catch (ClosedException e) {
                return;
            }
            try {
                if (event instanceof SubscriptionEvent.Delivered delivered) {
                    callback.accept(delivered);
                } else if (event != null && onEvent != null) {
                    onEvent.accept(event);
                }
            } catch (RuntimeException e) {
                System.err.println("herald: subscription " + id + " callback failed: " + e);
            }
        }
    }

    /**
     * Returns the next record, waiting at most {@code timeout}; null on timeout. Gap notices
     * and interruptions on the way are counted and skipped.
     *
     * @throws ClosedException once the subscription is closed and drained
     */
    public SubscriptionEvent.Delivered next(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            SubscriptionEvent event = nextEvent(Duration.ofNanos(Math.max(0, left)));
            if (event == null) {
                return null;
            }
            if (event instanceof SubscriptionEvent.Delivered delivered) {
                return delivered;
            }
        }
    }

    /**
     * Returns the next event (record, gap, interruption), waiting at most {@code timeout}; null on timeout.
     *
     * @throws ClosedException once the subscription is closed and drained
     */
    public SubscriptionEvent nextEvent(Duration timeout) {
        SubscriptionEvent localGap = takeLocalGap();
        if (localGap != null) {
            return localGap;
        }
        Object item;
        try {
            item = queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HeraldException("interrupted while waiting for a record", e);
        }
        if (item == END) {
            queue.offer(END);
            throw new ClosedException("subscription " + id + " is closed" + (closeReason == null ? "" : ": " + closeReason));
        }
        return (SubscriptionEvent) item;
    }

    private synchronized SubscriptionEvent takeLocalGap() {
        if (localDrops.isEmpty()) {
            return null;
        }
        long count = localDrops.values().stream().mapToLong(Long::longValue).sum();
        SubscriptionEvent gap = new SubscriptionEvent.Gap(count, localFirst, localLast, Map.copyOf(localDrops), null, true);
        localDrops.clear();
        return gap;
    }

    /** Returns a blocking iterator over the records; it ends when the subscription closes. */
    @Override
    public Iterator<SubscriptionEvent.Delivered> iterator() {
        return new Iterator<>() {
            private SubscriptionEvent.Delivered next;

            @Override
            public boolean hasNext() {
                while (next == null) {
                    try {
                        next = Subscription.this.next(Duration.ofSeconds(1));
                    } catch (ClosedException e) {
                        return false;
                    }
                }
                return true;
            }

            @Override
            public SubscriptionEvent.Delivered next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("subscription " + id + " is closed");
                }
                SubscriptionEvent.Delivered result = next;
                next = null;
                return result;
            }
        };
    }

    @Override
    public void deliver(Frame.DeliverEntry entry) {
        if (closed) {
            return;
        }
        if (entry.record() == null) {
            undecodable.incrementAndGet();
            return;
        }
        if (!queue.offer(new SubscriptionEvent.Delivered(entry.record(), entry.seq(), entry.received()))) {
            droppedLocally(entry);
        }
    }

    private synchronized void droppedLocally(Frame.DeliverEntry entry) {
        droppedLocally.incrementAndGet();
        lost.incrementAndGet();
        if (localDrops.isEmpty()) {
            localFirst = entry.seq();
        }
        localLast = entry.seq();
        localDrops.merge(entry.record().priority(), 1L, Long::sum);
    }

    @Override
    public void gap(Frame.Gap gap) {
        lost.addAndGet(gap.count());
        event(new SubscriptionEvent.Gap(gap.count(), gap.firstSeq(), gap.lastSeq(), gap.byPriority(), gap.member(), false));
    }

    @Override
    public void interrupted(String server) {
        event(new SubscriptionEvent.Interrupted(server));
    }

    private void event(SubscriptionEvent event) {
        if (!queue.offer(event)) {
            // a full queue: the notice is kept as a count (lost() already holds gap counts)
            return;
        }
    }

    /** Ends the subscription; what is queued can still be read, then readers get ClosedException. */
    @Override
    public void closed(String why) {
        closeReason = why;
        closed = true;
        while (!queue.offer(END)) {
            if (queue.poll() instanceof SubscriptionEvent.Delivered) {
                lost.incrementAndGet(); // made room for the end mark: counted
                droppedLocally.incrementAndGet();
            }
        }
    }

    @Override
    public Frame subscribeFrame(long cid) {
        return subscribeFrame.apply(cid);
    }

    /** Returns true once closed. */
    public boolean isClosed() {
        return closed;
    }

    /** Unsubscribes (no answer awaited) and ends the iterator and the callback thread. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        connection.removeSubscription(id);
        try {
            connection.send(FrameCodec.encode(new Frame.Unsubscribe(0, id)));
        } catch (ClosedException e) {
            // the connection is gone: so is the subscription at the server
        }
        queue.clear(); // the program is done with it
        closed("closed by the program");
        if (callbackThread != null && callbackThread != Thread.currentThread()) {
            try {
                callbackThread.join(1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
