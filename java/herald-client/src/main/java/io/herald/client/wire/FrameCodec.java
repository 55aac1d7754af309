package io.herald.client.wire;

import io.herald.client.wire.Frame.*;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodes and decodes whole frames: {@code u32 BE length | u8 type | MessagePack body}, the
 * length counting the type byte and the body (docs/protocol.md, Framing).
 */
public final class FrameCodec {
    /** The server's default largest frame length. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 1 << 20;

    private FrameCodec() {
    }

    /** Returns a frame's bytes, length prefix included. */
    public static byte[] encode(Frame frame) {
        MsgWriter writer = new MsgWriter();
        encodeBody(writer, frame);
        return wrap(FrameType.of(frame), writer);
    }

    /** Returns {@code length | type | body} around a body written into {@code body}. */
    public static byte[] wrap(int type, MsgWriter body) {
        byte[] bytes = body.toByteArray();
        byte[] frame = new byte[5 + bytes.length];
        int length = bytes.length + 1;
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
        frame[4] = (byte) type;
        System.arraycopy(bytes, 0, frame, 5, bytes.length);
        return frame;
    }

    /** Writes a frame's body. */
    public static void encodeBody(MsgWriter w, Frame frame) {
        if (frame instanceof Hello h) {
            w.map(h.producer() != 0 ? 6 : 5);
            w.uint(0).uint(h.version()).uint(1).str(h.name()).uint(2).str(h.token()).uint(3).array(h.capabilities().size());
            h.capabilities().forEach(w::str);
            w.uint(4).uint(h.heartbeatMs());
            if (h.producer() != 0) {
                w.uint(5).uint(h.producer());
            }
        } else if (frame instanceof Welcome x) {
            w.map(5).uint(0).uint(x.version()).uint(1).str(x.server()).uint(2).uint(x.heartbeatMs())
                    .uint(3).uint(x.maxFrameBytes()).uint(4).uint(x.connection());
        } else if (frame instanceof Publish p) {
            w.array(p.firstSeq() != 0 ? 4 : 3).uint(p.ackId()).uint(p.ack().ordinal()).array(p.records().size());
            for (Record record : p.records()) {
                record.encode(w);
            }
            if (p.firstSeq() != 0) {
                w.uint(p.firstSeq());
            }
        } else if (frame instanceof Ack a) {
            w.array(3).uint(a.ackId()).uint(a.level().ordinal()).uint(a.count());
        } else if (frame instanceof Deliver d) {
            encodeDeliver(w, d);
        } else if (frame instanceof Gap g) {
            w.array(g.member() != null ? 6 : 5).uint(g.subscription()).uint(g.count()).uint(g.firstSeq()).uint(g.lastSeq());
            w.map(g.byPriority().size());
            g.byPriority().forEach((priority, count) -> w.uint(priority.value()).uint(count));
            if (g.member() != null) {
                w.str(g.member());
            }
        } else if (frame instanceof Subscribe s) {
            w.array(4).uint(s.cid()).uint(s.subscription());
            s.filter().encode(w);
            s.options().encode(w);
        } else if (frame instanceof Unsubscribe u) {
            w.array(2).uint(u.cid()).uint(u.subscription());
        } else if (frame instanceof Ok o) {
            w.array(1).uint(o.cid());
        } else if (frame instanceof Monitor m) {
            w.array(1).uint(m.cid());
        } else if (frame instanceof MonitorReply m) {
            w.array(2).uint(m.cid());
            Values.encodeFields(w, m.data());
        } else if (frame instanceof Reload m) {
            w.array(1).uint(m.cid());
        } else if (frame instanceof ReloadReply m) {
            w.array(2).uint(m.cid());
            Values.encodeFields(w, m.data());
        } else if (frame instanceof Info i) {
            w.array(2).uint(i.cid());
            i.request().encode(w);
        } else if (frame instanceof InfoReplyFrame r) {
            w.array(r.more() ? 3 : 2).uint(r.cid());
            r.reply().encode(w);
            if (r.more()) {
                w.bool(true);
            }
        } else if (frame instanceof InfoSubscribe s) {
            w.array(3).uint(s.cid()).uint(s.subscription());
            s.selection().encode(w);
        } else if (frame instanceof Query q) {
            w.array(2).uint(q.cid()).array(2).uint(q.op());
            Generic.write(w, q.arguments());
        } else if (frame instanceof QueryReply r) {
            boolean withSkipped = r.skipped() != 0 || r.more();
            w.array(r.more() ? 4 : withSkipped ? 3 : 2).uint(r.cid()).array(2).uint(r.op());
            Generic.write(w, r.answer());
            if (withSkipped) {
                w.uint(r.skipped());
            }
            if (r.more()) {
                w.bool(true);
            }
        } else if (frame instanceof Frame.Error e) {
            w.array(3).uint(e.cid()).str(e.code()).str(e.message());
        }
    }

    private static void encodeDeliver(MsgWriter w, Deliver d) {
        w.array(d.entries().size());
        for (DeliverEntry e : d.entries()) {
            boolean grouped = !e.groups().isEmpty();
            boolean routed = grouped || e.producer() != 0 || e.pseq() != 0;
            w.array(grouped ? 7 : routed ? 6 : 4).uint(e.subscription()).uint(e.seq()).sint(e.received());
            e.record().encode(w);
            if (routed) {
                w.uint(e.producer()).uint(e.pseq());
            }
            if (grouped) {
                w.array(e.groups().size());
                for (String group : e.groups()) {
                    w.str(group);
                }
            }
        }
    }

    /**
     * Decodes a whole frame (length prefix included).
     *
     * @throws DecodeException naming what is wrong
     */
    public static Frame decode(byte[] frame) {
        if (frame.length < 5) {
            throw new DecodeException("frame of " + frame.length + " bytes is shorter than its header");
        }
        long length = ((frame[0] & 0xffL) << 24) | ((frame[1] & 0xff) << 16) | ((frame[2] & 0xff) << 8) | (frame[3] & 0xff);
        if (length != frame.length - 4) {
            throw new DecodeException("frame length " + length + " does not match its " + (frame.length - 4) + " bytes");
        }
        return decodeBody(frame[4] & 0xff, frame, 5, frame.length - 5);
    }

    /** Decodes a frame's body of the given type. */
    public static Frame decodeBody(int type, byte[] bytes, int offset, int length) {
        MsgReader r = new MsgReader(bytes, offset, length);
        Frame frame = switch (type) {
            case FrameType.PING, FrameType.PONG -> {
                if (length != 0) {
                    throw new DecodeException((type == FrameType.PING ? "PING" : "PONG") + " has a body of " + length + " bytes");
                }
                yield type == FrameType.PING ? new Ping() : new Pong();
            }
            case FrameType.HELLO -> decodeHello(r);
            case FrameType.WELCOME -> decodeWelcome(r);
            case FrameType.PUBLISH -> decodePublish(r);
            case FrameType.ACK -> {
                r.readArray("ACK", 3, 3);
                yield new Ack(r.readUint("ack_id"), AckLevel.fromValue(r.readUint("level")), r.readUint("count"));
            }
            case FrameType.DELIVER -> decodeDeliver(r);
            case FrameType.GAP -> decodeGap(r);
            case FrameType.SUBSCRIBE -> {
                r.readArray("SUBSCRIBE", 4, 4);
                yield new Subscribe(r.readUint("cid"), r.readUint("subscription"), Filter.decode(r), DeliveryOptions.decode(r));
            }
            case FrameType.UNSUBSCRIBE -> {
                r.readArray("UNSUBSCRIBE", 2, 2);
                yield new Unsubscribe(r.readUint("cid"), r.readUint("subscription"));
            }
            case FrameType.OK -> {
                r.readArray("OK", 1, 1);
                yield new Ok(r.readUint("cid"));
            }
            case FrameType.MONITOR -> {
                r.readArray("MONITOR", 1, 1);
                yield new Monitor(r.readUint("cid"));
            }
            case FrameType.MONITOR_REPLY -> {
                r.readArray("MONITOR_REPLY", 2, 2);
                yield new MonitorReply(r.readUint("cid"), Values.decodeFields(r));
            }
            case FrameType.RELOAD -> {
                r.readArray("RELOAD", 1, 1);
                yield new Reload(r.readUint("cid"));
            }
            case FrameType.RELOAD_REPLY -> {
                r.readArray("RELOAD_REPLY", 2, 2);
                yield new ReloadReply(r.readUint("cid"), Values.decodeFields(r));
            }
            case FrameType.INFO -> {
                r.readArray("INFO", 2, 2);
                yield new Info(r.readUint("cid"), InfoRequest.decode(r));
            }
            case FrameType.INFO_REPLY -> {
                int n = r.readArray("INFO_REPLY", 2, 3);
                long cid = r.readUint("cid");
                InfoReply reply = InfoReply.decode(r);
                yield new InfoReplyFrame(cid, reply, n == 3 && r.readBool("more"));
            }
            case FrameType.INFO_SUBSCRIBE -> {
                r.readArray("INFO_SUBSCRIBE", 3, 3);
                yield new InfoSubscribe(r.readUint("cid"), r.readUint("subscription"), Selection.decode(r));
            }
            case FrameType.QUERY -> {
                r.readArray("QUERY", 2, 2);
                long cid = r.readUint("cid");
                r.readArray("query", 2, 2);
                yield new Query(cid, r.readUint("query op"), Generic.read(r));
            }
            case FrameType.QUERY_REPLY -> decodeQueryReply(r);
            case FrameType.ERROR -> {
                r.readArray("ERROR", 3, 3);
                yield new Frame.Error(r.readUint("cid"), r.readStr("error code"), r.readStr("error message"));
            }
            default -> throw new DecodeException(String.format("unknown frame type 0x%02x", type));
        };
        r.expectEnd("the frame's body");
        return frame;
    }

    private static Hello decodeHello(MsgReader r) {
        int n = r.readMap("HELLO");
        Object[] parts = new Object[6];
        for (int i = 0; i < n; i++) {
            int key = r.readSmallUint("a HELLO key");
            if (key > 5 || parts[key] != null) {
                throw new DecodeException(key > 5 ? "unknown HELLO key " + key : "HELLO key " + key + " appears twice");
            }
            parts[key] = switch (key) {
                case 1, 2 -> r.readStr(key == 1 ? "name" : "token");
                case 3 -> {
                    int count = r.readArray("capabilities");
                    List<String> caps = new ArrayList<>(count);
                    for (int j = 0; j < count; j++) {
                        caps.add(r.readStr("a capability"));
                    }
                    yield caps;
                }
                default -> r.readUint("HELLO key " + key);
            };
        }
        for (int key = 0; key < 5; key++) {
            if (parts[key] == null) {
                throw new DecodeException("HELLO is missing key " + key);
            }
        }
        @SuppressWarnings("unchecked")
        List<String> caps = (List<String>) parts[3];
        return new Hello((Long) parts[0], (String) parts[1], (String) parts[2], caps, (Long) parts[4],
                parts[5] == null ? 0 : (Long) parts[5]);
    }

    private static Welcome decodeWelcome(MsgReader r) {
        int n = r.readMap("WELCOME");
        Object[] parts = new Object[5];
        for (int i = 0; i < n; i++) {
            int key = r.readSmallUint("a WELCOME key");
            if (key > 4 || parts[key] != null) {
                throw new DecodeException(key > 4 ? "unknown WELCOME key " + key : "WELCOME key " + key + " appears twice");
            }
            parts[key] = key == 1 ? r.readStr("server") : (Object) r.readUint("WELCOME key " + key);
        }
        for (int key = 0; key < 5; key++) {
            if (parts[key] == null) {
                throw new DecodeException("WELCOME is missing key " + key);
            }
        }
        return new Welcome((Long) parts[0], (String) parts[1], (Long) parts[2], (Long) parts[3], (Long) parts[4]);
    }

    private static Publish decodePublish(MsgReader r) {
        int n = r.readArray("PUBLISH", 3, 4);
        long ackId = r.readUint("ack_id");
        AckLevel ack = AckLevel.fromValue(r.readUint("ack"));
        int count = r.readArray("records");
        List<Record> records = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            records.add(Record.decode(r));
        }
        long firstSeq = n == 4 ? r.readUint("first_seq") : 0;
        if (n == 4 && firstSeq == 0) {
            throw new DecodeException("first_seq 0 in a numbered PUBLISH (numbers start at 1)");
        }
        return new Publish(ackId, ack, records, firstSeq);
    }

    private static Deliver decodeDeliver(MsgReader r) {
        int count = r.readArray("DELIVER");
        List<DeliverEntry> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int n = r.readArray("DELIVER entry", 4, 7);
            if (n == 5) {
                throw new DecodeException("DELIVER entry is an array of 5 (expected 4, 6 or 7)");
            }
            long subscription = r.readUint("subscription");
            long seq = r.readUint("seq");
            long received = r.readInt("received");
            int start = r.position();
            r.skip();
            int end = r.position();
            Record record = null;
            String problem = null;
            try {
                MsgReader one = new MsgReader(r.bytes(), start, end - start);
                record = Record.decode(one);
            } catch (DecodeException e) {
                problem = e.getMessage();
            }
            long producer = n >= 6 ? r.readUint("producer") : 0;
            long pseq = n >= 6 ? r.readUint("pseq") : 0;
            List<String> groups = new ArrayList<>();
            if (n == 7) {
                int size = r.readArray("groups");
                for (int g = 0; g < size; g++) {
                    groups.add(r.readStr("group"));
                }
            }
            entries.add(new DeliverEntry(subscription, seq, received, record, producer, pseq, groups, problem));
        }
        return new Deliver(entries);
    }

    private static Gap decodeGap(MsgReader r) {
        int n = r.readArray("GAP", 5, 6);
        long subscription = r.readUint("subscription");
        long count = r.readUint("count");
        long first = r.readUint("first_seq");
        long last = r.readUint("last_seq");
        int size = r.readMap("counts by priority");
        Map<Priority, Long> byPriority = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            Priority priority;
            try {
                priority = Priority.fromValue(r.readUint("priority"));
            } catch (IllegalArgumentException e) {
                throw new DecodeException("GAP: " + e.getMessage(), e);
            }
            byPriority.put(priority, r.readUint("count"));
        }
        String member = n == 6 ? r.readStr("member") : null;
        return new Gap(subscription, count, first, last, byPriority, member);
    }

    private static QueryReply decodeQueryReply(MsgReader r) {
        int n = r.readArray("QUERY_REPLY", 2, 4);
        long cid = r.readUint("cid");
        r.readArray("answer", 2, 2);
        long op = r.readUint("answer op");
        Object answer = Generic.read(r);
        long skipped = n >= 3 ? r.readUint("skipped") : 0;
        boolean more = n == 4 && r.readBool("more");
        return new QueryReply(cid, op, answer, skipped, more);
    }
}
