package io.herald.logback;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import io.herald.client.wire.Priority;
import org.junit.jupiter.api.Test;
import org.slf4j.MarkerFactory;

class LogbackLevelsTest {
    @Test
    void levelsMapByTheTable() {
        assertEquals(Priority.TRACE, LogbackLevels.priorityOf(Level.TRACE));
        assertEquals(Priority.DEBUG, LogbackLevels.priorityOf(Level.DEBUG));
        assertEquals(Priority.INFO, LogbackLevels.priorityOf(Level.INFO));
        assertEquals(Priority.WARNING, LogbackLevels.priorityOf(Level.WARN));
        assertEquals(Priority.ERROR, LogbackLevels.priorityOf(Level.ERROR));
    }

    @Test
    void aPriorityMarkerWinsOverTheLevel() {
        LoggerContext context = new LoggerContext();
        LoggingEvent event = new LoggingEvent("x", context.getLogger("x"), Level.ERROR, "cooling lost", null, null);
        event.addMarker(MarkerFactory.getMarker("audit"));
        assertEquals(Priority.ERROR, LogbackLevels.priorityOf(event));
        event.addMarker(MarkerFactory.getMarker("critical"));
        assertEquals(Priority.CRITICAL, LogbackLevels.priorityOf(event));
    }
}
