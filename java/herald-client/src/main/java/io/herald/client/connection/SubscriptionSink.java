package io.herald.client.connection;

import io.herald.client.wire.Frame;

/**
 * What the connection hands a subscription: its records, its gap notices, and news of a
 * failover. Called on the connection's reader thread: implementations must not block.
 */
public interface SubscriptionSink {
    /** Receives one DELIVER entry of this subscription (its record may be null: undecodable). */
    void deliver(Frame.DeliverEntry entry);

    /** Receives a GAP notice: records this subscription lost at the server. */
    void gap(Frame.Gap gap);

    /**
     * Hears that the connection moved to another server: records published meanwhile may
     * not have reached this subscription ({@code server} is the new one's address).
     */
    void interrupted(String server);

    /** Hears that the client closed or gave up; no more calls follow. */
    void closed(String why);

    /** Returns the frame that makes this subscription again on a new connection. */
    Frame subscribeFrame(long cid);
}
