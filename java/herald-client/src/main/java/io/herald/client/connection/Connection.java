package io.herald.client.connection;

import io.herald.client.errors.ClosedException;
import io.herald.client.errors.HeraldException;
import io.herald.client.errors.RequestTimeoutException;
import io.herald.client.errors.ServerErrorException;
import io.herald.client.io.Link;
import io.herald.client.io.ServerUrl;
import io.herald.client.io.TlsDialer;
import io.herald.client.wire.AckLevel;
import io.herald.client.wire.DecodeException;
import io.herald.client.wire.Frame;
import io.herald.client.wire.FrameCodec;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A client's connection: a batching writer thread that also sends heartbeats, a reader
 * thread per link that routes answers to their waiters (by cid) and records to their
 * subscriptions, and failover. When the link to a server fails, the reader of that link
 * moves to the next server of the URL ({@link Failover}), makes every subscription again and
 * resends every PUBLISH frame the old server had not acknowledged, before anything newer.
 *
 * <p>An ERROR with a request's cid answers that request alone; for a PUBLISH it may be
 * {@code bad_record}, {@code denied}, {@code read_only} or {@code limit}: the server refused
 * some records, routed the others, and the ACK that follows counts what it took (the
 * difference is counted in {@link #refusedRecords()}). Only an ERROR with cid 0, a frame
 * that cannot be read, or silence past the heartbeat timeout ends the link.
 *
 * <p>Lock: one {@link ReentrantLock} guards the outbox, the control queue and the link;
 * no I/O happens under it.
 */
public final class Connection implements AutoCloseable {
    /** ERROR codes on a PUBLISH after which the server still sends the batch's ACK. */
    static final Set<String> ACKED_REFUSALS = Set.of("bad_record", "denied", "read_only", "limit");
    /** Shortest heartbeat timeout: the server is given up after this much silence at least. */
    static final long MIN_HEARTBEAT_TIMEOUT_MS = 5_000;

    private final ServerUrl url;
    /** TLS for every server of the URL (its files read once, at open), or null for plain TCP. */
    private final TlsDialer tls;
    private final ConnectionOptions options;
    private final long producer;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Outbox outbox;
    private final ArrayDeque<byte[]> control = new ArrayDeque<>();
    private final Waiters waiters = new Waiters();
    private final Map<Long, SubscriptionSink> subscriptions = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(1);
    private final AtomicLong refusedRecords = new AtomicLong();
    private final AtomicLong failovers = new AtomicLong();
    private final AtomicLong abandoned = new AtomicLong();
    private final Thread writer;
    private Link link;
    private Frame.Welcome welcome;
    private volatile long maxFrameBytes;
    private int serverIndex;
    private long generation;
    private long openSinceNanos;
    private volatile long lastReceivedNanos;
    private volatile boolean closed;
    private volatile String closeReason;

    private Connection(ServerUrl url, TlsDialer tls, ConnectionOptions options, long producer, Failover.Found first) {
        this.tls = tls;
        this.url = url;
        this.options = options;
        this.producer = producer;
        this.outbox = new Outbox(options.batchBytes());
        install(first);
        writer = new Thread(this::writeLoop, "herald-writer");
        writer.setDaemon(true);
        writer.start();
    }

    /**
     * Connects to the first server of the URL that answers.
     *
     * @throws io.herald.client.errors.ConnectException naming why each server failed
     */
    public static Connection open(ServerUrl url, ConnectionOptions options) {
        long producer = newProducerId();
        Frame.Hello hello = hello(options, producer);
        TlsDialer tls = TlsDialer.of(url);
        Failover.Found first = Failover.firstLink(url.servers(), 0, hello, options.connectTimeoutMs(), tls);
        return new Connection(url, tls, options, producer, first);
    }

    private static long newProducerId() {
        long id = 0;
        SecureRandom random = new SecureRandom();
        while (id == 0) {
            id = random.nextLong();
        }
        return id;
    }

    private static Frame.Hello hello(ConnectionOptions options, long producer) {
        return new Frame.Hello(Frame.PROTOCOL_VERSION, options.name(), options.token(), List.of(), options.heartbeatMs(), producer);
    }

    private void install(Failover.Found found) {
        Link newLink = found.link();
        lock.lock();
        try {
            link = newLink;
            welcome = newLink.welcome();
            maxFrameBytes = welcome.maxFrameBytes();
            serverIndex = found.index();
            generation++;
            lastReceivedNanos = System.nanoTime();
            outbox.resendAll();
            // Frames queued while failing over (requests made meanwhile) go to the new link.
            for (SubscriptionSink sink : subscriptions.values()) {
                control.add(FrameCodec.encode(sink.subscribeFrame(nextId())));
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        long linkGeneration = generation;
        Thread reader = new Thread(() -> readLoop(newLink, linkGeneration), "herald-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Returns a fresh cid / ack id / subscription id. */
    public long nextId() {
        return ids.getAndIncrement();
    }

    /** Returns this client's producer id (random, non-zero, the same after a failover). */
    public long producer() {
        return producer;
    }

    /** Returns the WELCOME of the server connected to now. */
    public Frame.Welcome welcome() {
        lock.lock();
        try {
            return welcome;
        } finally {
            lock.unlock();
        }
    }

    /** Returns {@code host:port} of the server connected to now, or "" while failing over. */
    public String address() {
        lock.lock();
        try {
            return link == null ? "" : link.address().getHostString() + ":" + link.address().getPort();
        } finally {
            lock.unlock();
        }
    }

    /** Returns how many times the connection moved to another server. */
    public long failovers() {
        return failovers.get();
    }

    /** Returns how many published records the server refused (bad_record, denied, …). */
    public long refusedRecords() {
        return refusedRecords.get();
    }

    /**
     * Returns how many records this client held without an acknowledgement when it closed for
     * good (no server answered within the reconnect timeout, or the program closed it before
     * they were acknowledged): records it cannot say reached a server. 0 while it runs.
     */
    public long abandoned() {
        return abandoned.get();
    }

    /** Returns true once closed (by the program or because every server was lost). */
    public boolean isClosed() {
        return closed;
    }

    /** Returns the largest record that fits a PUBLISH frame under the server's limit. */
    public int maxRecordBytes() {
        return (int) Math.min(Integer.MAX_VALUE, maxFrameBytes) - Outbox.PUBLISH_HEADER_BYTES;
    }

    private void checkOpen() {
        if (closed) {
            throw new ClosedException("the client is closed" + (closeReason == null ? "" : ": " + closeReason));
        }
    }

    /**
     * Adds an encoded record to the open batch. With {@code wait}, waits while the bytes in
     * flight are over the limit; without, returns false then (nothing is added).
     *
     * @throws IllegalArgumentException when the record is larger than a PUBLISH frame holds
     * @throws ClosedException when the client is closed
     */
    public boolean publish(byte[] record, int offset, int length, boolean wait) {
        int maxRecordBytes = maxRecordBytes();
        if (length > maxRecordBytes) {
            throw new IllegalArgumentException("record of " + length + " bytes is larger than a PUBLISH frame holds (at most "
                    + maxRecordBytes + " bytes under the server's max_frame_bytes " + maxFrameBytes + ")");
        }
        lock.lock();
        try {
            while (true) {
                checkOpen();
                if (outbox.heldBytes() + length <= options.maxUnackedBytes()) {
                    break;
                }
                if (!wait) {
                    return false;
                }
                changed.await(100, TimeUnit.MILLISECONDS);
            }
            int limit = Math.min(options.batchBytes(), maxRecordBytes);
            if (outbox.wouldOverflow(length) || (outbox.hasOpenRecords() && length > limit)) {
                outbox.seal(nextId(), AckLevel.RECEIVED, producer);
                changed.signalAll();
            }
            if (!outbox.hasOpenRecords()) {
                openSinceNanos = System.nanoTime();
                changed.signalAll();
            }
            outbox.add(record, offset, length);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HeraldException("interrupted while waiting for room to publish", e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends the open batch (possibly empty) asking for {@code level} and returns the future
     * of its ACK: it completes once the server has taken everything published before.
     */
    public CompletableFuture<Frame> sealAndAcknowledge(AckLevel level) {
        long ackId = nextId();
        CompletableFuture<Frame> answer;
        lock.lock();
        try {
            checkOpen();
            outbox.seal(ackId, level, producer);
            // With its frame, under the lock a lost link's clean-up holds (failWaiters): it
            // sees both, and keeps the waiter for the resend, or neither.
            answer = waiters.add(ackId);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        return answer;
    }

    /**
     * Sends a request frame made for {@code cid} and returns the future of its answer (OK,
     * MONITOR_REPLY, INFO_REPLY with every part joined, QUERY_REPLY); an ERROR fails it with
     * {@link ServerErrorException}.
     */
    public CompletableFuture<Frame> request(long cid, Frame frame) {
        byte[] bytes = FrameCodec.encode(frame);
        if (bytes.length - 4 > welcome().maxFrameBytes()) {
            throw new IllegalArgumentException("request of " + bytes.length + " bytes is larger than the server's max_frame_bytes "
                    + welcome().maxFrameBytes());
        }
        CompletableFuture<Frame> answer = cid != 0 ? waiters.add(cid) : CompletableFuture.completedFuture(frame);
        try {
            send(bytes);
        } catch (RuntimeException e) {
            waiters.forget(cid);
            throw e;
        }
        return answer;
    }

    /** Queues a frame for the writer (no answer awaited). */
    public void send(byte[] frame) {
        lock.lock();
        try {
            checkOpen();
            control.add(frame);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits for an answer, turning failures into the client's exceptions. */
    public static Frame await(CompletableFuture<Frame> answer, long timeoutMs, String what) {
        try {
            return answer.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new RequestTimeoutException(what + " got no answer within " + timeoutMs + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof HeraldException herald) {
                throw herald;
            }
            throw new HeraldException(what + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HeraldException("interrupted while waiting for " + what, e);
        }
    }

    /** Forgets a waiter (after a timeout). */
    public void forget(long cid) {
        waiters.forget(cid);
    }

    /** Routes DELIVER entries and GAPs of subscription {@code id} to {@code sink}. */
    public void addSubscription(long id, SubscriptionSink sink) {
        subscriptions.put(id, sink);
    }

    /** Stops routing to subscription {@code id}. */
    public void removeSubscription(long id) {
        subscriptions.remove(id);
    }

    private long heartbeatMs() {
        return Math.max(100, welcome.heartbeatMs() == 0 ? 1000 : welcome.heartbeatMs());
    }

    private void writeLoop() {
        long nextPing = System.nanoTime() + heartbeatMs() * 1_000_000L;
        List<byte[]> frames = new ArrayList<>();
        while (true) {
            Link target;
            long linkGeneration;
            boolean ping = false;
            lock.lock();
            try {
                while (true) {
                    if (closed && control.isEmpty()) {
                        return;
                    }
                    long now = System.nanoTime();
                    if (link == null) {
                        changed.await(50, TimeUnit.MILLISECONDS);
                        continue;
                    }
                    long batchDue = outbox.hasOpenRecords() ? openSinceNanos + options.batchDelayMs() * 1_000_000L : Long.MAX_VALUE;
                    if (outbox.hasOpenRecords() && now >= batchDue) {
                        outbox.seal(nextId(), AckLevel.RECEIVED, producer);
                    }
                    ping = now >= nextPing;
                    for (Outbox.Sealed sealed : outbox.takeUnsent()) {
                        frames.add(sealed.frame);
                    }
                    if (!control.isEmpty() || !frames.isEmpty() || ping) {
                        break;
                    }
                    long wake = Math.min(nextPing, batchDue);
                    changed.awaitNanos(Math.max(100_000L, wake - now));
                }
                frames.addAll(0, control);
                control.clear();
                target = link;
                linkGeneration = generation;
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            if (ping) {
                frames.add(FrameCodec.encode(new Frame.Ping()));
                nextPing = System.nanoTime() + heartbeatMs() * 1_000_000L;
                checkHeartbeat(linkGeneration);
            }
            try {
                for (byte[] frame : frames) {
                    target.write(frame, 0, frame.length);
                }
                target.flush();
            } catch (IOException e) {
                linkLost(linkGeneration, "writing to the server failed: " + e.getMessage());
            }
            frames.clear();
        }
    }

    private void checkHeartbeat(long linkGeneration) {
        long timeoutMs = Math.max(MIN_HEARTBEAT_TIMEOUT_MS, 3 * heartbeatMs());
        long silentMs = (System.nanoTime() - lastReceivedNanos) / 1_000_000L;
        if (silentMs > timeoutMs) {
            linkLost(linkGeneration, "no frame from the server for " + silentMs + " ms");
        }
    }

    private void readLoop(Link from, long linkGeneration) {
        while (true) {
            Frame frame;
            try {
                frame = from.read();
            } catch (IOException | DecodeException e) {
                linkLost(linkGeneration, "reading from the server failed: " + e.getMessage());
                return;
            }
            if (frame == null) {
                linkLost(linkGeneration, "the server closed the connection");
                return;
            }
            lastReceivedNanos = System.nanoTime();
            if (frame instanceof Frame.Error error && error.cid() == 0) {
                linkLost(linkGeneration, "the server ended the connection: " + error.code() + ": " + error.message());
                return;
            }
            dispatch(frame);
        }
    }

    private void dispatch(Frame frame) {
        if (frame instanceof Frame.Deliver deliver) {
            for (Frame.DeliverEntry entry : deliver.entries()) {
                SubscriptionSink sink = subscriptions.get(entry.subscription());
                if (sink != null) {
                    sink.deliver(entry);
                }
            }
        } else if (frame instanceof Frame.Gap gap) {
            SubscriptionSink sink = subscriptions.get(gap.subscription());
            if (sink != null) {
                sink.gap(gap);
            }
        } else if (frame instanceof Frame.Ack ack) {
            acknowledged(ack);
        } else if (frame instanceof Frame.Error error) {
            refused(error);
        } else if (frame instanceof Frame.Ping) {
            send(FrameCodec.encode(new Frame.Pong()));
        } else if (frame instanceof Frame.InfoReplyFrame part) {
            waiters.infoPart(part);
        } else if (frame instanceof Frame.Ok ok) {
            waiters.complete(ok.cid(), frame);
        } else if (frame instanceof Frame.MonitorReply reply) {
            waiters.complete(reply.cid(), frame);
        } else if (frame instanceof Frame.QueryReply reply) {
            waiters.complete(reply.cid(), frame);
        }
    }

    private void acknowledged(Frame.Ack ack) {
        String refusal = null;
        lock.lock();
        try {
            Outbox.Sealed sealed = outbox.remove(ack.ackId());
            if (sealed != null) {
                refusal = sealed.refusal;
                if (ack.count() < sealed.records) {
                    refusedRecords.addAndGet(sealed.records - ack.count());
                }
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
        if (refusal != null) {
            int colon = refusal.indexOf(':');
            waiters.fail(ack.ackId(), new ServerErrorException(refusal.substring(0, colon), refusal.substring(colon + 2)));
        } else {
            waiters.complete(ack.ackId(), ack);
        }
    }

    private void refused(Frame.Error error) {
        lock.lock();
        try {
            Outbox.Sealed sealed = outbox.get(error.cid());
            if (sealed != null) {
                if (ACKED_REFUSALS.contains(error.code())) {
                    sealed.refusal = error.code() + ": " + error.message();
                    return;
                }
                outbox.remove(error.cid());
                refusedRecords.addAndGet(sealed.records);
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
        waiters.fail(error.cid(), new ServerErrorException(error.code(), error.message()));
    }

    private void linkLost(long linkGeneration, String why) {
        Link lost;
        int start;
        lock.lock();
        try {
            if (linkGeneration != generation || link == null) {
                return;
            }
            lost = link;
            link = null;
            start = (serverIndex + 1) % url.servers().size();
            control.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        lost.close();
        if (closed) {
            return;
        }
        failWaiters(new HeraldException("lost the connection to " + lost.address() + " (" + why + ") before the answer"), true);
        List<String> errors = new ArrayList<>();
        Failover.Found found = Failover.reconnect(url.servers(), start, hello(options, producer), options.connectTimeoutMs(),
                tls, options.reconnectTimeoutMs(), () -> closed, errors);
        if (found == null) {
            shutDown("lost the connection to " + lost.address() + " (" + why + ") and no server answered within "
                    + options.reconnectTimeoutMs() + " ms" + (errors.isEmpty() ? "" : ": " + errors.get(0)));
            return;
        }
        if (closed) {
            found.link().close();
            return;
        }
        failovers.incrementAndGet();
        install(found);
        String address = found.link().address().getHostString() + ":" + found.link().address().getPort();
        for (SubscriptionSink sink : subscriptions.values()) {
            sink.interrupted(address);
        }
    }

    private void failWaiters(HeraldException error, boolean keepPublishes) {
        // Under the lock a flush seals its frame and registers its waiter in: a flush made
        // while the link is lost is either kept (its frame is resent) or never seen here,
        // not failed for a frame the next server will acknowledge.
        lock.lock();
        try {
            waiters.failAll(error, keepPublishes ? Set.copyOf(outbox.ackIds()) : Set.of());
        } finally {
            lock.unlock();
        }
    }

    private void shutDown(String why) {
        Link last;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            // What no server acknowledged is given up with the connection: counted.
            long held = outbox.recordsHeld();
            abandoned.set(held);
            closeReason = held == 0 ? why : why + ", with " + held + " records unacknowledged";
            closed = true;
            last = link;
            link = null;
            control.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (last != null) {
            last.close();
        }
        failWaiters(new ClosedException("the client is closed: " + why), false);
        for (SubscriptionSink sink : subscriptions.values()) {
            sink.closed(why);
        }
        subscriptions.clear();
    }

    /** Returns how many records are published and not yet acknowledged (open batch included). */
    public long pendingRecords() {
        lock.lock();
        try {
            return outbox.recordsHeld();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the connection: waits up to {@code flushTimeoutMs} for the server to take what
     * was published, then closes the socket. Idempotent.
     */
    public void close(long flushTimeoutMs) {
        if (closed) {
            return;
        }
        if (flushTimeoutMs > 0) {
            try {
                await(sealAndAcknowledge(AckLevel.RECEIVED), flushTimeoutMs, "the last flush");
            } catch (HeraldException e) {
                // closing anyway: what was not acknowledged is lost, and counted below
            }
        }
        shutDown("closed by the program");
        try {
            writer.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes, waiting at most 5 s for the server to take what was published. */
    @Override
    public void close() {
        close(5_000);
    }

    /** Returns the reason the connection closed, or null while open. */
    public String closeReason() {
        return closeReason;
    }
}
