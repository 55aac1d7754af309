package io.herald.client.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * An INFO_REPLY answer, {@code [[object or nil, …], [type, …]]}.
 *
 * @param objects the objects, null where a name has none
 * @param types   the types
 */
public record InfoReply(List<InfoObject> objects, List<InfoType> types) {

    /** Writes the answer array. */
    public void encode(MsgWriter writer) {
        writer.array(2).array(objects.size());
        for (InfoObject object : objects) {
            if (object == null) {
                writer.nil();
            } else {
                object.encode(writer);
            }
        }
        writer.array(types.size());
        for (InfoType type : types) {
            type.encode(writer);
        }
    }

    /** Reads the answer array. */
    public static InfoReply decode(MsgReader reader) {
        reader.readArray("info answer", 2, 2);
        int count = reader.readArray("objects");
        List<InfoObject> objects = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            if (reader.peekNil()) {
                reader.readNil();
                objects.add(null);
            } else {
                objects.add(InfoObject.decode(reader));
            }
        }
        int typeCount = reader.readArray("types");
        List<InfoType> types = new ArrayList<>(typeCount);
        for (int i = 0; i < typeCount; i++) {
            types.add(InfoType.decode(reader));
        }
        return new InfoReply(objects, types);
    }
}
