package io.herald.jul;

import io.herald.client.HeraldLogger;
import io.herald.client.LogEvent;
import io.herald.client.LoggerOptions;
import io.herald.client.FieldValues;
import io.herald.client.wire.Priority;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;

/**
 * A {@code java.util.logging} Handler that publishes to Herald and never blocks the caller.
 *
 * <p>One line of configuration ({@code logging.properties}) joins Herald:
 * <pre>
 * handlers = io.herald.jul.HeraldHandler
 * io.herald.jul.HeraldHandler.url = herald://dv01-lcu:7400,backup:7400
 * </pre>
 * Other properties, all optional: {@code subject} (every record's subject; by default the
 * logger's name), {@code level} (the handler's JUL level, ALL by default), {@code threshold}
 * (lowest Herald priority sent, TRACE by default: the JUL levels decide),
 * {@code bufferRecords} (65536), {@code includeCallerData} (false: the source file, line,
 * class and method cost stack walks in the caller's thread), {@code process} (origin process name).
 *
 * <p>{@link #publish} formats the message in the caller's thread, or, when its parameters are
 * all immutable ({@link LogEvent#immutable}: the same text either way), leaves that to the
 * sender thread, and hands the rest to a {@link HeraldLogger}: a bounded buffer and a sender
 * thread; a full buffer drops the record and counts it ({@link #dropped()}). Why the handler
 * cannot reach the server is written on standard error once for each reason, and kept in
 * {@code heraldLogger().lastError()}. Levels map to priorities by {@link JulLevels}. Fields:
 * {@code logger} (the logger's name), the entries of any {@code Map} parameter of the record
 * as typed fields, and a thrown exception as {@code stack}.
 */
public class HeraldHandler extends Handler {
    private static final Formatter MESSAGES = new Formatter() {
        @Override
        public String format(LogRecord record) {
            return formatMessage(record);
        }
    };

    private static final StackWalker WALKER = StackWalker.getInstance();

    private final HeraldLogger logger;
    private final String subject;
    private final boolean includeCallerData;

    /** Makes the handler from the LogManager properties {@code io.herald.jul.HeraldHandler.*}. */
    public HeraldHandler() {
        this(property("url", null), property("subject", null), Boolean.parseBoolean(property("includeCallerData", "false")),
                options(property("subject", "java"), property("threshold", "TRACE"),
                        intProperty("bufferRecords", LoggerOptions.DEFAULT_BUFFER_RECORDS),
                        property("process", null)));
        String level = property("level", null);
        if (level != null) {
            setLevel(Level.parse(level));
        }
    }

    /**
     * Makes a handler publishing to {@code url}; {@code subject} null takes each logger's name.
     *
     * @throws io.herald.client.errors.UrlException for a URL that cannot be read
     */
    public HeraldHandler(String url, String subject, boolean includeCallerData, LoggerOptions options) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("io.herald.jul.HeraldHandler needs a server URL: set io.herald.jul.HeraldHandler.url "
                    + "= herald://host:7400 in the logging configuration");
        }
        this.logger = HeraldLogger.connect(url, options);
        this.subject = subject;
        this.includeCallerData = includeCallerData;
        setLevel(Level.ALL);
    }

    private static LoggerOptions options(String subject, String threshold, int bufferRecords, String process) {
        return new LoggerOptions(subject, Priority.parse(threshold), bufferRecords, null, null, process, null, null);
    }

    private static int intProperty(String name, int fallback) {
        String value = property(name, null);
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(HeraldHandler.class.getName() + "." + name + " = `" + value
                    + "` is not a whole number", e);
        }
    }

    private static String property(String name, String fallback) {
        String value = LogManager.getLogManager().getProperty(HeraldHandler.class.getName() + "." + name);
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    /** Returns the logger behind the handler (threshold, counts). */
    public HeraldLogger heraldLogger() {
        return logger;
    }

    /** Returns the records lost so far. */
    public long dropped() {
        return logger.dropped();
    }

    @Override
    public void publish(LogRecord record) {
        if (record == null || !isLoggable(record)) {
            return;
        }
        Priority priority = JulLevels.priorityOf(record.getLevel());
        if (!logger.isEnabled(priority)) {
            return;
        }
        Object[] parameters = record.getParameters();
        Object message;
        if (parameters == null && record.getResourceBundle() == null) {
            message = record.getMessage();
        } else if (LogEvent.immutable(parameters)) {
            message = (Supplier<String>) () -> MESSAGES.formatMessage(record); // formatted by the sender: same text
        } else {
            message = MESSAGES.formatMessage(record);
        }
        String name = record.getLoggerName();
        Consumer<Map<String, Object>> fields = map -> addFields(map, name, parameters);
        String recordSubject = subject != null ? subject : name == null || name.isEmpty() ? null : name;
        String routine = null;
        String file = null;
        int line = 0;
        String className = includeCallerData ? record.getSourceClassName() : null;
        if (className != null) {
            String method = record.getSourceMethodName();
            routine = className + "." + method;
            StackWalker.StackFrame frame = WALKER.walk(frames -> frames
                    .filter(f -> f.getClassName().equals(className) && f.getMethodName().equals(method)).findFirst()).orElse(null);
            if (frame != null) {
                file = frame.getFileName();
                line = Math.max(0, frame.getLineNumber());
            }
        }
        Instant instant = record.getInstant();
        logger.log(new LogEvent(instant.getEpochSecond() * 1_000_000_000L + instant.getNano(), priority, recordSubject, message,
                null, fields, Thread.currentThread().getName(), file, line, routine, record.getThrown()));
    }

    /** Adds the logger's name and the entries of Map parameters (on the sender thread). */
    private static void addFields(Map<String, Object> fields, String loggerName, Object[] parameters) {
        if (loggerName != null && !loggerName.isEmpty()) {
            fields.put("logger", loggerName);
        }
        if (parameters != null) {
            for (Object parameter : parameters) {
                if (parameter instanceof Map<?, ?> map) {
                    map.forEach((key, value) -> fields.put(String.valueOf(key), FieldValues.of(value)));
                }
            }
        }
    }

    /** Waits at most 1 s for what was logged to reach the server. */
    @Override
    public void flush() {
        logger.flush(Duration.ofSeconds(1));
    }

    /** Flushes (at most 1 s) and closes the connection. */
    @Override
    public void close() {
        logger.close(Duration.ofSeconds(1));
    }
}
