package io.herald.client.wire;

/**
 * How the server's queue for a subscriber behaves when it falls behind (docs/protocol.md,
 * Delivery options). A null part is the server's default and is not written.
 *
 * @param policy           key 0, written unless DROP_NEW
 * @param maxRecords       key 1, at least 1
 * @param maxBytes         key 2, at least 1
 * @param blockTimeoutMs   key 3, policy BLOCK
 * @param protectedFrom    key 4: records at or above it are never shed while the hard limit allows
 * @param latestPerSecond  key 5: latest-only delivery, in (0, 10000]
 * @param group            key 6: a queue group; each record its members match goes to one of them
 */
public record DeliveryOptions(Policy policy, Long maxRecords, Long maxBytes, Long blockTimeoutMs, Priority protectedFrom,
        Double latestPerSecond, String group) {

    /** The server's defaults: the empty map. */
    public static final DeliveryOptions DEFAULT = new DeliveryOptions(null, null, null, null, null, null, null);

    /** Longest queue group name, in UTF-8 bytes. */
    public static final int MAX_GROUP_BYTES = 255;

    /** Options without a queue group. */
    public DeliveryOptions(Policy policy, Long maxRecords, Long maxBytes, Long blockTimeoutMs, Priority protectedFrom,
            Double latestPerSecond) {
        this(policy, maxRecords, maxBytes, blockTimeoutMs, protectedFrom, latestPerSecond, null);
    }

    /** What a full queue does. */
    public enum Policy {
        /** Refuse the newcomer (after shedding strictly lower priorities): the default. */
        DROP_NEW,
        /** Evict the oldest queued record of the lowest priority. */
        DROP_OLD,
        /** Make the publisher wait at most block_timeout_ms, then drop new. */
        BLOCK,
        /** Close the subscriber's connection. */
        DISCONNECT;

        /** Returns the name used in the vectors: drop-new, drop-old, block, disconnect. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    /** Checks the values. */
    public DeliveryOptions {
        policy = policy == null ? Policy.DROP_NEW : policy;
        if (maxRecords != null && maxRecords < 1) {
            throw new IllegalArgumentException("max_records " + maxRecords + " must be at least 1");
        }
        if (maxBytes != null && maxBytes < 1) {
            throw new IllegalArgumentException("max_bytes " + maxBytes + " must be at least 1");
        }
        if (latestPerSecond != null && !(latestPerSecond > 0 && latestPerSecond <= 10000)) {
            throw new IllegalArgumentException("latest_per_second " + latestPerSecond + " is outside (0, 10000]");
        }
        if (group != null) {
            int bytes = group.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (bytes == 0) {
                throw new IllegalArgumentException("group is empty (a queue group needs a name)");
            }
            if (bytes > MAX_GROUP_BYTES) {
                throw new IllegalArgumentException("group: a name of " + bytes + " bytes is longer than " + MAX_GROUP_BYTES);
            }
            if (group.chars().anyMatch(Character::isISOControl)) {
                throw new IllegalArgumentException("group `" + group + "` holds a control character");
            }
        }
    }

    /** Returns a copy in queue group {@code name} (docs/protocol.md, Queue groups). */
    public DeliveryOptions withGroup(String name) {
        return new DeliveryOptions(policy, maxRecords, maxBytes, blockTimeoutMs, protectedFrom, latestPerSecond, name);
    }

    /** Returns a copy with this policy. */
    public DeliveryOptions withPolicy(Policy value) {
        return new DeliveryOptions(value, maxRecords, maxBytes, blockTimeoutMs, protectedFrom, latestPerSecond, group);
    }

    /** Returns a copy with this record bound. */
    public DeliveryOptions withMaxRecords(long value) {
        return new DeliveryOptions(policy, value, maxBytes, blockTimeoutMs, protectedFrom, latestPerSecond, group);
    }

    /** Writes the options map, defaults left out. */
    public void encode(MsgWriter writer) {
        boolean hasPolicy = policy != Policy.DROP_NEW;
        int count = (hasPolicy ? 1 : 0) + (maxRecords != null ? 1 : 0) + (maxBytes != null ? 1 : 0)
                + (blockTimeoutMs != null ? 1 : 0) + (protectedFrom != null ? 1 : 0) + (latestPerSecond != null ? 1 : 0)
                + (group != null ? 1 : 0);
        writer.map(count);
        if (hasPolicy) {
            writer.uint(0).uint(policy.ordinal());
        }
        if (maxRecords != null) {
            writer.uint(1).uint(maxRecords);
        }
        if (maxBytes != null) {
            writer.uint(2).uint(maxBytes);
        }
        if (blockTimeoutMs != null) {
            writer.uint(3).uint(blockTimeoutMs);
        }
        if (protectedFrom != null) {
            writer.uint(4).uint(protectedFrom.value());
        }
        if (latestPerSecond != null) {
            writer.uint(5).float64(latestPerSecond);
        }
        if (group != null) {
            writer.uint(6).str(group);
        }
    }

    /** Reads an options map; unknown or repeated keys and bad values are errors. */
    public static DeliveryOptions decode(MsgReader reader) {
        int length = reader.readMap("options");
        Object[] parts = new Object[7];
        for (int i = 0; i < length; i++) {
            int key = reader.readSmallUint("an option key");
            if (key > 6 || parts[key] != null) {
                throw new DecodeException(key > 6 ? "unknown option key " + key : "option key " + key + " appears twice");
            }
            parts[key] = switch (key) {
                case 0 -> {
                    int policy = reader.readSmallUint("policy");
                    if (policy > 3) {
                        throw new DecodeException("policy " + policy + " is not defined (expected 0..3)");
                    }
                    yield Policy.values()[policy];
                }
                case 4 -> Priority.fromValue(reader.readUint("protected"));
                case 5 -> reader.readFloat("latest_per_second");
                case 6 -> reader.readStr("group");
                default -> reader.readUint("option " + key);
            };
        }
        try {
            return new DeliveryOptions((Policy) parts[0], (Long) parts[1], (Long) parts[2], (Long) parts[3],
                    (Priority) parts[4], (Double) parts[5], (String) parts[6]);
        } catch (IllegalArgumentException e) {
            throw new DecodeException("invalid options: " + e.getMessage(), e);
        }
    }
}
