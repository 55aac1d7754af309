package io.herald.client;

import io.herald.client.wire.Priority;
import java.time.Duration;

/**
 * How a {@link HeraldLogger} behaves. {@code new LoggerOptions("ANTENNA.DV01.Mount")} takes
 * the defaults.
 *
 * @param subject           subject of records logged without one, and of drop reports
 * @param threshold         lowest priority sent (INFO by default); below it a log call returns at once
 * @param bufferRecords     records the buffer holds before log calls drop (and count) new ones
 * @param tick              how often the sender takes what was logged
 * @param flushImmediately  records at or above it wake the sender at once
 * @param process           origin process (by default the program's main class or "java")
 * @param host              origin host (by default the machine's name)
 * @param dropReportInterval how often lost records are reported in a WARNING record
 */
public record LoggerOptions(String subject, Priority threshold, int bufferRecords, Duration tick, Priority flushImmediately,
        String process, String host, Duration dropReportInterval) {

    /** Default buffer size, records. */
    public static final int DEFAULT_BUFFER_RECORDS = 65_536;
    /** Default sender tick. */
    public static final Duration DEFAULT_TICK = Duration.ofMillis(5);

    /** Checks the values and fills defaults. */
    public LoggerOptions {
        io.herald.client.wire.Subjects.checkSubject(subject, "logger subject");
        threshold = threshold == null ? Priority.INFO : threshold;
        if (bufferRecords < 1) {
            throw new IllegalArgumentException("logger buffer of " + bufferRecords + " records (expected at least 1)");
        }
        tick = tick == null ? DEFAULT_TICK : tick;
        flushImmediately = flushImmediately == null ? Priority.EMERGENCY : flushImmediately;
        process = process == null ? ProcessInfo.processName() : process;
        host = host == null ? ProcessInfo.hostName() : host;
        dropReportInterval = dropReportInterval == null ? Duration.ofSeconds(1) : dropReportInterval;
    }

    /** Returns the defaults for records about {@code subject}. */
    public LoggerOptions(String subject) {
        this(subject, null, DEFAULT_BUFFER_RECORDS, null, null, null, null, null);
    }

    /** Returns a copy with this threshold. */
    public LoggerOptions withThreshold(Priority value) {
        return new LoggerOptions(subject, value, bufferRecords, tick, flushImmediately, process, host, dropReportInterval);
    }

    /** Returns a copy with this buffer size. */
    public LoggerOptions withBufferRecords(int value) {
        return new LoggerOptions(subject, threshold, value, tick, flushImmediately, process, host, dropReportInterval);
    }

    /** Returns a copy with this process name. */
    public LoggerOptions withProcess(String value) {
        return new LoggerOptions(subject, threshold, bufferRecords, tick, flushImmediately, value, host, dropReportInterval);
    }
}
