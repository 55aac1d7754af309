package io.herald.client.wire;

/**
 * Which information objects a list or an info subscription takes:
 * {@code [name regex or nil, type selection or nil, any]}.
 *
 * @param match regex matched against the whole name, null for any
 * @param type  {@code T}, {@code T+} (with subtypes), {@code !T} or {@code !T+}; null for any
 * @param any   true: an object passes if either matches ("or"); false: both must ("and")
 */
public record Selection(String match, String type, boolean any) {
    /** Every object. */
    public static final Selection ALL = new Selection(null, null, false);

    /** Writes the selection array. */
    public void encode(MsgWriter writer) {
        writer.array(3);
        if (match == null) {
            writer.nil();
        } else {
            writer.str(match);
        }
        if (type == null) {
            writer.nil();
        } else {
            writer.str(type);
        }
        writer.bool(any);
    }

    /** Reads a selection array. */
    public static Selection decode(MsgReader reader) {
        reader.readArray("selection", 3, 3);
        return new Selection(reader.readStrOrNil("selection regex"), reader.readStrOrNil("type selection"),
                reader.readBool("selection any"));
    }
}
