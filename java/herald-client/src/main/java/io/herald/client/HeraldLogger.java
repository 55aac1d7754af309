package io.herald.client;

import io.herald.client.connection.ConnectionOptions;
import io.herald.client.errors.HeraldException;
import io.herald.client.wire.Kind;
import io.herald.client.wire.Origin;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The non-blocking logger: the hot path of a program that logs to Herald, and what the JUL
 * handler and the Logback appender use.
 *
 * <p>A log call compares the priority with the threshold (one volatile read) and offers a
 * {@link LogEvent} to a bounded buffer. It does no I/O and never waits: when the buffer is
 * full the record is dropped and counted ({@link #dropped()}). A sender thread takes what
 * was logged every {@link LoggerOptions#tick()} (at once for a record at or above
 * {@link LoggerOptions#flushImmediately()}), builds the records (kind log; origin host,
 * process, thread and, when given, source file, line and routine; a throwable as the
 * {@code stack} field) and hands them to the client without waiting. Every loss is counted
 * by reason, and reported to the server in a WARNING record of type
 * {@value DropCounter#DROP_REPORT_TYPE} on the logger's subject.
 *
 * <p>A logger made with {@link #connect} owns its client and connects in the sender
 * thread, with backoff: a program starts logging before the server is up, and its records
 * wait in the buffer. Why it cannot connect (the server is down, a TLS file or a token is
 * refused) is written on standard error, once for each reason, and kept in
 * {@link #lastError()}: no log call ever throws it.
 */
public final class HeraldLogger implements AutoCloseable {
    private static final long MAX_BACKOFF_MS = 5_000;
    /** How long an own client fails over: for all practical purposes, for ever (as the Rust and Python loggers). */
    private static final long ENDLESS_MS = 100L * 365 * 24 * 3600 * 1000;

    private final LoggerOptions options;
    private final String url;
    private final ArrayBlockingQueue<LogEvent> buffer;
    private final AtomicInteger threshold;
    private final DropCounter drops = new DropCounter();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong handled = new AtomicLong();
    private final AtomicLong offered = new AtomicLong();
    private final Thread sender;
    private final Origin origin;
    private volatile HeraldClient client;
    private volatile boolean closing;
    private volatile String lastError;
    /** The reasons already written on standard error (a few: then no more). */
    private final java.util.Set<String> said = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final boolean ownsClient;

    HeraldLogger(HeraldClient client, LoggerOptions options, boolean ownsClient) {
        this(client, null, options, ownsClient);
    }

    private HeraldLogger(HeraldClient client, String url, LoggerOptions options, boolean ownsClient) {
        this.client = client;
        this.url = url;
        this.options = options;
        this.ownsClient = ownsClient;
        this.buffer = new ArrayBlockingQueue<>(options.bufferRecords());
        this.threshold = new AtomicInteger(options.threshold().value());
        this.origin = Origin.of(options.host(), options.process());
        this.sender = new Thread(this::run, "herald-logger");
        sender.setDaemon(true);
        sender.start();
    }

    /**
     * Returns a logger that owns a client of {@code url}, connected in the background (this
     * call never waits for the server).
     *
     * @throws io.herald.client.errors.UrlException for a URL that cannot be read
     */
    public static HeraldLogger connect(String url, LoggerOptions options) {
        io.herald.client.io.ServerUrl.parse(url);
        return new HeraldLogger(null, url, options, true);
    }

    /** Returns true when a record of this priority would be sent (at or above the threshold). */
    public boolean isEnabled(Priority priority) {
        return priority.value() >= threshold.get();
    }

    /** Returns the threshold. */
    public Priority threshold() {
        return Priority.fromValue(threshold.get());
    }

    /** Sets the lowest priority sent. */
    public void setThreshold(Priority value) {
        threshold.set(value.value());
    }

    /** Returns the records lost so far (buffer full, send window full, refused, closed). */
    public long dropped() {
        return drops.total();
    }

    /** Returns the loss counts by reason. */
    public DropCounter drops() {
        return drops;
    }

    /** Returns the records handed to the client so far. */
    public long sent() {
        return sent.get();
    }

    /** Returns the last error the sender met (connecting, or a refused record), or null. */
    public String lastError() {
        return lastError;
    }

    /** Logs a text at a priority on the logger's subject. */
    public void log(Priority priority, String text) {
        if (isEnabled(priority)) {
            log(new LogEvent(io.herald.client.wire.HeraldTime.nowNanos(), priority, null, text, null, null,
                    Thread.currentThread().getName(), null, 0, null, null));
        }
    }

    /** Logs a text with fields at a priority on the logger's subject. */
    public void log(Priority priority, String text, Map<String, Object> fields) {
        if (isEnabled(priority)) {
            log(new LogEvent(io.herald.client.wire.HeraldTime.nowNanos(), priority, null, text, fields, null,
                    Thread.currentThread().getName(), null, 0, null, null));
        }
    }

    /** Logs an event (the threshold is checked again). Never blocks; a full buffer drops and counts. */
    public void log(LogEvent event) {
        if (!isEnabled(event.priority())) {
            return;
        }
        if (closing) {
            drops.count(event.priority(), DropCounter.Reason.CLOSED);
            return;
        }
        if (!buffer.offer(event)) {
            drops.count(event.priority(), DropCounter.Reason.BUFFER_FULL);
            return;
        }
        offered.incrementAndGet();
        if (event.priority().value() >= options.flushImmediately().value()) {
            LockSupport.unpark(sender);
        }
    }

    private void run() {
        long backoff = 50;
        long nextReport = System.nanoTime() + options.dropReportInterval().toNanos();
        List<LogEvent> batch = new ArrayList<>(1024);
        while (true) {
            if (ownsClient && client != null && client.isClosed() && !closing) {
                // It fails over without end, so it closed for another reason: what it held
                // unacknowledged is lost, and counted. Then connect again.
                drops.countUnknown(DropCounter.Reason.CLOSED, client.pendingRecords());
                String reason = client.closeReason();
                lastError = reason != null ? reason : "the connection closed";
                say("the connection closed: " + lastError + "; connecting again");
                client = null;
            }
            if (client == null && !connect()) {
                if (closing) {
                    drainClosed(batch);
                    return;
                }
                LockSupport.parkNanos(backoff * 1_000_000L);
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
                continue;
            }
            buffer.drainTo(batch, 4096);
            for (LogEvent event : batch) {
                send(event);
            }
            handled.addAndGet(batch.size());
            boolean idle = batch.isEmpty();
            batch.clear();
            if (System.nanoTime() >= nextReport) {
                report();
                nextReport = System.nanoTime() + options.dropReportInterval().toNanos();
            }
            if (idle) {
                if (closing) {
                    report();
                    return;
                }
                LockSupport.parkNanos(options.tick().toNanos());
            }
        }
    }

    private boolean connect() {
        if (url == null) {
            return false;
        }
        try {
            // Failover without end: nothing sent and not acknowledged is given up.
            client = HeraldClient.connect(url,
                    ConnectionOptions.defaults().withIdentity(options.process(), "").withReconnectTimeoutMs(ENDLESS_MS));
            lastError = null;
            return true;
        } catch (HeraldException e) {
            lastError = e.getMessage();
            say("cannot connect yet: " + lastError + "; trying again (records wait in the buffer; past "
                    + options.bufferRecords() + " they are dropped and counted)");
            return false;
        }
    }

    /** Writes {@code what} on standard error the first time, for at most 8 different reasons. */
    private void say(String what) {
        if (said.size() < 8 && said.add(what)) {
            System.err.println("herald logger (" + url + "): " + what);
        }
    }

    private void drainClosed(List<LogEvent> batch) {
        buffer.drainTo(batch);
        for (LogEvent event : batch) {
            drops.count(event.priority(), DropCounter.Reason.CLOSED);
        }
        handled.addAndGet(batch.size());
        batch.clear();
    }

    private void send(LogEvent event) {
        Record record;
        try {
            record = toRecord(event);
            if (!client.tryPublish(record)) {
                drops.count(event.priority(), DropCounter.Reason.SEND_WINDOW_FULL);
                return;
            }
            sent.incrementAndGet();
        } catch (IllegalArgumentException e) {
            drops.count(event.priority(), DropCounter.Reason.REFUSED);
            if (lastError == null) {
                System.err.println("herald logger: record refused, not sent: " + e.getMessage());
            }
            lastError = e.getMessage();
        } catch (HeraldException e) {
            drops.count(event.priority(), DropCounter.Reason.CLOSED);
            lastError = e.getMessage();
        }
    }

    private Record toRecord(LogEvent event) {
        Origin where = origin.withThread(event.thread());
        if (event.file() != null || event.line() > 0 || event.routine() != null) {
            where = where.withSource(event.file(), event.line() > 0 ? (long) event.line() : null, event.routine());
        }
        Record.Builder builder = Record.builder(Kind.LOG, event.subject() != null ? event.subject() : options.subject())
                .time(event.time()).priority(event.priority()).origin(where).text(event.text());
        Map<String, Object> fields = new LinkedHashMap<>();
        if (event.fields() != null) {
            fields.putAll(event.fields());
        }
        if (event.moreFields() != null) {
            event.moreFields().accept(fields);
        }
        if (event.thrown() != null) {
            fields.put("stack", stackText(event.thrown()));
        }
        if (!fields.isEmpty()) {
            builder.fields(fields);
        }
        return builder.build();
    }

    /** Returns a throwable's stack trace as {@link Throwable#printStackTrace()} writes it. */
    static String stackText(Throwable thrown) {
        StringWriter text = new StringWriter();
        thrown.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    private void report() {
        if (client == null) {
            return;
        }
        Record report = drops.report(options.subject(), origin.withThread(sender.getName()));
        if (report != null && !client.tryPublish(report)) {
            lastError = "drop report not sent: send window full";
        }
    }

    /**
     * Waits until everything logged so far is handed to the client and acknowledged by the
     * server, at most {@code timeout}; returns false when it could not (no server, timeout).
     */
    public boolean flush(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long target = offered.get();
        LockSupport.unpark(sender);
        while (handled.get() < target) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.parkNanos(1_000_000L);
        }
        HeraldClient current = client;
        if (current == null) {
            return false;
        }
        try {
            current.flush(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            return true;
        } catch (HeraldException e) {
            lastError = e.getMessage();
            return false;
        }
    }

    /** Flushes (at most {@code timeout}), stops the sender and closes the client it owns; once, from any thread. */
    public synchronized void close(Duration timeout) {
        if (closing) {
            return;
        }
        flush(timeout);
        closing = true;
        LockSupport.unpark(sender);
        try {
            sender.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        HeraldClient current = client;
        if (ownsClient && current != null) {
            current.close(timeout);
        }
    }

    /** Closes, waiting at most 1 s for the server. */
    @Override
    public void close() {
        close(Duration.ofSeconds(1));
    }
}
