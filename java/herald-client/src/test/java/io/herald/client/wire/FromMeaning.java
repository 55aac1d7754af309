package io.herald.client.wire;

import io.herald.client.wire.Frame.*;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builds a frame from its meaning in testdata/vectors (the inverse of {@link Meaning}). */
final class FromMeaning {
    private FromMeaning() {
    }

    static long num(Object o) {
        return o instanceof BigInteger b ? b.longValue() : ((Number) o).longValue();
    }

    static Long optNum(Object o) {
        return o == null ? null : num(o);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        return (List<Object>) o;
    }

    static List<String> strings(Object o) {
        List<String> out = new ArrayList<>();
        list(o).forEach(x -> out.add((String) x));
        return out;
    }

    static Frame frame(Map<String, Object> m) {
        String type = (String) m.get("type");
        switch (type) {
            case "HELLO":
                return new Hello(num(m.get("version")), (String) m.get("name"), (String) m.get("token"),
                        strings(m.get("capabilities")), num(m.get("heartbeat_ms")),
                        m.containsKey("producer") ? num(m.get("producer")) : 0);
            case "WELCOME":
                return new Welcome(num(m.get("version")), (String) m.get("server"), num(m.get("heartbeat_ms")),
                        num(m.get("max_frame_bytes")), num(m.get("connection")));
            case "PUBLISH": {
                List<Record> records = new ArrayList<>();
                list(m.get("records")).forEach(r -> records.add(record(map(r))));
                return new Publish(num(m.get("ack_id")), AckLevel.fromValue(num(m.get("ack"))), records,
                        m.containsKey("first_seq") ? num(m.get("first_seq")) : 0);
            }
            case "ACK":
                return new Ack(num(m.get("ack_id")), AckLevel.fromValue(num(m.get("level"))), num(m.get("count")));
            case "DELIVER": {
                List<DeliverEntry> entries = new ArrayList<>();
                for (Object o : list(m.get("entries"))) {
                    Map<String, Object> e = map(o);
                    entries.add(new DeliverEntry(num(e.get("subscription")), num(e.get("seq")), num(e.get("received")),
                            record(map(e.get("record"))), e.containsKey("producer") ? num(e.get("producer")) : 0,
                            e.containsKey("pseq") ? num(e.get("pseq")) : 0,
                            e.containsKey("groups") ? strings(e.get("groups")) : List.of(), null));
                }
                return new Deliver(entries);
            }
            case "GAP": {
                Map<Priority, Long> by = new LinkedHashMap<>();
                list(m.get("by_priority")).forEach(o -> by.put(Priority.fromValue(num(map(o).get("priority"))), num(map(o).get("count"))));
                return new Gap(num(m.get("subscription")), num(m.get("count")), num(m.get("first_seq")), num(m.get("last_seq")),
                        by, (String) m.get("member"));
            }
            case "SUBSCRIBE":
                return new Subscribe(num(m.get("cid")), num(m.get("subscription")), filter(map(m.get("filter"))),
                        options(map(m.get("options"))));
            case "UNSUBSCRIBE":
                return new Unsubscribe(num(m.get("cid")), num(m.get("subscription")));
            case "OK":
                return new Ok(num(m.get("cid")));
            case "MONITOR":
                return new Monitor(num(m.get("cid")));
            case "MONITOR_REPLY":
                return new MonitorReply(num(m.get("cid")), values(map(m.get("data"))));
            case "RELOAD":
                return new Reload(num(m.get("cid")));
            case "RELOAD_REPLY":
                return new ReloadReply(num(m.get("cid")), values(map(m.get("data"))));
            case "INFO":
                return new Info(num(m.get("cid")), infoRequest(map(m.get("request"))));
            case "INFO_REPLY": {
                List<InfoObject> objects = new ArrayList<>();
                list(m.get("objects")).forEach(o -> objects.add(o == null ? null : object(map(o))));
                List<InfoType> types = new ArrayList<>();
                list(m.get("types")).forEach(t -> types.add(type(map(t))));
                return new InfoReplyFrame(num(m.get("cid")), new InfoReply(objects, types), (Boolean) m.get("more"));
            }
            case "INFO_SUBSCRIBE":
                return new InfoSubscribe(num(m.get("cid")), num(m.get("subscription")), selection(map(m.get("selection"))));
            case "QUERY":
                return new Query(num(m.get("cid")), ArchiveMeaning.queryOp(map(m.get("query"))), ArchiveMeaning.queryBack(map(m.get("query"))));
            case "QUERY_REPLY":
                return new QueryReply(num(m.get("cid")), ArchiveMeaning.replyOp(map(m.get("reply"))),
                        ArchiveMeaning.replyBack(map(m.get("reply"))), num(m.get("skipped")), (Boolean) m.get("more"));
            case "PING":
                return new Ping();
            case "PONG":
                return new Pong();
            case "ERROR":
                return new Frame.Error(num(m.get("cid")), (String) m.get("code"), (String) m.get("message"));
            default:
                throw new IllegalArgumentException("no builder for " + type);
        }
    }

    static Record record(Map<String, Object> m) {
        Map<String, Object> o = map(m.get("origin"));
        Origin origin = new Origin((String) o.get("host"), (String) o.get("process"), (String) o.get("thread"),
                (String) o.get("file"), optNum(o.get("line")), (String) o.get("routine"), (String) o.get("context"),
                (String) o.get("stack_id"), optNum(o.get("stack_level")), (String) o.get("log_id"), (String) o.get("uri"));
        return new Record(Kind.valueOf(((String) m.get("kind")).toUpperCase()), (String) m.get("subject"),
                (String) m.get("type"), num(m.get("time")), Priority.fromValue(num(m.get("priority"))),
                strings(m.get("audience")), origin, (String) m.get("text"), values(map(m.get("fields"))),
                (String) m.get("reply_to"), optNum(m.get("id")));
    }

    static Map<String, Object> values(Map<String, Object> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(k, value(v)));
        return out;
    }

    static Object value(Object v) {
        if (v instanceof Map<?, ?> map) {
            if (map.size() == 1 && map.containsKey("bytes")) {
                return HexFormat.of().parseHex((String) map.get("bytes"));
            }
            if (map.size() == 1 && map.containsKey("time")) {
                return new HeraldTime(num(map.get("time")));
            }
            return values(map(v));
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            list.forEach(x -> out.add(value(x)));
            return out;
        }
        if (v instanceof Integer i) {
            return (long) i;
        }
        if (v instanceof BigInteger b && b.bitLength() <= 63) {
            return b.longValue();
        }
        return v;
    }

    static Filter filter(Map<String, Object> m) {
        int kinds = 0;
        for (Object k : list(m.get("kinds"))) {
            kinds |= Kind.valueOf(((String) k).toUpperCase()).bit();
        }
        return new Filter((String) m.get("subject"), (String) m.get("type"), (int) num(m.get("priority_bits")),
                strings(m.get("audience")), kinds);
    }

    static DeliveryOptions options(Map<String, Object> m) {
        String policy = (String) m.get("policy");
        Object latest = m.get("latest_per_second");
        return new DeliveryOptions(DeliveryOptions.Policy.valueOf(policy.toUpperCase().replace('-', '_')),
                optNum(m.get("max_records")), optNum(m.get("max_bytes")), optNum(m.get("block_timeout_ms")),
                m.get("protected") == null ? null : Priority.parse((String) m.get("protected")),
                latest == null ? null : ((Number) latest).doubleValue(), (String) m.get("group"));
    }

    static Selection selection(Map<String, Object> m) {
        return new Selection((String) m.get("match"), (String) m.get("type"), "or".equals(m.get("combine")));
    }

    static InfoObject object(Map<String, Object> m) {
        return new InfoObject((String) m.get("name"), (String) m.get("type"), num(m.get("time")), num(m.get("version")),
                values(map(m.get("attributes"))));
    }

    static InfoType type(Map<String, Object> m) {
        List<InfoType.Attribute> attributes = new ArrayList<>();
        list(m.get("attributes")).forEach(a -> attributes.add(new InfoType.Attribute((String) map(a).get("name"),
                (String) map(a).get("type"), (String) map(a).get("description"))));
        return new InfoType((String) m.get("name"), (String) m.get("base"), (String) m.get("description"), attributes);
    }

    static InfoRequest infoRequest(Map<String, Object> m) {
        switch ((String) m.get("op")) {
            case "declare":
                return new InfoRequest.Declare(type(map(m.get("type"))));
            case "update":
                return new InfoRequest.Update(InfoRequest.Mode.valueOf(((String) m.get("mode")).toUpperCase()),
                        (String) m.get("name"), (String) m.get("type"), num(m.get("time")), values(map(m.get("attributes"))));
            case "delete":
                return new InfoRequest.Delete((String) m.get("name"), num(m.get("time")));
            case "get":
                return new InfoRequest.Get(strings(m.get("names")));
            case "list":
                return new InfoRequest.ListObjects(selection(map(m.get("selection"))));
            default:
                return new InfoRequest.Types();
        }
    }
}
