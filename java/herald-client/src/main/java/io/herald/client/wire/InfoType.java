package io.herald.client.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * A declared type of information objects:
 * {@code [name, base or nil, description, [[name, type, description], …]]}.
 *
 * @param name        the type's name
 * @param base        the type it extends, or null
 * @param description for people
 * @param attributes  its own attributes (a base's come first)
 */
public record InfoType(String name, String base, String description, List<Attribute> attributes) {

    /**
     * One attribute of a type.
     *
     * @param name        attribute name
     * @param type        {@code bool}, {@code s8} … {@code u64}, {@code float}, {@code double},
     *                    {@code string}, {@code time}, {@code bytes}, {@code array<T>}, or a type's name
     * @param description for people
     */
    public record Attribute(String name, String type, String description) {
    }

    /** Writes the type array. */
    public void encode(MsgWriter writer) {
        writer.array(4).str(name);
        if (base == null) {
            writer.nil();
        } else {
            writer.str(base);
        }
        writer.str(description).array(attributes.size());
        for (Attribute attribute : attributes) {
            writer.array(3).str(attribute.name()).str(attribute.type()).str(attribute.description());
        }
    }

    /** Reads a type array. */
    public static InfoType decode(MsgReader reader) {
        reader.readArray("type", 4, 4);
        String name = reader.readStr("type name");
        String base = reader.readStrOrNil("base type");
        String description = reader.readStr("type description");
        int count = reader.readArray("type attributes");
        List<Attribute> attributes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            reader.readArray("attribute", 3, 3);
            attributes.add(new Attribute(reader.readStr("attribute name"), reader.readStr("attribute type"),
                    reader.readStr("attribute description")));
        }
        return new InfoType(name, base, description, attributes);
    }
}
