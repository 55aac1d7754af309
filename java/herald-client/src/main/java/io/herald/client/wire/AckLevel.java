package io.herald.client.wire;

/** How far a PUBLISH wants its batch acknowledged (docs/protocol.md, Acknowledgements). */
public enum AckLevel {
    /** No answer: fire and forget. */
    NONE,
    /** ACK once every record is on the queue of every matching subscription. */
    RECEIVED,
    /** ACK once every record is durably in the archive. */
    STORED;

    /** Returns the lowercase name used in the vectors. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Returns the level of a wire value.
     *
     * @throws DecodeException for a value above 2
     */
    public static AckLevel fromValue(long value) {
        if (value < 0 || value > 2) {
            throw new DecodeException("ack level " + Long.toUnsignedString(value) + " is not defined (expected 0 none, 1 received, 2 stored)");
        }
        return values()[(int) value];
    }
}
