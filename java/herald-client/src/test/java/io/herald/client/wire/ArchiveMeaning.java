package io.herald.client.wire;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The meaning of archive frames (QUERY, QUERY_REPLY) in testdata/vectors, to and from the
 * {@link Generic} trees the client carries them as (docs/protocol.md, Archive queries).
 */
final class ArchiveMeaning {
    static final String[] QUERY_OPS = {"samples", "buckets", "logs", "at"};
    static final String[] REPLY_OPS = {"page", "buckets", "at"};

    private ArchiveMeaning() {
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        return (List<Object>) o;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    static Object cursor(Object generic) {
        if (generic == null) {
            return null;
        }
        List<Object> c = list(generic);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("time", c.get(0));
        m.put("seq", c.get(1));
        return m;
    }

    static Object cursorBack(Object meaning) {
        return meaning == null ? null : new ArrayList<>(List.of(FromMeaning.num(map(meaning).get("time")),
                FromMeaning.num(map(meaning).get("seq"))));
    }

    static Map<String, Object> query(long op, Object arguments) {
        List<Object> a = list(arguments);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", QUERY_OPS[(int) op]);
        switch ((int) op) {
            case 0 -> {
                m.put("name", a.get(0));
                m.put("from", a.get(1));
                m.put("to", a.get(2));
                m.put("after", cursor(a.get(3)));
                m.put("limit", a.get(4));
            }
            case 1 -> {
                m.put("name", a.get(0));
                m.put("from", a.get(1));
                m.put("to", a.get(2));
                m.put("buckets", a.get(3));
                m.put("field", a.get(4));
            }
            case 2 -> {
                m.put("from", a.get(0));
                m.put("to", a.get(1));
                m.put("priority_bits", a.get(2));
                List<Object> names = new ArrayList<>();
                Priority.fromBits((Long) a.get(2)).forEach(p -> names.add(p.name()));
                m.put("priorities", names);
                m.put("subject", a.get(3));
                m.put("host", a.get(4));
                m.put("process", a.get(5));
                m.put("text", a.get(6));
                m.put("after", cursor(a.get(7)));
                m.put("limit", a.get(8));
            }
            default -> {
                m.put("names", a.get(0));
                m.put("time", a.get(1));
            }
        }
        return m;
    }

    static Object queryBack(Map<String, Object> m) {
        List<Object> a = new ArrayList<>();
        switch ((String) m.get("op")) {
            case "samples" -> {
                a.add(m.get("name"));
                a.add(FromMeaning.num(m.get("from")));
                a.add(FromMeaning.num(m.get("to")));
                a.add(cursorBack(m.get("after")));
                a.add(FromMeaning.num(m.get("limit")));
            }
            case "buckets" -> {
                a.add(m.get("name"));
                a.add(FromMeaning.num(m.get("from")));
                a.add(FromMeaning.num(m.get("to")));
                a.add(FromMeaning.num(m.get("buckets")));
                a.add(m.get("field"));
            }
            case "logs" -> {
                a.add(FromMeaning.num(m.get("from")));
                a.add(FromMeaning.num(m.get("to")));
                a.add(FromMeaning.num(m.get("priority_bits")));
                a.add(m.get("subject"));
                a.add(m.get("host"));
                a.add(m.get("process"));
                a.add(m.get("text"));
                a.add(cursorBack(m.get("after")));
                a.add(FromMeaning.num(m.get("limit")));
            }
            default -> {
                a.add(new ArrayList<>(list(m.get("names"))));
                a.add(FromMeaning.num(m.get("time")));
            }
        }
        return a;
    }

    static long queryOp(Map<String, Object> m) {
        return List.of(QUERY_OPS).indexOf(m.get("op"));
    }

    static Object stored(Object generic) {
        if (generic == null) {
            return null;
        }
        List<Object> s = list(generic);
        MsgWriter writer = new MsgWriter();
        Generic.write(writer, s.get(2));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", s.get(0));
        m.put("received", s.get(1));
        m.put("record", Meaning.record(Record.decode(new MsgReader(writer.toByteArray()))));
        return m;
    }

    static Object storedBack(Object meaning) {
        if (meaning == null) {
            return null;
        }
        Map<String, Object> m = map(meaning);
        byte[] record = FromMeaning.record(map(m.get("record"))).toBytes();
        return new ArrayList<>(List.of(FromMeaning.num(m.get("seq")), FromMeaning.num(m.get("received")),
                Generic.read(new MsgReader(record))));
    }

    static Map<String, Object> reply(long op, Object answer) {
        List<Object> a = list(answer);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", REPLY_OPS[(int) op]);
        switch ((int) op) {
            case 0 -> {
                List<Object> records = new ArrayList<>();
                list(a.get(0)).forEach(s -> records.add(stored(s)));
                m.put("records", records);
                m.put("next", cursor(a.get(1)));
            }
            case 1 -> {
                List<Object> buckets = new ArrayList<>();
                for (Object b : a) {
                    List<Object> bucket = list(b);
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("start", bucket.get(0));
                    one.put("end", bucket.get(1));
                    one.put("count", bucket.get(2));
                    List<Object> fields = new ArrayList<>();
                    for (Object f : list(bucket.get(3))) {
                        List<Object> field = list(f);
                        Map<String, Object> stats = new LinkedHashMap<>();
                        String[] names = {"name", "count", "min", "max", "mean", "first", "last"};
                        for (int i = 0; i < names.length; i++) {
                            stats.put(names[i], field.get(i));
                        }
                        fields.add(stats);
                    }
                    one.put("fields", fields);
                    buckets.add(one);
                }
                m.put("buckets", buckets);
            }
            default -> {
                List<Object> values = new ArrayList<>();
                a.forEach(s -> values.add(stored(s)));
                m.put("values", values);
            }
        }
        return m;
    }

    static Object replyBack(Map<String, Object> m) {
        switch ((String) m.get("op")) {
            case "page": {
                List<Object> records = new ArrayList<>();
                list(m.get("records")).forEach(s -> records.add(storedBack(s)));
                List<Object> page = new ArrayList<>();
                page.add(records);
                page.add(cursorBack(m.get("next")));
                return page;
            }
            case "buckets": {
                List<Object> buckets = new ArrayList<>();
                for (Object b : list(m.get("buckets"))) {
                    Map<String, Object> one = map(b);
                    List<Object> fields = new ArrayList<>();
                    for (Object f : list(one.get("fields"))) {
                        Map<String, Object> s = map(f);
                        fields.add(new ArrayList<>(List.of(s.get("name"), FromMeaning.num(s.get("count")), s.get("min"), s.get("max"),
                                s.get("mean"), s.get("first"), s.get("last"))));
                    }
                    buckets.add(new ArrayList<>(List.of(FromMeaning.num(one.get("start")), FromMeaning.num(one.get("end")),
                            FromMeaning.num(one.get("count")), fields)));
                }
                return buckets;
            }
            default: {
                List<Object> values = new ArrayList<>();
                list(m.get("values")).forEach(s -> values.add(storedBack(s)));
                return values;
            }
        }
    }

    static long replyOp(Map<String, Object> m) {
        return List.of(REPLY_OPS).indexOf(m.get("op"));
    }
}
