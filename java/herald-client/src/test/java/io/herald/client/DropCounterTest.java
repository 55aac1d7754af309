package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.herald.client.wire.Origin;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The logger's loss counts and their report, records of unknown priority included. */
class DropCounterTest {
    @Test
    void lossesOfUnknownPriorityAreCountedAndReportedByThatName() {
        DropCounter drops = new DropCounter();
        drops.count(Priority.DEBUG, DropCounter.Reason.BUFFER_FULL);
        drops.countUnknown(DropCounter.Reason.CLOSED, 3);
        drops.countUnknown(DropCounter.Reason.CLOSED, 0);
        assertEquals(4, drops.total());
        assertEquals(3, drops.count(DropCounter.Reason.CLOSED));
        Record report = drops.report("IT.drops", Origin.of("dv01", "mount[7]").withThread("herald-logger"));
        assertEquals("dv01", report.origin().host(), "the report says where from");
        assertEquals("mount[7]", report.origin().process());
        assertEquals("logger dropped 4 records (1 DEBUG, 3 unknown; 1 buffer_full, 3 closed)", report.text());
        assertEquals(4L, report.fields().get("dropped"));
        assertEquals(Map.of("DEBUG", 1L, "unknown", 3L), report.fields().get("dropped_by_priority"));
        assertNull(drops.report("IT.drops", Origin.of("dv01", "mount[7]")), "nothing new to report");
    }
}
