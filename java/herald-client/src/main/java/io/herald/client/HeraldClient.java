package io.herald.client;

import io.herald.client.connection.Connection;
import io.herald.client.connection.ConnectionOptions;
import io.herald.client.errors.HeraldException;
import io.herald.client.errors.RequestTimeoutException;
import io.herald.client.io.ServerUrl;
import io.herald.client.wire.AckLevel;
import io.herald.client.wire.DeliveryOptions;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Frame;
import io.herald.client.wire.Kind;
import io.herald.client.wire.MsgWriter;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * A client of a Herald server: {@code HeraldClient.connect("herald://host:7400,host2:7400")}.
 *
 * <p>Layers (each package imports only those below it): {@code wire} (frames and
 * MessagePack, no I/O) ← {@code io} (URL, socket, handshake) ← {@code connection} (batching,
 * heartbeats, acknowledgement window, failover) ← this package (the API: publish,
 * subscribe, request, information objects, the non-blocking {@link HeraldLogger}).
 *
 * <p>Publishing is batched: {@link #publish} returns once the record is in the open batch,
 * and {@link #flush} waits until the server has taken everything published before it.
 * After a failover the client resends what the lost server had not acknowledged and makes
 * every subscription again. Thread-safe.
 */
public final class HeraldClient implements AutoCloseable {
    /** Default timeout of calls that wait for the server. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final ThreadLocal<MsgWriter> WRITERS = ThreadLocal.withInitial(MsgWriter::new);

    private final Connection connection;
    private final ServerUrl url;
    private final InfoObjects info;
    private Inbox inbox;

    private HeraldClient(Connection connection, ServerUrl url) {
        this.connection = connection;
        this.url = url;
        this.info = new InfoObjects(this, connection);
    }

    /**
     * Connects to the first server of the URL that answers.
     *
     * @throws io.herald.client.errors.UrlException for a URL that cannot be read
     * @throws io.herald.client.errors.ConnectException naming why each server failed
     */
    public static HeraldClient connect(String url) {
        return connect(url, ConnectionOptions.defaults());
    }

    /** Connects with options; the URL's {@code name} and {@code token} take precedence. */
    public static HeraldClient connect(String url, ConnectionOptions options) {
        ServerUrl parsed = ServerUrl.parse(url);
        ConnectionOptions effective = options.withIdentity(parsed.name() != null ? parsed.name() : options.name(),
                parsed.token() != null ? parsed.token() : options.token());
        return new HeraldClient(Connection.open(parsed, effective), parsed);
    }

    /** Returns the URL's servers (never its token). */
    public String url() {
        return url.toString();
    }

    /** Returns the name the server gave in its WELCOME (it changes on failover). */
    public String server() {
        return connection.welcome().server();
    }

    /** Returns {@code host:port} of the server connected to now. */
    public String address() {
        return connection.address();
    }

    /** Returns how many times the client moved to another server. */
    public long failovers() {
        return connection.failovers();
    }

    /** Returns how many published records the server refused. */
    public long refusedRecords() {
        return connection.refusedRecords();
    }

    /**
     * Returns how many records this client held without an acknowledgement when it closed for
     * good — no server answered within the reconnect timeout, or {@link #close()} came before
     * they were acknowledged: records it cannot say reached a server. 0 while it runs.
     */
    public long abandoned() {
        return connection.abandoned();
    }

    /** Returns this client's producer id, under which it numbers its records. */
    public long producer() {
        return connection.producer();
    }

    /** Returns true once closed, by {@link #close()} or because no server answered for the reconnect timeout. */
    public boolean isClosed() {
        return connection.isClosed();
    }

    /** Returns why the client closed for good (the server's refusal, or no server within the reconnect timeout), or null. */
    public String closeReason() {
        return connection.closeReason();
    }

    /** Returns how many published records no server has acknowledged yet (open batch included). */
    public long pendingRecords() {
        return connection.pendingRecords();
    }

    /** Returns the information-object calls. */
    public InfoObjects info() {
        return info;
    }

    /** Returns the connection (for the logger, which publishes without waiting). */
    Connection connection() {
        return connection;
    }

    static byte[] encode(Record record) {
        MsgWriter writer = WRITERS.get();
        writer.clear();
        record.encode(writer);
        return writer.toByteArray();
    }

    /**
     * Publishes a record: it goes in the open batch, sent within a few ms. Waits only while
     * more than the send window is unacknowledged.
     *
     * @throws IllegalArgumentException when the record is not valid or too large for a frame
     * @throws io.herald.client.errors.ClosedException when the client is closed
     */
    public void publish(Record record) {
        byte[] bytes = encode(record);
        connection.publish(bytes, 0, bytes.length, true);
    }

    /** Publishes unless the send window is full; returns false then (nothing was sent). */
    public boolean tryPublish(Record record) {
        byte[] bytes = encode(record);
        return connection.publish(bytes, 0, bytes.length, false);
    }

    /**
     * Publishes a record and waits until the server acknowledges it (and everything before)
     * at {@code level} (RECEIVED or STORED); returns how many records of its batch the server
     * took.
     *
     * @throws IllegalArgumentException for level NONE, which no answer follows (nothing is sent)
     * @throws io.herald.client.errors.ServerErrorException when the server refused it
     */
    public long publish(Record record, AckLevel level, Duration timeout) {
        if (level == AckLevel.NONE) {
            throw new IllegalArgumentException(
                    "publish with a wait needs an acknowledgement level: RECEIVED or STORED, not NONE"
                            + " (publish(record) sends without one)");
        }
        publish(record);
        return ((Frame.Ack) Connection.await(connection.sealAndAcknowledge(level), timeout.toMillis(), "publish")).count();
    }

    /** Publishes a log record about {@code subject}. */
    public void log(Priority priority, String subject, String text) {
        publish(Record.builder(Kind.LOG, subject).priority(priority).text(text).build());
    }

    /** Publishes a log record with fields. */
    public void log(Priority priority, String subject, String text, Map<String, ?> fields) {
        publish(Record.builder(Kind.LOG, subject).priority(priority).text(text).fields(fields).build());
    }

    /** Waits until the server has received and routed everything published so far. */
    public void flush(Duration timeout) {
        flush(AckLevel.RECEIVED, timeout);
    }

    /**
     * Waits until the server acknowledges the last batch at {@code level}: RECEIVED (routed,
     * and so everything before it), or STORED (the last batch durably in the archive too).
     *
     * @throws io.herald.client.errors.ServerErrorException e.g. {@code archive} for STORED
     *         on a server without archive
     * @throws RequestTimeoutException when no answer came in time
     */
    public void flush(AckLevel level, Duration timeout) {
        if (level == AckLevel.NONE) {
            throw new IllegalArgumentException("flush needs an acknowledgement level: RECEIVED or STORED, not NONE");
        }
        Connection.await(connection.sealAndAcknowledge(level), timeout.toMillis(), "flush");
    }

    /** Subscribes; read records with the subscription's {@code next} or its iterator. */
    public Subscription subscribe(Filter filter) {
        return subscribe(filter, DeliveryOptions.DEFAULT, null, null);
    }

    /** Subscribes; every record goes to {@code callback} on the subscription's own thread. */
    public Subscription subscribe(Filter filter, Consumer<SubscriptionEvent.Delivered> callback) {
        return subscribe(filter, DeliveryOptions.DEFAULT, callback, null);
    }

    /**
     * Subscribes with delivery options; with a callback, records go to it and gap notices and
     * interruptions to {@code onEvent} (may be null), else read them from the subscription.
     *
     * @throws io.herald.client.errors.ServerErrorException e.g. {@code bad_filter}, {@code limit}
     */
    public Subscription subscribe(Filter filter, DeliveryOptions options, Consumer<SubscriptionEvent.Delivered> callback,
            Consumer<SubscriptionEvent> onEvent) {
        return subscribeWith((cid, id) -> new Frame.Subscribe(cid, id, filter, options), DEFAULT_TIMEOUT, callback, onEvent);
    }

    Subscription subscribeWith(BiFunction<Long, Long, Frame> make, Duration timeout,
            Consumer<SubscriptionEvent.Delivered> callback, Consumer<SubscriptionEvent> onEvent) {
        long id = connection.nextId();
        Subscription subscription = new Subscription(connection, id, cid -> make.apply(cid, id), Subscription.DEFAULT_QUEUE_EVENTS);
        connection.addSubscription(id, subscription);
        long cid = connection.nextId();
        try {
            Connection.await(connection.request(cid, make.apply(cid, id)), timeout.toMillis(), "subscribe");
        } catch (RuntimeException e) {
            connection.forget(cid);
            connection.removeSubscription(id);
            throw e;
        }
        if (callback != null) {
            subscription.startCallback(callback, onEvent);
        }
        return subscription;
    }

    private synchronized Inbox inbox(Duration timeout) {
        if (inbox == null) {
            Inbox made = new Inbox(connection.nextId());
            connection.addSubscription(made.subscription(), made);
            long cid = connection.nextId();
            try {
                Connection.await(connection.request(cid, made.subscribeFrame(cid)), timeout.toMillis(), "subscribing the inbox");
            } catch (RuntimeException e) {
                connection.removeSubscription(made.subscription());
                throw e;
            }
            inbox = made;
        }
        return inbox;
    }

    /**
     * Sends a request (a record, normally kind message) and returns the first reply: its
     * {@code reply_to} and {@code id} are set here.
     *
     * @throws RequestTimeoutException when no reply came within {@code timeout}
     */
    public Record request(Record request, Duration timeout) {
        Inbox box = inbox(timeout);
        long id = connection.nextId();
        CompletableFuture<Record> reply = box.expect(id);
        publish(new Record(request.kind(), request.subject(), request.type(), request.time(), request.priority(),
                request.audience(), request.origin(), request.text(), request.fields(), box.replyTo(id), id));
        try {
            return reply.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new RequestTimeoutException("no reply to the request on `" + request.subject() + "` within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof HeraldException h ? h : new HeraldException("request failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HeraldException("interrupted while waiting for a reply", e);
        } finally {
            box.forget(id);
        }
    }

    /**
     * Answers a request: publishes {@code reply} (kind message) on the request's
     * {@code reply_to} with its {@code id}.
     *
     * @throws IllegalArgumentException when the record asks for no reply
     */
    public void reply(Record request, String text, Map<String, ?> fields) {
        if (request.replyTo() == null || request.id() == null) {
            throw new IllegalArgumentException("record on `" + request.subject() + "` asks for no reply (no reply_to and id)");
        }
        publish(Record.builder(Kind.MESSAGE, request.replyTo()).text(text).fields(fields).id(request.id()).build());
    }

    /** Returns the server's counters by name ({@code records_in}, {@code connections}, …). */
    public Map<String, Object> monitor(Duration timeout) {
        long cid = connection.nextId();
        try {
            return ((Frame.MonitorReply) Connection.await(connection.request(cid, new Frame.Monitor(cid)), timeout.toMillis(),
                    "monitor")).data();
        } finally {
            connection.forget(cid);
        }
    }

    /** Returns a non-blocking logger publishing through this client. */
    public HeraldLogger logger(LoggerOptions options) {
        return new HeraldLogger(this, options, false);
    }

    /** Closes: waits up to 5 s for the server to take what was published. Idempotent. */
    @Override
    public void close() {
        connection.close();
    }

    /** Closes, waiting at most {@code flushTimeout} for the server. */
    public void close(Duration flushTimeout) {
        connection.close(flushTimeout.toMillis());
    }
}
