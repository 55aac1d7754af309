package io.herald.client.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.wire.AckLevel;
import io.herald.client.wire.Frame;
import io.herald.client.wire.FrameCodec;
import io.herald.client.wire.Kind;
import io.herald.client.wire.Record;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboxTest {
    static byte[] record(String text) {
        return Record.builder(Kind.LOG, "x").time(1).text(text).build().toBytes();
    }

    @Test
    void batchesAreNumberedOnAcrossFramesAndKeptUntilAcknowledged() {
        Outbox outbox = new Outbox(1024);
        for (String text : List.of("a", "b", "c")) {
            byte[] bytes = record(text);
            outbox.add(bytes, 0, bytes.length);
        }
        Outbox.Sealed first = outbox.seal(7, AckLevel.RECEIVED, 99);
        byte[] bytes = record("d");
        outbox.add(bytes, 0, bytes.length);
        Outbox.Sealed second = outbox.seal(8, AckLevel.RECEIVED, 99);
        Frame.Publish one = (Frame.Publish) FrameCodec.decode(first.frame);
        Frame.Publish two = (Frame.Publish) FrameCodec.decode(second.frame);
        assertEquals(1, one.firstSeq());
        assertEquals(3, one.records().size());
        assertEquals("c", one.records().get(2).text());
        assertEquals(4, two.firstSeq());
        assertEquals(2, outbox.takeUnsent().size());
        assertEquals(0, outbox.takeUnsent().size());
        outbox.resendAll();
        assertEquals(List.of(7L, 8L), outbox.takeUnsent().stream().map(s -> s.ackId).toList(), "resent in order");
        outbox.remove(7);
        assertEquals(1, outbox.recordsHeld());
        assertTrue(outbox.heldBytes() > 0);
        outbox.remove(8);
        assertEquals(0, outbox.heldBytes());
    }

    @Test
    void aFlushOfNothingIsAnEmptyUnnumberedPublish() {
        Outbox outbox = new Outbox(1024);
        Outbox.Sealed flush = outbox.seal(44, AckLevel.RECEIVED, 99);
        assertEquals("0000000510932c0190", java.util.HexFormat.of().formatHex(flush.frame), "publish_flush of the vectors");
    }

    @Test
    void aFullBatchSaysSo() {
        Outbox outbox = new Outbox(1024);
        byte[] bytes = record("y".repeat(600));
        assertTrue(!outbox.wouldOverflow(bytes.length), "an empty batch takes any record");
        outbox.add(bytes, 0, bytes.length);
        assertTrue(outbox.wouldOverflow(bytes.length));
    }
}
