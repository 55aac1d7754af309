package io.herald.client.connection;

import io.herald.client.errors.HeraldException;
import io.herald.client.wire.Frame;
import io.herald.client.wire.InfoObject;
import io.herald.client.wire.InfoReply;
import io.herald.client.wire.InfoType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests waiting for an answer, by cid (an ack id for a PUBLISH): completed by the
 * reader with the answer, or failed with the server's ERROR or the connection's loss. An
 * INFO_REPLY in parts (every part but the last marked {@code more}) is joined here first.
 */
final class Waiters {
    private final Map<Long, CompletableFuture<Frame>> waiting = new ConcurrentHashMap<>();
    private final Map<Long, List<Frame.InfoReplyFrame>> infoParts = new ConcurrentHashMap<>();

    /** Returns the future of the answer to {@code cid}. */
    CompletableFuture<Frame> add(long cid) {
        CompletableFuture<Frame> answer = new CompletableFuture<>();
        waiting.put(cid, answer);
        return answer;
    }

    /** Forgets {@code cid} (after a timeout, or when its request could not be sent). */
    void forget(long cid) {
        waiting.remove(cid);
        infoParts.remove(cid);
    }

    /** Completes {@code cid} with its answer, if anyone waits. */
    void complete(long cid, Frame frame) {
        CompletableFuture<Frame> waiter = waiting.remove(cid);
        if (waiter != null) {
            waiter.complete(frame);
        }
    }

    /** Fails {@code cid}, if anyone waits. */
    void fail(long cid, HeraldException error) {
        infoParts.remove(cid);
        CompletableFuture<Frame> waiter = waiting.remove(cid);
        if (waiter != null) {
            waiter.completeExceptionally(error);
        }
    }

    /** Takes one INFO_REPLY part; the last one completes the waiter with the whole answer. */
    void infoPart(Frame.InfoReplyFrame part) {
        if (part.more()) {
            infoParts.computeIfAbsent(part.cid(), k -> new ArrayList<>()).add(part);
            return;
        }
        List<Frame.InfoReplyFrame> before = infoParts.remove(part.cid());
        if (before == null) {
            complete(part.cid(), part);
            return;
        }
        List<InfoObject> objects = new ArrayList<>();
        List<InfoType> types = new ArrayList<>();
        before.add(part);
        for (Frame.InfoReplyFrame one : before) {
            objects.addAll(one.reply().objects());
            types.addAll(one.reply().types());
        }
        complete(part.cid(), new Frame.InfoReplyFrame(part.cid(), new InfoReply(objects, types), false));
    }

    /** Fails every waiter but those of {@code except} (PUBLISH frames a failover resends). */
    void failAll(HeraldException error, Set<Long> except) {
        for (Long cid : List.copyOf(waiting.keySet())) {
            if (!except.contains(cid)) {
                fail(cid, error);
            }
        }
        infoParts.clear();
    }
}
