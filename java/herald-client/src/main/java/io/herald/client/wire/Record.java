package io.herald.client.wire;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A record (docs/protocol.md, Records): what is published and delivered. Build one with
 * {@link #builder(Kind, String)}; {@link #encode} writes the canonical form (keys ascending,
 * empty keys left out), which is what makes every client agree on the bytes.
 *
 * @param kind      key 0: log, message or info
 * @param subject   key 1
 * @param type      key 2, "" when absent
 * @param time      key 3: the producer's time, ns since the epoch
 * @param priority  key 4
 * @param audience  key 5, empty = everyone
 * @param origin    key 6
 * @param text      key 7, "" when absent
 * @param fields    key 8: name → value (see {@link Values})
 * @param replyTo   key 9, null when absent
 * @param id        key 10, null when absent (0 is set)
 */
public record Record(Kind kind, String subject, String type, long time, Priority priority, List<String> audience,
        Origin origin, String text, Map<String, Object> fields, String replyTo, Long id) {

    private static final String[] KEY_NAMES = {
        "kind", "subject", "type", "time", "priority", "audience", "origin", "text", "fields", "reply_to", "id"};

    /** Checks the parts and fills absent ones with their defaults. */
    public Record {
        if (kind == null) {
            throw new IllegalArgumentException("record has no kind");
        }
        Subjects.checkSubject(subject, "subject");
        type = type == null ? "" : type;
        priority = priority == null ? Priority.INFO : priority;
        audience = audience == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(audience));
        origin = origin == null ? Origin.EMPTY : origin;
        text = text == null ? "" : text;
        fields = fields == null ? Map.of() : fields;
        if (replyTo != null) {
            Subjects.checkSubject(replyTo, "reply_to");
        }
    }

    /** Returns a builder of a record of this kind about this subject, time now, priority INFO. */
    public static Builder builder(Kind kind, String subject) {
        return new Builder(kind, subject);
    }

    /** Writes the record in canonical form. */
    public void encode(MsgWriter writer) {
        boolean hasType = !type.isEmpty();
        boolean hasAudience = !audience.isEmpty();
        boolean hasOrigin = !origin.isEmpty();
        boolean hasText = !text.isEmpty();
        boolean hasFields = !fields.isEmpty();
        int count = 4 + (hasType ? 1 : 0) + (hasAudience ? 1 : 0) + (hasOrigin ? 1 : 0) + (hasText ? 1 : 0)
                + (hasFields ? 1 : 0) + (replyTo != null ? 1 : 0) + (id != null ? 1 : 0);
        writer.map(count);
        writer.uint(0).uint(kind.value());
        writer.uint(1).str(subject);
        if (hasType) {
            writer.uint(2).str(type);
        }
        writer.uint(3).sint(time);
        writer.uint(4).uint(priority.value());
        if (hasAudience) {
            writer.uint(5).array(audience.size());
            for (String name : audience) {
                writer.str(name);
            }
        }
        if (hasOrigin) {
            writer.uint(6);
            origin.encode(writer);
        }
        if (hasText) {
            writer.uint(7).str(text);
        }
        if (hasFields) {
            writer.uint(8);
            Values.encodeFields(writer, fields);
        }
        if (replyTo != null) {
            writer.uint(9).str(replyTo);
        }
        if (id != null) {
            writer.uint(10).uint(id);
        }
    }

    /** Returns the record's canonical bytes. */
    public byte[] toBytes() {
        MsgWriter writer = new MsgWriter();
        encode(writer);
        return writer.toByteArray();
    }

    /** Reads a record in any key order; unknown, repeated or missing required keys are errors. */
    public static Record decode(MsgReader reader) {
        int length = reader.readMap("record");
        Object[] parts = new Object[11];
        for (int i = 0; i < length; i++) {
            long key = reader.readUint("a record key");
            if (key < 0 || key > 10) {
                throw new DecodeException("unknown field " + Long.toUnsignedString(key) + " in record");
            }
            int k = (int) key;
            if (parts[k] != null) {
                throw new DecodeException("field `" + KEY_NAMES[k] + "` appears twice in record");
            }
            parts[k] = decodePart(reader, k);
        }
        for (int required : new int[] {0, 1, 3}) {
            if (parts[required] == null) {
                throw new DecodeException("record is missing required field `" + KEY_NAMES[required] + "`");
            }
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> fields = (Map<String, Object>) parts[8];
        @SuppressWarnings("unchecked")
        List<String> audience = (List<String>) parts[5];
        try {
            return new Record((Kind) parts[0], (String) parts[1], (String) parts[2], (Long) parts[3], (Priority) parts[4],
                    audience, (Origin) parts[6], (String) parts[7], fields, (String) parts[9], (Long) parts[10]);
        } catch (IllegalArgumentException e) {
            throw new DecodeException(e.getMessage(), e);
        }
    }

    private static Object decodePart(MsgReader reader, int key) {
        try {
            switch (key) {
                case 0: return Kind.fromValue(reader.readUint("kind"));
                case 1: return reader.readStr("subject");
                case 2: return reader.readStr("type");
                case 3: return reader.readInt("time");
                case 4: return Priority.fromValue(reader.readUint("priority"));
                case 5: return decodeAudience(reader);
                case 6: return Origin.decode(reader);
                case 7: return reader.readStr("text");
                case 8: return Values.decodeFields(reader);
                case 9: return reader.readStr("reply_to");
                default: return reader.readUint("id");
            }
        } catch (IllegalArgumentException e) {
            throw new DecodeException(e.getMessage(), e);
        }
    }

    private static List<String> decodeAudience(MsgReader reader) {
        int length = reader.readArray("audience");
        List<String> names = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            names.add(reader.readStr("an audience name"));
        }
        return names;
    }

    /** Builds a {@link Record}; every part but kind and subject has a default. */
    public static final class Builder {
        private final Kind kind;
        private final String subject;
        private String type;
        private long time = HeraldTime.nowNanos();
        private Priority priority = Priority.INFO;
        private List<String> audience;
        private Origin origin;
        private String text;
        private Map<String, Object> fields;
        private String replyTo;
        private Long id;

        private Builder(Kind kind, String subject) {
            this.kind = kind;
            this.subject = subject;
        }

        /** Sets the type (key 2). */
        public Builder type(String value) {
            type = value;
            return this;
        }

        /** Sets the producer's time, ns since the epoch (key 3; now by default). */
        public Builder time(long nanos) {
            time = nanos;
            return this;
        }

        /** Sets the priority (key 4; INFO by default). */
        public Builder priority(Priority value) {
            priority = value;
            return this;
        }

        /** Sets the audience (key 5). */
        public Builder audience(List<String> names) {
            audience = names;
            return this;
        }

        /** Sets the origin (key 6). */
        public Builder origin(Origin value) {
            origin = value;
            return this;
        }

        /** Sets the text (key 7). */
        public Builder text(String value) {
            text = value;
            return this;
        }

        /** Sets the fields (key 8), kept in the map's iteration order. */
        public Builder fields(Map<String, ?> value) {
            fields = value == null ? null : new LinkedHashMap<>(value);
            return this;
        }

        /** Adds one field (key 8). */
        public Builder field(String name, Object value) {
            if (fields == null) {
                fields = new LinkedHashMap<>();
            }
            fields.put(name, value);
            return this;
        }

        /** Sets the reply subject (key 9). */
        public Builder replyTo(String value) {
            replyTo = value;
            return this;
        }

        /** Sets the id (key 10), a u64. */
        public Builder id(long value) {
            id = value;
            return this;
        }

        /** Returns the record. */
        public Record build() {
            return new Record(kind, subject, type, time, priority, audience, origin, text, fields, replyTo, id);
        }
    }
}
