package io.herald.client.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The eleven priorities of a record (ACS's), wire values 1..11 without 7
 * (docs/protocol.md, Priorities).
 */
public enum Priority {
    TRACE(1), DELOUSE(2), DEBUG(3), INFO(4), NOTICE(5), WARNING(6),
    ERROR(8), CRITICAL(9), ALERT(10), EMERGENCY(11);

    /** The bitmask of every priority, bits 1..6 and 8..11: the open filter. */
    public static final int ALL_BITS = 0x0f7e;

    private static final Priority[] BY_VALUE = new Priority[12];

    static {
        for (Priority priority : values()) {
            BY_VALUE[priority.value] = priority;
        }
    }

    private final int value;

    Priority(int value) {
        this.value = value;
    }

    /** Returns the wire value, 1..11 without 7. */
    public int value() {
        return value;
    }

    /** Returns this priority's bit in a filter's bitmask. */
    public int bit() {
        return 1 << value;
    }

    /**
     * Returns the priority of a wire value.
     *
     * @throws IllegalArgumentException for 0, 7 or a value above 11
     */
    public static Priority fromValue(long value) {
        if (value < 1 || value > 11 || BY_VALUE[(int) value] == null) {
            throw new IllegalArgumentException(
                    "priority " + Long.toUnsignedString(value) + " is not defined (expected 1..11 without 7)");
        }
        return BY_VALUE[(int) value];
    }

    /**
     * Returns the priority of a name, in any case.
     *
     * @throws IllegalArgumentException naming the value when it is no priority
     */
    public static Priority parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "unknown priority `" + name + "` (expected one of TRACE, DELOUSE, DEBUG, INFO, NOTICE, "
                            + "WARNING, ERROR, CRITICAL, ALERT, EMERGENCY)");
        }
    }

    /** Returns the bitmask of this priority and every one above it (a filter's {@code >=}). */
    public int atOrAboveBits() {
        int bits = 0;
        for (Priority priority : values()) {
            if (priority.value >= value) {
                bits |= priority.bit();
            }
        }
        return bits;
    }

    /**
     * Returns the priorities of a bitmask, ascending.
     *
     * @throws IllegalArgumentException when the mask is 0 or has a bit that is no priority
     */
    public static List<Priority> fromBits(long bits) {
        if (bits == 0 || (bits & ~ALL_BITS) != 0) {
            throw new IllegalArgumentException(
                    "priority bits 0x" + Long.toHexString(bits) + " are not a set of priorities (bits 1..6 and 8..11)");
        }
        List<Priority> list = new ArrayList<>();
        for (Priority priority : values()) {
            if ((bits & priority.bit()) != 0) {
                list.add(priority);
            }
        }
        return list;
    }
}
