package io.herald.client.wire;

/** What a record is: a log entry, a message, or a change of an information object. */
public enum Kind {
    LOG, MESSAGE, INFO;

    /** Returns the wire value: 0 log, 1 message, 2 info. */
    public int value() {
        return ordinal();
    }

    /** Returns this kind's bit in a filter's kinds mask. */
    public int bit() {
        return 1 << ordinal();
    }

    /** Returns the lowercase name used in the test vectors and URLs. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Returns the kind of a wire value.
     *
     * @throws IllegalArgumentException for a value other than 0, 1 or 2
     */
    public static Kind fromValue(long value) {
        if (value < 0 || value > 2) {
            throw new IllegalArgumentException("kind " + value + " is not defined (expected 0 log, 1 message, 2 info)");
        }
        return values()[(int) value];
    }
}
