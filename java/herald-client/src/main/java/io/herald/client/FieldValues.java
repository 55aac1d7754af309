package io.herald.client;

import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Keeps a value that is a Herald value type as it is, and writes anything else as its {@code toString()}. */
public final class FieldValues {
    private FieldValues() {
    }

    /** Returns the value itself when it is a Herald value, else its text (null as "null"). */
    public static Object of(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String || value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte || value instanceof Double || value instanceof Float || value instanceof Boolean
                || value instanceof Instant || value instanceof byte[] || value instanceof io.herald.client.wire.HeraldTime) {
            return value;
        }
        if (value instanceof BigInteger big && big.bitLength() <= 64 && (big.signum() >= 0 || big.bitLength() <= 63)) {
            return value;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(FieldValues::of).toList();
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new java.util.LinkedHashMap<>();
            map.forEach((k, v) -> out.put(String.valueOf(k), of(v)));
            return out;
        }
        return value.toString();
    }
}
