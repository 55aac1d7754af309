package io.herald.client.connection;

import io.herald.client.wire.AckLevel;
import io.herald.client.wire.FrameType;
import io.herald.client.wire.MsgWriter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a connection has to publish: the open batch of encoded records, and every PUBLISH
 * frame sent and not yet acknowledged — the window a failover resends, byte for byte, before
 * anything newer. Records are numbered from 1 in publishing order across connections, and
 * every frame with records is sent numbered (docs/protocol.md, Numbered records), so that a
 * server that already has a resent record acknowledges it without routing it twice.
 *
 * <p>Not locked itself: the connection calls it under its lock.
 */
final class Outbox {
    /** Room kept in every PUBLISH frame for its header and first_seq (at most 30 bytes). */
    static final int PUBLISH_HEADER_BYTES = 32;

    /** A PUBLISH frame sent (or to be sent) and not yet acknowledged. */
    static final class Sealed {
        final long ackId;
        final byte[] frame;
        final int records;
        boolean sent;
        String refusal;

        Sealed(long ackId, byte[] frame, int records) {
            this.ackId = ackId;
            this.frame = frame;
            this.records = records;
        }
    }

    private final int batchBytes;
    private byte[] open = new byte[4096];
    private int openBytes;
    private int openRecords;
    private long nextNumber = 1;
    private final Map<Long, Sealed> window = new LinkedHashMap<>();
    private long windowBytes;

    Outbox(int batchBytes) {
        this.batchBytes = batchBytes;
    }

    /** Returns the bytes held: the open batch and the unacknowledged frames. */
    long heldBytes() {
        return windowBytes + openBytes;
    }

    /** Returns true when the open batch holds records. */
    boolean hasOpenRecords() {
        return openRecords > 0;
    }

    /** Returns true when adding {@code length} bytes would take the open batch over its size. */
    boolean wouldOverflow(int length) {
        return openRecords > 0 && openBytes + length > batchBytes;
    }

    /** Appends one encoded record to the open batch. */
    void add(byte[] record, int offset, int length) {
        if (openBytes + length > open.length) {
            byte[] grown = new byte[Math.max(open.length * 2, openBytes + length)];
            System.arraycopy(open, 0, grown, 0, openBytes);
            open = grown;
        }
        System.arraycopy(record, offset, open, openBytes, length);
        openBytes += length;
        openRecords++;
    }

    /**
     * Seals the open batch (possibly empty) into a numbered PUBLISH frame asking for
     * {@code level} under {@code ackId}, and keeps it in the window until its ACK.
     */
    Sealed seal(long ackId, AckLevel level, long producer) {
        long firstSeq = openRecords > 0 && producer != 0 ? nextNumber : 0;
        nextNumber += openRecords;
        MsgWriter head = new MsgWriter();
        head.array(firstSeq != 0 ? 4 : 3).uint(ackId).uint(level.ordinal()).array(openRecords);
        byte[] headBytes = head.toByteArray();
        byte[] tailBytes = new byte[0];
        if (firstSeq != 0) {
            MsgWriter tail = new MsgWriter();
            tail.uint(firstSeq);
            tailBytes = tail.toByteArray();
        }
        int length = 1 + headBytes.length + openBytes + tailBytes.length;
        byte[] frame = new byte[4 + length];
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
        frame[4] = (byte) FrameType.PUBLISH;
        System.arraycopy(headBytes, 0, frame, 5, headBytes.length);
        System.arraycopy(open, 0, frame, 5 + headBytes.length, openBytes);
        System.arraycopy(tailBytes, 0, frame, 5 + headBytes.length + openBytes, tailBytes.length);
        Sealed sealed = new Sealed(ackId, frame, openRecords);
        window.put(ackId, sealed);
        windowBytes += frame.length;
        openBytes = 0;
        openRecords = 0;
        if (open.length > 4 * batchBytes) {
            open = new byte[batchBytes];
        }
        return sealed;
    }

    /** Returns the frame of an ack id still in the window, or null. */
    Sealed get(long ackId) {
        return window.get(ackId);
    }

    /** Removes an acknowledged (or finally refused) frame from the window. */
    Sealed remove(long ackId) {
        Sealed sealed = window.remove(ackId);
        if (sealed != null) {
            windowBytes -= sealed.frame.length;
        }
        return sealed;
    }

    /** Returns the frames not yet written, in order, and marks them written. */
    List<Sealed> takeUnsent() {
        List<Sealed> unsent = new ArrayList<>();
        for (Sealed sealed : window.values()) {
            if (!sealed.sent) {
                sealed.sent = true;
                unsent.add(sealed);
            }
        }
        return unsent;
    }

    /** Marks every frame of the window unsent: after a failover they go again, in order. */
    void resendAll() {
        for (Sealed sealed : window.values()) {
            sealed.sent = false;
            sealed.refusal = null;
        }
    }

    /** Returns the ack ids in the window (for failing their waiters when the client gives up). */
    List<Long> ackIds() {
        return new ArrayList<>(window.keySet());
    }

    /** Returns how many records the window and the open batch hold. */
    long recordsHeld() {
        long count = openRecords;
        for (Iterator<Sealed> it = window.values().iterator(); it.hasNext();) {
            count += it.next().records;
        }
        return count;
    }
}
