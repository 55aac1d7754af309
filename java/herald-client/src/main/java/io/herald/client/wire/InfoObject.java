package io.herald.client.wire;

import java.util.Map;

/**
 * An information object as the server holds it: {@code [name, type, time, version, attributes]}.
 *
 * @param name       {@code Namespace.Object}
 * @param type       its type's name
 * @param time       the producer's time of the last change, ns since the epoch
 * @param version    advanced by every change
 * @param attributes name → value (see {@link Values})
 */
public record InfoObject(String name, String type, long time, long version, Map<String, Object> attributes) {

    /** Writes the object array. */
    public void encode(MsgWriter writer) {
        writer.array(5).str(name).str(type).sint(time).uint(version);
        Values.encodeFields(writer, attributes);
    }

    /** Reads an object array. */
    public static InfoObject decode(MsgReader reader) {
        reader.readArray("information object", 5, 5);
        return new InfoObject(reader.readStr("object name"), reader.readStr("object type"), reader.readInt("object time"),
                reader.readUint("object version"), Values.decodeFields(reader));
    }
}
