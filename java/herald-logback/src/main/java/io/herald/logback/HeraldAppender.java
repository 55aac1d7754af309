package io.herald.logback;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import io.herald.client.FieldValues;
import io.herald.client.HeraldLogger;
import io.herald.client.LogEvent;
import io.herald.client.LoggerOptions;
import io.herald.client.errors.HeraldException;
import io.herald.client.wire.Priority;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.event.KeyValuePair;

/**
 * A Logback appender that publishes to Herald and never blocks the caller.
 *
 * <pre>
 * &lt;appender name="HERALD" class="io.herald.logback.HeraldAppender"&gt;
 *   &lt;url&gt;herald://dv01-lcu:7400,backup:7400&lt;/url&gt;
 * &lt;/appender&gt;
 * </pre>
 * Optional properties: {@code subject} (every record's subject; by default the logger's
 * name), {@code threshold} (lowest Herald priority sent; TRACE by default: Logback's levels
 * decide), {@code bufferRecords} (65536), {@code includeCallerData} (false: the caller's
 * file, line and method cost a stack walk in the caller's thread), {@code process}.
 *
 * <p>{@link #append} takes the formatted message, the MDC (string fields) and SLF4J 2
 * key-value pairs (typed fields: numbers, booleans, strings, times, bytes, lists and maps
 * stay typed, anything else becomes its text), the logger's name ({@code logger}) and the
 * throwable (the {@code stack} field), and hands them to a {@link HeraldLogger}: a bounded
 * buffer and a sender thread; a full buffer drops and counts ({@link #dropped()}).
 * Priorities: {@link LogbackLevels}. What was logged before the program ends is sent at exit
 * (the exit waits at most about 3 s) whether or not Logback is stopped. Why the appender cannot reach the server is
 * written on standard error once for each reason, and kept in
 * {@code heraldLogger().lastError()}.
 */
public class HeraldAppender extends UnsynchronizedAppenderBase<ILoggingEvent> {
    private String url;
    private String subject;
    private String threshold = "TRACE";
    private int bufferRecords = LoggerOptions.DEFAULT_BUFFER_RECORDS;
    private boolean includeCallerData;
    private String process;
    private volatile HeraldLogger logger;
    /** Closes the logger at exit when the program did not stop Logback (no {@code <shutdownHook/>}). */
    private Thread exitHook;

    /** Sets the server URL (required). */
    public void setUrl(String value) {
        url = value;
    }

    /** Sets one subject for every record (by default each logger's name). */
    public void setSubject(String value) {
        subject = value;
    }

    /** Sets the lowest priority sent (a priority name). */
    public void setThreshold(String value) {
        threshold = value;
    }

    /** Sets the buffer size in records. */
    public void setBufferRecords(int value) {
        bufferRecords = value;
    }

    /** Sends the caller's file, line and method (costs a stack walk per call). */
    public void setIncludeCallerData(boolean value) {
        includeCallerData = value;
    }

    /** Sets the origin process name. */
    public void setProcess(String value) {
        process = value;
    }

    /** Returns the logger behind the appender, or null before start. */
    public HeraldLogger heraldLogger() {
        return logger;
    }

    /** Returns the records lost so far. */
    public long dropped() {
        return logger == null ? 0 : logger.dropped();
    }

    @Override
    public void start() {
        if (isStarted()) {
            return; // started twice: the logger and the exit hook of the first start stand
        }
        if (url == null || url.isBlank()) {
            addError("HeraldAppender `" + getName() + "` needs a server URL: add <url>herald://host:7400</url>");
            return;
        }
        try {
            LoggerOptions options = new LoggerOptions(subject != null ? subject : "java", Priority.parse(threshold), bufferRecords,
                    null, null, process, null, null);
            logger = HeraldLogger.connect(url, options);
        } catch (HeraldException | IllegalArgumentException e) {
            addError("HeraldAppender `" + getName() + "`: " + e.getMessage());
            return;
        }
        // What was logged just before the program ends still goes out (within 1 s), as the
        // JUL handler's does when LogManager closes it at exit.
        HeraldLogger started = logger;
        exitHook = new Thread(() -> started.close(Duration.ofSeconds(1)), "herald-appender-exit");
        Runtime.getRuntime().addShutdownHook(exitHook);
        super.start();
    }

    @Override
    public void stop() {
        if (exitHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(exitHook);
            } catch (IllegalStateException exiting) {
                // the hooks are running: this stop comes from Logback's own hook
            }
            exitHook = null;
        }
        if (logger != null) {
            logger.close(Duration.ofSeconds(1));
        }
        super.stop();
    }

    @Override
    protected void append(ILoggingEvent event) {
        Priority priority = LogbackLevels.priorityOf(event);
        if (!logger.isEnabled(priority)) {
            return;
        }
        String loggerName = event.getLoggerName();
        Map<String, String> mdc = event.getMDCPropertyMap(); // an immutable snapshot
        List<KeyValuePair> pairs = event.getKeyValuePairs();
        Consumer<Map<String, Object>> fields = map -> addFields(map, loggerName, mdc, pairs);
        String file = null;
        int line = 0;
        String routine = null;
        if (includeCallerData) {
            StackTraceElement[] caller = event.getCallerData();
            if (caller != null && caller.length > 0) {
                file = caller[0].getFileName();
                line = Math.max(0, caller[0].getLineNumber());
                routine = caller[0].getClassName() + "." + caller[0].getMethodName();
            }
        }
        IThrowableProxy proxy = event.getThrowableProxy();
        Throwable thrown = proxy instanceof ThrowableProxy real ? real.getThrowable() : null;
        String recordSubject = subject != null ? subject : loggerName == null || loggerName.isEmpty() ? null : loggerName;
        java.time.Instant instant = event.getInstant();
        long time = instant != null ? instant.getEpochSecond() * 1_000_000_000L + instant.getNano() : event.getTimeStamp() * 1_000_000L;
        logger.log(new LogEvent(time, priority, recordSubject, message(event), null, fields, event.getThreadName(), file, line,
                routine, thrown));
    }

    /** Returns the text, or its formatting deferred to the sender when the arguments are immutable (same text). */
    private static Object message(ILoggingEvent event) {
        Object[] arguments = event.getArgumentArray();
        if (arguments == null || arguments.length == 0) {
            return event.getMessage();
        }
        if (LogEvent.immutable(arguments)) {
            return (Supplier<String>) event::getFormattedMessage;
        }
        return event.getFormattedMessage();
    }

    /** Adds the logger's name, the MDC and the key-value pairs (on the sender thread). */
    private static void addFields(Map<String, Object> fields, String loggerName, Map<String, String> mdc, List<KeyValuePair> pairs) {
        fields.put("logger", loggerName);
        if (mdc != null) {
            fields.putAll(mdc);
        }
        if (pairs != null) {
            for (KeyValuePair pair : pairs) {
                fields.put(pair.key, FieldValues.of(pair.value));
            }
        }
    }
}
