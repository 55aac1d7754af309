package io.herald.client.wire;

import io.herald.client.wire.Frame.*;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A frame's meaning as in testdata/vectors (docs/protocol.md, Test vectors), in plain Java
 * objects (Map, List, Long, BigInteger, Double, String, Boolean, null): {@link #of} goes
 * from a frame to its meaning, {@link FromMeaning} back; archive frames through
 * {@link ArchiveMeaning}.
 */
final class Meaning {
    private Meaning() {
    }

    static Map<String, Object> of(Frame f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", typeName(FrameType.of(f)));
        if (f instanceof Hello h) {
            m.put("version", h.version());
            m.put("name", h.name());
            m.put("token", h.token());
            m.put("capabilities", new ArrayList<Object>(h.capabilities()));
            m.put("heartbeat_ms", h.heartbeatMs());
            if (h.producer() != 0) {
                m.put("producer", unsigned(h.producer()));
            }
        } else if (f instanceof Welcome w) {
            m.put("version", w.version());
            m.put("server", w.server());
            m.put("heartbeat_ms", w.heartbeatMs());
            m.put("max_frame_bytes", w.maxFrameBytes());
            m.put("connection", w.connection());
        } else if (f instanceof Publish p) {
            m.put("ack_id", p.ackId());
            m.put("ack", (long) p.ack().ordinal());
            m.put("ack_name", p.ack().wireName());
            List<Object> records = new ArrayList<>();
            p.records().forEach(r -> records.add(record(r)));
            m.put("records", records);
            if (p.firstSeq() != 0) {
                m.put("first_seq", p.firstSeq());
            }
        } else if (f instanceof Ack a) {
            m.put("ack_id", a.ackId());
            m.put("level", (long) a.level().ordinal());
            m.put("level_name", a.level().wireName());
            m.put("count", a.count());
        } else if (f instanceof Deliver d) {
            List<Object> entries = new ArrayList<>();
            for (DeliverEntry e : d.entries()) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("subscription", e.subscription());
                entry.put("seq", e.seq());
                entry.put("received", e.received());
                entry.put("record", record(e.record()));
                if (e.producer() != 0 || e.pseq() != 0 || !e.groups().isEmpty()) {
                    entry.put("producer", unsigned(e.producer()));
                    entry.put("pseq", e.pseq());
                }
                if (!e.groups().isEmpty()) {
                    entry.put("groups", e.groups());
                }
                entries.add(entry);
            }
            m.put("entries", entries);
        } else if (f instanceof Gap g) {
            m.put("subscription", g.subscription());
            m.put("count", g.count());
            m.put("first_seq", g.firstSeq());
            m.put("last_seq", g.lastSeq());
            List<Object> by = new ArrayList<>();
            g.byPriority().forEach((p, c) -> by.add(Map.of("priority", (long) p.value(), "priority_name", p.name(), "count", c)));
            m.put("by_priority", by);
            if (g.member() != null) {
                m.put("member", g.member());
            }
        } else if (f instanceof Subscribe s) {
            m.put("cid", s.cid());
            m.put("subscription", s.subscription());
            m.put("filter", filter(s.filter()));
            m.put("options", options(s.options()));
        } else if (f instanceof Unsubscribe u) {
            m.put("cid", u.cid());
            m.put("subscription", u.subscription());
        } else if (f instanceof Ok o) {
            m.put("cid", o.cid());
        } else if (f instanceof Monitor o) {
            m.put("cid", o.cid());
        } else if (f instanceof MonitorReply r) {
            m.put("cid", r.cid());
            m.put("data", values(r.data()));
        } else if (f instanceof Reload o) {
            m.put("cid", o.cid());
        } else if (f instanceof ReloadReply r) {
            m.put("cid", r.cid());
            m.put("data", values(r.data()));
        } else if (f instanceof Info i) {
            m.put("cid", i.cid());
            m.put("request", infoRequest(i.request()));
        } else if (f instanceof InfoReplyFrame r) {
            m.put("cid", r.cid());
            List<Object> objects = new ArrayList<>();
            r.reply().objects().forEach(o -> objects.add(o == null ? null : object(o)));
            m.put("objects", objects);
            List<Object> types = new ArrayList<>();
            r.reply().types().forEach(t -> types.add(type(t)));
            m.put("types", types);
            m.put("more", r.more());
        } else if (f instanceof InfoSubscribe s) {
            m.put("cid", s.cid());
            m.put("subscription", s.subscription());
            m.put("selection", selection(s.selection()));
        } else if (f instanceof Query q) {
            m.put("cid", q.cid());
            m.put("query", ArchiveMeaning.query(q.op(), q.arguments()));
        } else if (f instanceof QueryReply q) {
            m.put("cid", q.cid());
            m.put("reply", ArchiveMeaning.reply(q.op(), q.answer()));
            m.put("skipped", q.skipped());
            m.put("more", q.more());
        } else if (f instanceof Frame.Error e) {
            m.put("cid", e.cid());
            m.put("code", e.code());
            m.put("message", e.message());
        }
        return m;
    }

    static String typeName(int type) {
        return switch (type) {
            case FrameType.HELLO -> "HELLO";
            case FrameType.WELCOME -> "WELCOME";
            case FrameType.PUBLISH -> "PUBLISH";
            case FrameType.ACK -> "ACK";
            case FrameType.DELIVER -> "DELIVER";
            case FrameType.GAP -> "GAP";
            case FrameType.SUBSCRIBE -> "SUBSCRIBE";
            case FrameType.UNSUBSCRIBE -> "UNSUBSCRIBE";
            case FrameType.OK -> "OK";
            case FrameType.MONITOR -> "MONITOR";
            case FrameType.MONITOR_REPLY -> "MONITOR_REPLY";
            case FrameType.RELOAD -> "RELOAD";
            case FrameType.RELOAD_REPLY -> "RELOAD_REPLY";
            case FrameType.INFO -> "INFO";
            case FrameType.INFO_REPLY -> "INFO_REPLY";
            case FrameType.INFO_SUBSCRIBE -> "INFO_SUBSCRIBE";
            case FrameType.QUERY -> "QUERY";
            case FrameType.QUERY_REPLY -> "QUERY_REPLY";
            case FrameType.PING -> "PING";
            case FrameType.PONG -> "PONG";
            default -> "ERROR";
        };
    }

    static Object unsigned(long value) {
        return value >= 0 ? (Object) value : new BigInteger(Long.toUnsignedString(value));
    }

    static Map<String, Object> record(Record r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", r.kind().wireName());
        m.put("subject", r.subject());
        m.put("type", r.type());
        m.put("time", r.time());
        m.put("priority", (long) r.priority().value());
        m.put("priority_name", r.priority().name());
        m.put("audience", new ArrayList<Object>(r.audience()));
        m.put("origin", origin(r.origin()));
        m.put("text", r.text());
        m.put("fields", values(r.fields()));
        m.put("reply_to", r.replyTo());
        m.put("id", r.id() == null ? null : unsigned(r.id()));
        return m;
    }

    static final String[] ORIGIN_NAMES = {
        "host", "process", "thread", "file", "line", "routine", "context", "stack_id", "stack_level", "log_id", "uri"};

    static Map<String, Object> origin(Origin o) {
        Object[] parts = {o.host(), o.process(), o.thread(), o.file(), o.line(), o.routine(), o.context(), o.stackId(),
            o.stackLevel(), o.logId(), o.uri()};
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < parts.length; i++) {
            if (parts[i] != null) {
                m.put(ORIGIN_NAMES[i], parts[i]);
            }
        }
        return m;
    }

    static Map<String, Object> values(Map<String, Object> fields) {
        Map<String, Object> m = new LinkedHashMap<>();
        fields.forEach((k, v) -> m.put(k, value(v)));
        return m;
    }

    static Object value(Object v) {
        if (v instanceof byte[] bytes) {
            return Map.of("bytes", HexFormat.of().formatHex(bytes));
        }
        if (v instanceof HeraldTime t) {
            return Map.of("time", t.nanos());
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            list.forEach(x -> out.add(value(x)));
            return out;
        }
        if (v instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, x) -> out.put((String) k, value(x)));
            return out;
        }
        return v;
    }

    static Map<String, Object> filter(Filter f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("subject", f.subject());
        m.put("type", f.type());
        m.put("priority_bits", (long) f.priorityBits());
        List<Object> names = new ArrayList<>();
        Priority.fromBits(f.priorityBits()).forEach(p -> names.add(p.name()));
        m.put("priorities", names);
        m.put("audience", new ArrayList<Object>(f.audience()));
        List<Object> kinds = new ArrayList<>();
        for (Kind k : Kind.values()) {
            if ((f.kindBits() & k.bit()) != 0) {
                kinds.add(k.wireName());
            }
        }
        m.put("kinds", kinds);
        return m;
    }

    static Map<String, Object> options(DeliveryOptions o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", o.policy().wireName());
        m.put("max_records", o.maxRecords());
        m.put("max_bytes", o.maxBytes());
        m.put("block_timeout_ms", o.blockTimeoutMs());
        m.put("protected", o.protectedFrom() == null ? null : o.protectedFrom().name());
        m.put("latest_per_second", o.latestPerSecond());
        m.put("group", o.group());
        return m;
    }

    static Map<String, Object> selection(Selection s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("match", s.match());
        m.put("type", s.type());
        m.put("combine", s.any() ? "or" : "and");
        return m;
    }

    static Map<String, Object> object(InfoObject o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", o.name());
        m.put("type", o.type());
        m.put("time", o.time());
        m.put("version", o.version());
        m.put("attributes", values(o.attributes()));
        return m;
    }

    static Map<String, Object> type(InfoType t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", t.name());
        m.put("base", t.base());
        m.put("description", t.description());
        List<Object> attributes = new ArrayList<>();
        t.attributes().forEach(a -> attributes.add(Map.of("name", a.name(), "type", a.type(), "description", a.description())));
        m.put("attributes", attributes);
        return m;
    }

    static Map<String, Object> infoRequest(InfoRequest request) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (request instanceof InfoRequest.Declare d) {
            m.put("op", "declare");
            m.put("type", type(d.type()));
        } else if (request instanceof InfoRequest.Update u) {
            m.put("op", "update");
            m.put("mode", u.mode().wireName());
            m.put("name", u.name());
            m.put("type", u.type());
            m.put("time", u.time());
            m.put("attributes", values(u.attributes()));
        } else if (request instanceof InfoRequest.Delete d) {
            m.put("op", "delete");
            m.put("name", d.name());
            m.put("time", d.time());
        } else if (request instanceof InfoRequest.Get g) {
            m.put("op", "get");
            m.put("names", new ArrayList<Object>(g.names()));
        } else if (request instanceof InfoRequest.ListObjects l) {
            m.put("op", "list");
            m.put("selection", selection(l.selection()));
        } else {
            m.put("op", "types");
        }
        return m;
    }
}
