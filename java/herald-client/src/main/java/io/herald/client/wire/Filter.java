package io.herald.client.wire;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What a subscription takes (docs/protocol.md, Subscriptions and filters): every dimension
 * must match; an open dimension is left out of the map, so {@link #ALL} is {@code 80}.
 *
 * @param subject      glob matched against the whole subject, "*" when open
 * @param type         glob matched against the record's type, "*" when open
 * @param priorityBits bit n set = priority n; {@link Priority#ALL_BITS} when open
 * @param audience     names, empty = open
 * @param kindBits     bit 0 log, 1 message, 2 info; 7 when open
 */
public record Filter(String subject, String type, int priorityBits, List<String> audience, int kindBits) {
    /** The open filter: everything. */
    public static final Filter ALL = new Filter("*", "*", Priority.ALL_BITS, List.of(), 7);

    /** Checks each dimension. */
    public Filter {
        subject = subject == null ? "*" : Subjects.checkPattern(subject, "subject");
        type = type == null ? "*" : Subjects.checkPattern(type, "type");
        Priority.fromBits(priorityBits);
        audience = audience == null ? List.of() : List.copyOf(audience);
        for (String name : audience) {
            int bytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (bytes < 1 || bytes > 64) {
                throw new IllegalArgumentException("audience name `" + name + "` is " + bytes + " bytes long (expected 1..64)");
            }
        }
        if (kindBits == 0 || (kindBits & ~7) != 0) {
            throw new IllegalArgumentException("kinds 0x" + Integer.toHexString(kindBits) + " are not a set of kinds (bits 0..2)");
        }
    }

    /** Returns the filter of a subject pattern, everything else open. */
    public static Filter subject(String pattern) {
        return ALL.withSubject(pattern);
    }

    /** Returns a copy with this subject pattern. */
    public Filter withSubject(String pattern) {
        return new Filter(pattern, type, priorityBits, audience, kindBits);
    }

    /** Returns a copy with this type pattern. */
    public Filter withType(String pattern) {
        return new Filter(subject, pattern, priorityBits, audience, kindBits);
    }

    /** Returns a copy taking only priorities at or above this one. */
    public Filter atLeast(Priority priority) {
        return new Filter(subject, type, priority.atOrAboveBits(), audience, kindBits);
    }

    /** Returns a copy taking only these priorities. */
    public Filter withPriorities(Collection<Priority> priorities) {
        int bits = 0;
        for (Priority priority : priorities) {
            bits |= priority.bit();
        }
        return new Filter(subject, type, bits, audience, kindBits);
    }

    /** Returns a copy with this audience. */
    public Filter withAudience(List<String> names) {
        return new Filter(subject, type, priorityBits, names, kindBits);
    }

    /** Returns a copy taking only these kinds. */
    public Filter withKinds(Collection<Kind> kinds) {
        int bits = 0;
        for (Kind kind : kinds) {
            bits |= kind.bit();
        }
        return new Filter(subject, type, priorityBits, audience, bits);
    }

    private static boolean open(String pattern) {
        return pattern.chars().allMatch(c -> c == '*');
    }

    /** Writes the filter map, open dimensions left out, keys ascending. */
    public void encode(MsgWriter writer) {
        boolean hasSubject = !open(subject);
        boolean hasType = !open(type);
        boolean hasPriorities = priorityBits != Priority.ALL_BITS;
        boolean hasAudience = !audience.isEmpty();
        boolean hasKinds = kindBits != 7;
        writer.map((hasSubject ? 1 : 0) + (hasType ? 1 : 0) + (hasPriorities ? 1 : 0) + (hasAudience ? 1 : 0) + (hasKinds ? 1 : 0));
        if (hasSubject) {
            writer.uint(0).str(subject);
        }
        if (hasType) {
            writer.uint(1).str(type);
        }
        if (hasPriorities) {
            writer.uint(2).uint(priorityBits);
        }
        if (hasAudience) {
            writer.uint(3).array(audience.size());
            audience.forEach(writer::str);
        }
        if (hasKinds) {
            writer.uint(4).uint(kindBits);
        }
    }

    /** Reads a filter map; unknown or repeated keys are errors. */
    public static Filter decode(MsgReader reader) {
        int length = reader.readMap("filter");
        String subject = null;
        String type = null;
        int priorities = Priority.ALL_BITS;
        List<String> audience = List.of();
        int kinds = 7;
        int seen = 0;
        for (int i = 0; i < length; i++) {
            int key = reader.readSmallUint("a filter key");
            if (key > 4 || (seen & (1 << key)) != 0) {
                throw new DecodeException(key > 4 ? "unknown filter key " + key : "filter key " + key + " appears twice");
            }
            seen |= 1 << key;
            switch (key) {
                case 0 -> subject = reader.readStr("subject pattern");
                case 1 -> type = reader.readStr("type pattern");
                case 2 -> priorities = reader.readSmallUint("priority bits");
                case 3 -> {
                    int n = reader.readArray("audience");
                    List<String> names = new ArrayList<>(n);
                    for (int j = 0; j < n; j++) {
                        names.add(reader.readStr("an audience name"));
                    }
                    audience = names;
                }
                default -> kinds = reader.readSmallUint("kinds");
            }
        }
        try {
            return new Filter(subject, type, priorities, audience, kinds);
        } catch (IllegalArgumentException e) {
            throw new DecodeException("invalid filter: " + e.getMessage(), e);
        }
    }
}
