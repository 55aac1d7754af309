package io.herald.client.wire;

import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.msgpack.value.ValueType;

/**
 * Field values (docs/protocol.md, Field values) as plain Java objects:
 *
 * <table>
 * <caption>Herald value types and their Java classes</caption>
 * <tr><th>Herald</th><th>decoded as</th><th>also accepted when encoding</th></tr>
 * <tr><td>bool</td><td>Boolean</td><td></td></tr>
 * <tr><td>int</td><td>Long, or BigInteger above 2^63-1</td><td>Integer, Short, Byte, BigInteger</td></tr>
 * <tr><td>float</td><td>Double</td><td>Float</td></tr>
 * <tr><td>string</td><td>String</td><td>any CharSequence, Character, Enum (its name)</td></tr>
 * <tr><td>bytes</td><td>byte[]</td><td></td></tr>
 * <tr><td>time</td><td>{@link HeraldTime}</td><td>Instant</td></tr>
 * <tr><td>array</td><td>List</td><td>Object[], any Collection</td></tr>
 * <tr><td>map</td><td>LinkedHashMap (wire order)</td><td>any Map with String keys</td></tr>
 * </table>
 *
 * <p>Null is no value: encoding it, or decoding nil, is an error naming the field.
 */
public final class Values {
    /** How deep maps and arrays may nest inside a record's fields, counting the fields map. */
    public static final int MAX_DEPTH = 32;

    private Values() {
    }

    /** Writes a fields map (str → value) in its iteration order. */
    public static void encodeFields(MsgWriter writer, Map<String, ?> fields) {
        encodeMap(writer, fields, "", 1);
    }

    /** Writes one value; {@code name} is used in errors. */
    public static void encodeValue(MsgWriter writer, Object value, String name) {
        encodeValue(writer, value, name, 1);
    }

    private static void encodeMap(MsgWriter writer, Map<?, ?> map, String name, int depth) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("value `" + name + "` nested too deep (more than " + MAX_DEPTH + " levels)");
        }
        writer.map(map.size());
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException((name.isEmpty() ? "fields have" : "map `" + name + "` has") + " a key that is not a string: " + entry.getKey());
            }
            writer.str(key);
            encodeValue(writer, entry.getValue(), name.isEmpty() ? key : name + "." + key, depth);
        }
    }

    private static void encodeValue(MsgWriter writer, Object value, String name, int depth) {
        if (value instanceof String s) {
            writer.str(s);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            writer.sint(((Number) value).longValue());
        } else if (value instanceof Double || value instanceof Float) {
            writer.float64(((Number) value).doubleValue());
        } else if (value instanceof Boolean b) {
            writer.bool(b);
        } else if (value instanceof BigInteger big) {
            if (big.signum() < 0 ? big.bitLength() > 63 : big.bitLength() > 64) {
                throw new IllegalArgumentException("field `" + name + "` holds " + big + ", outside -2^63..2^64-1");
            }
            writer.bigint(big);
        } else if (value instanceof HeraldTime t) {
            writer.time(t.nanos());
        } else if (value instanceof Instant instant) {
            writer.time(HeraldTime.of(instant).nanos());
        } else if (value instanceof byte[] bytes) {
            writer.bin(bytes);
        } else if (value instanceof Map<?, ?> map) {
            encodeMap(writer, map, name, depth + 1);
        } else if (value instanceof List<?> || value instanceof Object[] || value instanceof java.util.Collection<?>) {
            encodeArray(writer, value, name, depth + 1);
        } else if (value instanceof CharSequence || value instanceof Character) {
            writer.str(value.toString());
        } else if (value instanceof Enum<?> e) {
            writer.str(e.name());
        } else if (value == null) {
            throw new IllegalArgumentException("field `" + name + "` is null, which is no Herald value");
        } else {
            throw new IllegalArgumentException("field `" + name + "` holds a " + value.getClass().getName()
                    + ", which is no Herald value (bool, integer, float, string, bytes, time, list, map)");
        }
    }

    private static void encodeArray(MsgWriter writer, Object value, String name, int depth) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("value `" + name + "` nested too deep (more than " + MAX_DEPTH + " levels)");
        }
        java.util.Collection<?> items = value instanceof Object[] array ? List.of(array) : (java.util.Collection<?>) value;
        writer.array(items.size());
        int index = 0;
        for (Object item : items) {
            encodeValue(writer, item, name + "[" + index++ + "]", depth);
        }
    }

    /** Reads a fields map; a repeated name, nil or an unknown extension is an error naming the field. */
    public static Map<String, Object> decodeFields(MsgReader reader) {
        return decodeMap(reader, "fields", 1);
    }

    /** Reads one value. */
    public static Object decodeValue(MsgReader reader, String name) {
        return decodeValue(reader, name, 1);
    }

    private static Map<String, Object> decodeMap(MsgReader reader, String name, int depth) {
        if (depth > MAX_DEPTH) {
            throw new DecodeException("invalid " + name + ": value nested too deep");
        }
        int length = reader.readMap(name);
        Map<String, Object> map = new LinkedHashMap<>(Math.max(4, length * 2));
        for (int i = 0; i < length; i++) {
            String key = reader.readStr("a name in " + name);
            Object value = decodeValue(reader, name + "." + key, depth);
            if (map.put(key, value) != null) {
                throw new DecodeException("invalid " + name + ": `" + key + "` appears twice");
            }
        }
        return map;
    }

    private static Object decodeValue(MsgReader reader, String name, int depth) {
        ValueType type = reader.peekType();
        switch (type) {
            case BOOLEAN:
                return reader.readBool(name);
            case INTEGER:
                return reader.readAnyInt(name);
            case FLOAT:
                return reader.readFloat(name);
            case STRING:
                return reader.readStr(name);
            case BINARY:
                return reader.readBin(name);
            case EXTENSION:
                return new HeraldTime(reader.readTime("invalid fields: `" + name + "`"));
            case MAP:
                return decodeMap(reader, name, depth + 1);
            case ARRAY:
                return decodeArray(reader, name, depth + 1);
            default:
                throw new DecodeException("invalid fields: nil at byte " + reader.position() + " is not a value (in `" + name + "`)");
        }
    }

    private static List<Object> decodeArray(MsgReader reader, String name, int depth) {
        if (depth > MAX_DEPTH) {
            throw new DecodeException("invalid fields: value nested too deep in `" + name + "`");
        }
        int length = reader.readArray(name);
        List<Object> list = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            list.add(decodeValue(reader, name + "[" + i + "]", depth));
        }
        return list;
    }

    /** Returns true when a map's keys are all distinct strings (for builders that copy maps). */
    static boolean distinct(List<String> names) {
        Set<String> seen = new HashSet<>();
        for (String n : names) {
            if (!seen.add(n)) {
                return false;
            }
        }
        return true;
    }
}
