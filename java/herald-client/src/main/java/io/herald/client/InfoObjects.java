package io.herald.client;

import io.herald.client.connection.Connection;
import io.herald.client.wire.Frame;
import io.herald.client.wire.HeraldTime;
import io.herald.client.wire.InfoObject;
import io.herald.client.wire.InfoReply;
import io.herald.client.wire.InfoRequest;
import io.herald.client.wire.InfoType;
import io.herald.client.wire.Selection;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Information objects (docs/protocol.md, Information objects): named, typed values whose
 * latest state the server keeps. Every call waits for the server's answer; a refusal is a
 * {@link io.herald.client.errors.ServerErrorException} with code {@code bad_info} naming
 * the problem. Get one from {@link HeraldClient#info()}.
 */
public final class InfoObjects {
    private final HeraldClient client;
    private final Connection connection;

    InfoObjects(HeraldClient client, Connection connection) {
        this.client = client;
        this.connection = connection;
    }

    private InfoReply call(InfoRequest request, Duration timeout, String what) {
        long cid = connection.nextId();
        try {
            Frame answer = Connection.await(connection.request(cid, new Frame.Info(cid, request)), timeout.toMillis(), what);
            return ((Frame.InfoReplyFrame) answer).reply();
        } finally {
            connection.forget(cid);
        }
    }

    /** Declares a type (declaring the same type again is fine). */
    public void declare(InfoType type, Duration timeout) {
        call(new InfoRequest.Declare(type), timeout, "declaring type `" + type.name() + "`");
    }

    /**
     * Creates, updates or upserts object {@code name} (of {@code type}, null to keep it)
     * with {@code attributes}; returns the object after the change. The type must be declared
     * first ({@link #declare}): the server refuses an unknown one ({@code bad_info}).
     */
    public InfoObject update(InfoRequest.Mode mode, String name, String type, Map<String, ?> attributes, Duration timeout) {
        @SuppressWarnings("unchecked")
        Map<String, Object> values = (Map<String, Object>) attributes;
        InfoReply reply = call(new InfoRequest.Update(mode, name, type, HeraldTime.nowNanos(), values), timeout,
                mode.wireName() + " of `" + name + "`");
        return reply.objects().isEmpty() ? null : reply.objects().get(0);
    }

    /** Upserts object {@code name}: creates it or replaces the given attributes. */
    public InfoObject update(String name, String type, Map<String, ?> attributes, Duration timeout) {
        return update(InfoRequest.Mode.UPSERT, name, type, attributes, timeout);
    }

    /** Deletes object {@code name}; returns it as it was, version advanced. */
    public InfoObject delete(String name, Duration timeout) {
        InfoReply reply = call(new InfoRequest.Delete(name, HeraldTime.nowNanos()), timeout, "deleting `" + name + "`");
        return reply.objects().isEmpty() ? null : reply.objects().get(0);
    }

    /** Returns one entry per name, read at one instant; null where there is no object. */
    public List<InfoObject> get(List<String> names, Duration timeout) {
        return call(new InfoRequest.Get(names), timeout, "get of " + names).objects();
    }

    /** Returns object {@code name}, or null. */
    public InfoObject get(String name, Duration timeout) {
        return get(List.of(name), timeout).get(0);
    }

    /** Returns the objects a selection takes, by name. */
    public List<InfoObject> list(Selection selection, Duration timeout) {
        return call(new InfoRequest.ListObjects(selection), timeout, "list").objects();
    }

    /** Returns every declared type. */
    public List<InfoType> types(Duration timeout) {
        return call(new InfoRequest.Types(), timeout, "types").types();
    }

    /**
     * Subscribes to the objects a selection takes: first one record per object with text
     * {@code snapshot}, then every change (kind info, text created/updated/deleted, fields =
     * attributes, id = version).
     */
    public Subscription subscribe(Selection selection, Duration timeout) {
        return client.subscribeWith((cid, sub) -> new Frame.InfoSubscribe(cid, sub, selection), timeout, null, null);
    }
}
