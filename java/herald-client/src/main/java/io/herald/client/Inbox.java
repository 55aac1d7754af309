package io.herald.client;

import io.herald.client.connection.SubscriptionSink;
import io.herald.client.errors.ClosedException;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Frame;
import io.herald.client.wire.DeliveryOptions;
import io.herald.client.wire.Record;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requester's private subject (docs/protocol.md, Request/reply): one subscription to
 * {@code _INBOX.<unique>.*} per client; a request goes with {@code reply_to =
 * _INBOX.<unique>.<id>} and its {@code id}, and the first reply carrying that id completes it.
 * Later replies are ignored.
 */
final class Inbox implements SubscriptionSink {
    private final String prefix;
    private final long subscription;
    private final Map<Long, CompletableFuture<Record>> pending = new ConcurrentHashMap<>();

    Inbox(long subscription) {
        SecureRandom random = new SecureRandom();
        String unique = Long.toHexString(ProcessHandle.current().pid()) + Long.toHexString(System.currentTimeMillis())
                + Long.toHexString(random.nextLong() & 0xffffffffL);
        this.prefix = "_INBOX." + unique;
        this.subscription = subscription;
    }

    /** Returns the inbox's subscription id. */
    long subscription() {
        return subscription;
    }

    /** Returns the reply subject of request {@code id}. */
    String replyTo(long id) {
        return prefix + "." + id;
    }

    /** Returns the future of the reply to request {@code id}. */
    CompletableFuture<Record> expect(long id) {
        CompletableFuture<Record> reply = new CompletableFuture<>();
        pending.put(id, reply);
        return reply;
    }

    /** Forgets request {@code id} (after a timeout). */
    void forget(long id) {
        pending.remove(id);
    }

    @Override
    public void deliver(Frame.DeliverEntry entry) {
        Record record = entry.record();
        if (record == null || record.id() == null) {
            return;
        }
        CompletableFuture<Record> reply = pending.remove(record.id());
        if (reply != null) {
            reply.complete(record);
        }
    }

    @Override
    public void gap(Frame.Gap gap) {
        // a lost reply shows as the request's timeout
    }

    @Override
    public void interrupted(String server) {
        // requests in flight may time out; the inbox is made again on the new server
    }

    @Override
    public void closed(String why) {
        ClosedException error = new ClosedException("the client is closed: " + why);
        pending.values().forEach(reply -> reply.completeExceptionally(error));
        pending.clear();
    }

    @Override
    public Frame subscribeFrame(long cid) {
        return new Frame.Subscribe(cid, subscription, Filter.subject(prefix + ".*"), DeliveryOptions.DEFAULT);
    }
}
