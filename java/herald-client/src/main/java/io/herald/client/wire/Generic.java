package io.herald.client.wire;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Any MessagePack value as plain Java objects, nil included (null), maps with keys of any
 * type: how the client carries archive queries and answers, whose parts it does not
 * interpret. Written back in canonical form, so a canonical body re-encodes byte for byte.
 */
public final class Generic {
    private Generic() {
    }

    /** Reads one value: Long/BigInteger, Double, String, byte[], HeraldTime, Boolean, List, Map or null. */
    public static Object read(MsgReader reader) {
        switch (reader.peekType()) {
            case NIL:
                reader.readNil();
                return null;
            case BOOLEAN:
                return reader.readBool("a boolean");
            case INTEGER:
                return reader.readAnyInt("an integer");
            case FLOAT:
                return reader.readFloat("a float");
            case STRING:
                return reader.readStr("a string");
            case BINARY:
                return reader.readBin("bytes");
            case EXTENSION:
                return new HeraldTime(reader.readTime("a value"));
            case ARRAY: {
                int length = reader.readArray("an array");
                List<Object> list = new ArrayList<>(length);
                for (int i = 0; i < length; i++) {
                    list.add(read(reader));
                }
                return list;
            }
            default: {
                int length = reader.readMap("a map");
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < length; i++) {
                    map.put(read(reader), read(reader));
                }
                return map;
            }
        }
    }

    /** Writes one value read by {@link #read}. */
    public static void write(MsgWriter writer, Object value) {
        if (value == null) {
            writer.nil();
        } else if (value instanceof Long number) {
            writer.sint(number);
        } else if (value instanceof BigInteger big) {
            writer.bigint(big);
        } else if (value instanceof Double number) {
            writer.float64(number);
        } else if (value instanceof String text) {
            writer.str(text);
        } else if (value instanceof byte[] bytes) {
            writer.bin(bytes);
        } else if (value instanceof HeraldTime time) {
            writer.time(time.nanos());
        } else if (value instanceof Boolean flag) {
            writer.bool(flag);
        } else if (value instanceof List<?> list) {
            writer.array(list.size());
            for (Object item : list) {
                write(writer, item);
            }
        } else if (value instanceof Map<?, ?> map) {
            writer.map(map.size());
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                write(writer, entry.getKey());
                write(writer, entry.getValue());
            }
        } else {
            throw new IllegalArgumentException("no MessagePack form for " + value.getClass().getName());
        }
    }
}
