package io.herald.client.wire;

import java.util.List;
import java.util.Map;

/**
 * Every frame of the native protocol (docs/protocol.md, Frames), one record per type.
 * {@link FrameCodec} encodes and decodes them.
 */
public sealed interface Frame {
    /** Protocol version this client speaks. */
    long PROTOCOL_VERSION = 1;

    /** HELLO (0x01): the client's first frame; {@code producer} 0 = not sent. */
    record Hello(long version, String name, String token, List<String> capabilities, long heartbeatMs, long producer)
            implements Frame {
    }

    /** WELCOME (0x02): the server's answer to HELLO. */
    record Welcome(long version, String server, long heartbeatMs, long maxFrameBytes, long connection) implements Frame {
    }

    /** PUBLISH (0x10): a batch of records; {@code firstSeq} 0 = not numbered. */
    record Publish(long ackId, AckLevel ack, List<Record> records, long firstSeq) implements Frame {
    }

    /** ACK (0x11): {@code count} records of batch {@code ackId} taken. */
    record Ack(long ackId, AckLevel level, long count) implements Frame {
    }

    /**
     * One DELIVER entry; {@code record} is null when it does not decode ({@code problem}
     * says why). {@code producer} and {@code pseq} are set in a route's numbered entry only,
     * {@code groups} (the queue groups the receiving cluster member serves) in a route's
     * entry of 7 only (empty otherwise).
     */
    record DeliverEntry(long subscription, long seq, long received, Record record, long producer, long pseq,
            List<String> groups, String problem) {
        /** Returns an entry of 4 elements. */
        public DeliverEntry(long subscription, long seq, long received, Record record) {
            this(subscription, seq, received, record, 0, 0, List.of(), null);
        }
    }

    /** DELIVER (0x12): records for subscriptions. */
    record Deliver(List<DeliverEntry> entries) implements Frame {
    }

    /** GAP (0x13): {@code count} records lost between two sequence numbers; {@code member} may be null. */
    record Gap(long subscription, long count, long firstSeq, long lastSeq, Map<Priority, Long> byPriority, String member)
            implements Frame {
    }

    /** SUBSCRIBE (0x20). */
    record Subscribe(long cid, long subscription, Filter filter, DeliveryOptions options) implements Frame {
    }

    /** UNSUBSCRIBE (0x21); cid 0 = no answer wanted. */
    record Unsubscribe(long cid, long subscription) implements Frame {
    }

    /** OK (0x22). */
    record Ok(long cid) implements Frame {
    }

    /** MONITOR (0x30). */
    record Monitor(long cid) implements Frame {
    }

    /** MONITOR_REPLY (0x31): the server's counters by name. */
    record MonitorReply(long cid, Map<String, Object> data) implements Frame {
    }

    /** RELOAD (0x32): read the configuration again (admin). */
    record Reload(long cid) implements Frame {
    }

    /** RELOAD_REPLY (0x33): the settings applied, and those waiting for a restart. */
    record ReloadReply(long cid, Map<String, Object> data) implements Frame {
    }

    /** INFO (0x50). */
    record Info(long cid, InfoRequest request) implements Frame {
    }

    /** INFO_REPLY (0x51); {@code more}: further parts follow under the same cid. */
    record InfoReplyFrame(long cid, InfoReply reply, boolean more) implements Frame {
    }

    /** INFO_SUBSCRIBE (0x52). */
    record InfoSubscribe(long cid, long subscription, Selection selection) implements Frame {
    }

    /** QUERY (0x60): an archive query, its arguments carried as read ({@link Generic}). */
    record Query(long cid, long op, Object arguments) implements Frame {
    }

    /** QUERY_REPLY (0x61): an archive answer, carried as read ({@link Generic}). */
    record QueryReply(long cid, long op, Object answer, long skipped, boolean more) implements Frame {
    }

    /** PING (0x40). */
    record Ping() implements Frame {
    }

    /** PONG (0x41). */
    record Pong() implements Frame {
    }

    /** ERROR (0x7f): cid 0 is about the connection as a whole, which then closes. */
    record Error(long cid, String code, String message) implements Frame {
    }
}
