package io.herald.client.wire;

/**
 * Where a record comes from (docs/protocol.md, Origin): a map with integer keys 0..10. A
 * null or empty part is absent and not written.
 *
 * @param host        key 0
 * @param process     key 1
 * @param thread      key 2
 * @param file        key 3
 * @param line        key 4, null when unset
 * @param routine     key 5
 * @param context     key 6
 * @param stackId     key 7
 * @param stackLevel  key 8, null when unset
 * @param logId       key 9
 * @param uri         key 10
 */
public record Origin(String host, String process, String thread, String file, Long line, String routine,
        String context, String stackId, Long stackLevel, String logId, String uri) {

    /** The origin with every part absent. */
    public static final Origin EMPTY = new Origin(null, null, null, null, null, null, null, null, null, null, null);

    /** Returns an origin of a host and a process. */
    public static Origin of(String host, String process) {
        return new Origin(host, process, null, null, null, null, null, null, null, null, null);
    }

    /** Returns a copy with the thread set. */
    public Origin withThread(String value) {
        return new Origin(host, process, value, file, line, routine, context, stackId, stackLevel, logId, uri);
    }

    /** Returns a copy with the source file, line and routine set (null leaves a part absent). */
    public Origin withSource(String sourceFile, Long sourceLine, String sourceRoutine) {
        return new Origin(host, process, thread, sourceFile, sourceLine, sourceRoutine, context, stackId, stackLevel, logId, uri);
    }

    /** Returns a copy with the context set. */
    public Origin withContext(String value) {
        return new Origin(host, process, thread, file, line, routine, value, stackId, stackLevel, logId, uri);
    }

    /** Returns a copy with the log id set. */
    public Origin withLogId(String value) {
        return new Origin(host, process, thread, file, line, routine, context, stackId, stackLevel, value, uri);
    }

    private Object[] parts() {
        return new Object[] {host, process, thread, file, line, routine, context, stackId, stackLevel, logId, uri};
    }

    private static boolean present(Object part) {
        return part != null && !(part instanceof String s && s.isEmpty());
    }

    /** Returns true when no part is present. */
    public boolean isEmpty() {
        for (Object part : parts()) {
            if (present(part)) {
                return false;
            }
        }
        return true;
    }

    /** Writes the origin map: present parts only, keys ascending. */
    public void encode(MsgWriter writer) {
        Object[] parts = parts();
        int count = 0;
        for (Object part : parts) {
            count += present(part) ? 1 : 0;
        }
        writer.map(count);
        for (int key = 0; key < parts.length; key++) {
            Object part = parts[key];
            if (!present(part)) {
                continue;
            }
            writer.uint(key);
            if (part instanceof Long number) {
                writer.uint(number);
            } else {
                writer.str((String) part);
            }
        }
    }

    /** Reads an origin map; unknown and repeated keys are errors. */
    public static Origin decode(MsgReader reader) {
        int length = reader.readMap("origin");
        Object[] parts = new Object[11];
        for (int i = 0; i < length; i++) {
            long key = reader.readUint("an origin key");
            if (key < 0 || key > 10) {
                throw new DecodeException("unknown origin key " + Long.toUnsignedString(key) + " (expected 0..10)");
            }
            if (parts[(int) key] != null) {
                throw new DecodeException("origin key " + key + " appears twice");
            }
            parts[(int) key] = key == 4 || key == 8 ? (Object) reader.readUint("origin part " + key)
                    : reader.readStr("origin part " + key);
        }
        return new Origin((String) parts[0], (String) parts[1], (String) parts[2], (String) parts[3], (Long) parts[4],
                (String) parts[5], (String) parts[6], (String) parts[7], (Long) parts[8], (String) parts[9], (String) parts[10]);
    }
}
