package io.herald.client;

import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.util.Map;

/** What a subscription hands its reader: a record, a gap notice, or news of a failover. */
public sealed interface SubscriptionEvent {

    /**
     * A record delivered to this subscription.
     *
     * @param record   the record, as the producer sent it
     * @param seq      the server's sequence number
     * @param received the server's receive time, ns since the epoch
     */
    record Delivered(Record record, long seq, long received) implements SubscriptionEvent {
    }

    /**
     * Records this subscription lost: at the server ({@code member} null, or the cluster
     * member whose route lost them), or in this client when the subscription's local queue
     * was full ({@code local} true; the sequence numbers are then those of the records lost).
     *
     * @param count      records lost
     * @param firstSeq   first sequence number of the range
     * @param lastSeq    last sequence number of the range
     * @param byPriority count per priority
     * @param member     cluster member, or null
     * @param local      true for records this client dropped itself
     */
    record Gap(long count, long firstSeq, long lastSeq, Map<Priority, Long> byPriority, String member, boolean local)
            implements SubscriptionEvent {
    }

    /**
     * The client moved to another server: records published meanwhile may have been missed.
     *
     * @param server the new server's address
     */
    record Interrupted(String server) implements SubscriptionEvent {
    }
}
