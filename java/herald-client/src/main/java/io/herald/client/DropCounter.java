package io.herald.client;

import io.herald.client.wire.Kind;
import io.herald.client.wire.Origin;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Every record a logger lost, by priority and by reason, and the WARNING record that reports
 * the losses since the last report (type {@value #DROP_REPORT_TYPE}, as the Rust logger's).
 */
public final class DropCounter {
    /** The type of drop report records. */
    public static final String DROP_REPORT_TYPE = "herald.logger.dropped";

    /** Why a record was lost. */
    public enum Reason {
        /** The logger's buffer was full (the sender fell behind, or no server for a while). */
        BUFFER_FULL,
        /** The connection's send window was full. */
        SEND_WINDOW_FULL,
        /** The record could not be sent at all (too large, or a field no Herald value). */
        REFUSED,
        /** Logged after close, or still buffered when the logger closed. */
        CLOSED;

        /** Returns the lowercase name used in reports. */
        public String reportName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final AtomicLongArray byPriority = new AtomicLongArray(12);
    private final AtomicLongArray byReason = new AtomicLongArray(Reason.values().length);
    private final long[] reportedByPriority = new long[12];
    private final long[] reportedByReason = new long[Reason.values().length];

    /** Counts one lost record. */
    public void count(Priority priority, Reason reason) {
        byPriority.incrementAndGet(priority.value());
        byReason.incrementAndGet(reason.ordinal());
    }

    /** Counts {@code n} lost records whose priorities are not known (reported as "unknown"). */
    public void countUnknown(Reason reason, long n) {
        if (n > 0) {
            byPriority.addAndGet(0, n);
            byReason.addAndGet(reason.ordinal(), n);
        }
    }

    /** Returns every record lost so far. */
    public long total() {
        long total = 0;
        for (int i = 0; i < byReason.length(); i++) {
            total += byReason.get(i);
        }
        return total;
    }

    /** Returns the records lost for one reason. */
    public long count(Reason reason) {
        return byReason.get(reason.ordinal());
    }

    /** Returns the report of the losses since the last report, or null when there were none. Not thread-safe: the sender calls it. */
    Record report(String subject, Origin origin) {
        Map<String, Object> priorities = new LinkedHashMap<>();
        Map<String, Object> reasons = new LinkedHashMap<>();
        long total = 0;
        StringBuilder byP = new StringBuilder();
        // Slots are the priorities' wire values; slot 0, last, the records of unknown priority.
        int[] slots = new int[Priority.values().length + 1];
        for (int i = 0; i < Priority.values().length; i++) {
            slots[i] = Priority.values()[i].value();
        }
        for (int index : slots) {
            String name = index == 0 ? "unknown" : Priority.fromValue(index).name();
            long now = byPriority.get(index);
            long n = now - reportedByPriority[index];
            reportedByPriority[index] = now;
            if (n > 0) {
                priorities.put(name, n);
                total += n;
                byP.append(byP.length() > 0 ? ", " : "").append(n).append(' ').append(name);
            }
        }
        StringBuilder byR = new StringBuilder();
        for (Reason reason : Reason.values()) {
            long now = byReason.get(reason.ordinal());
            long n = now - reportedByReason[reason.ordinal()];
            reportedByReason[reason.ordinal()] = now;
            if (n > 0) {
                reasons.put(reason.reportName(), n);
                byR.append(byR.length() > 0 ? ", " : "").append(n).append(' ').append(reason.reportName());
            }
        }
        if (total == 0) {
            return null;
        }
        return Record.builder(Kind.LOG, subject).type(DROP_REPORT_TYPE).priority(Priority.WARNING).origin(origin)
                .text("logger dropped " + total + " records (" + byP + "; " + byR + ")")
                .field("dropped", total).field("dropped_by_priority", priorities).field("dropped_by_reason", reasons).build();
    }
}
