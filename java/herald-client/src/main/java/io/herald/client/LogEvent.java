package io.herald.client;

import io.herald.client.wire.Priority;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.temporal.TemporalAccessor;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a log call hands the {@link HeraldLogger}: made in the caller's thread with as little
 * work as possible; the logger's sender thread turns it into a record (origin, stack text,
 * fields, and the message when its formatting was deferred).
 *
 * @param time        ns since the epoch
 * @param priority    the record's priority
 * @param subject     the subject, or null for the logger's
 * @param message     the text: a String, or a {@code Supplier<String>} the sender calls (only
 *                    for messages whose arguments are immutable, see {@link #immutable})
 * @param fields      typed fields, or null
 * @param moreFields  adds fields on the sender thread (from immutable snapshots), or null
 * @param thread      the calling thread's name
 * @param file        the caller's source file, or null
 * @param line        the caller's line, 0 when unknown
 * @param routine     the caller's class and method, or null
 * @param thrown      a throwable, written as the {@code stack} field, or null
 */
public record LogEvent(long time, Priority priority, String subject, Object message, Map<String, ?> fields,
        Consumer<Map<String, Object>> moreFields, String thread, String file, int line, String routine, Throwable thrown) {

    /** Returns the text, calling a deferred formatter. */
    public String text() {
        if (message instanceof Supplier<?> later) {
            Object text = later.get();
            return text == null ? "" : text.toString();
        }
        return message == null ? "" : message.toString();
    }

    /**
     * Returns true when formatting {@code arguments} later gives the same text as now:
     * every one is null or of an immutable type (strings, boxed primitives, big numbers,
     * enums, java.time values, UUIDs).
     */
    public static boolean immutable(Object[] arguments) {
        if (arguments == null) {
            return true;
        }
        for (Object argument : arguments) {
            if (!(argument == null || argument instanceof String || argument instanceof Integer || argument instanceof Long
                    || argument instanceof Double || argument instanceof Boolean || argument instanceof Character
                    || argument instanceof Short || argument instanceof Byte || argument instanceof Float
                    || argument instanceof BigInteger || argument instanceof BigDecimal || argument instanceof Enum<?>
                    || argument instanceof UUID || (argument instanceof TemporalAccessor && argument.getClass().getName().startsWith("java.time.")))) {
                return false;
            }
        }
        return true;
    }
}
