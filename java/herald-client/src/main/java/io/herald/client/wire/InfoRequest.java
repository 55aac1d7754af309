package io.herald.client.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The request of an INFO frame, {@code [op, arguments]} (docs/protocol.md, Information objects). */
public sealed interface InfoRequest {

    /** How an update applies its attributes. */
    enum Mode {
        /** A new object: every attribute given. */
        CREATE,
        /** An existing object: the given attributes replace those. */
        UPDATE,
        /** Create or update. */
        UPSERT;

        /** Returns the lowercase name. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Op 0: declares a type. */
    record Declare(InfoType type) implements InfoRequest {
    }

    /** Op 1: creates, updates or upserts an object; {@code type} may be null. */
    record Update(Mode mode, String name, String type, long time, Map<String, Object> attributes) implements InfoRequest {
    }

    /** Op 2: deletes an object. */
    record Delete(String name, long time) implements InfoRequest {
    }

    /** Op 3: gets objects by name, all read at one instant. */
    record Get(List<String> names) implements InfoRequest {
    }

    /** Op 4: lists the objects a selection takes. */
    record ListObjects(Selection selection) implements InfoRequest {
    }

    /** Op 5: every declared type. */
    record Types() implements InfoRequest {
    }

    /** Writes {@code [op, arguments]}. */
    default void encode(MsgWriter writer) {
        writer.array(2);
        if (this instanceof Declare declare) {
            writer.uint(0);
            declare.type().encode(writer);
        } else if (this instanceof Update update) {
            writer.uint(1).array(5).uint(update.mode().ordinal()).str(update.name());
            if (update.type() == null) {
                writer.nil();
            } else {
                writer.str(update.type());
            }
            writer.sint(update.time());
            Values.encodeFields(writer, update.attributes());
        } else if (this instanceof Delete delete) {
            writer.uint(2).array(2).str(delete.name()).sint(delete.time());
        } else if (this instanceof Get get) {
            writer.uint(3).array(get.names().size());
            get.names().forEach(writer::str);
        } else if (this instanceof ListObjects list) {
            writer.uint(4);
            list.selection().encode(writer);
        } else {
            writer.uint(5).nil();
        }
    }

    /** Reads {@code [op, arguments]}. */
    static InfoRequest decode(MsgReader reader) {
        reader.readArray("info request", 2, 2);
        int op = reader.readSmallUint("info op");
        switch (op) {
            case 0:
                return new Declare(InfoType.decode(reader));
            case 1: {
                reader.readArray("update", 5, 5);
                int mode = reader.readSmallUint("update mode");
                if (mode > 2) {
                    throw new DecodeException("update mode " + mode + " is not defined (expected 0 create, 1 update, 2 upsert)");
                }
                return new Update(Mode.values()[mode], reader.readStr("object name"), reader.readStrOrNil("object type"),
                        reader.readInt("time"), Values.decodeFields(reader));
            }
            case 2:
                reader.readArray("delete", 2, 2);
                return new Delete(reader.readStr("object name"), reader.readInt("time"));
            case 3: {
                int count = reader.readArray("names");
                List<String> names = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    names.add(reader.readStr("object name"));
                }
                return new Get(names);
            }
            case 4:
                return new ListObjects(Selection.decode(reader));
            case 5:
                reader.readNil();
                return new Types();
            default:
                throw new DecodeException("info op " + op + " is not defined (expected 0..5)");
        }
    }
}
