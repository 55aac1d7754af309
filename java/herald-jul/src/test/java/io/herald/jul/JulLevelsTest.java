package io.herald.jul;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.herald.client.wire.Priority;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

class JulLevelsTest {
    static final class Named extends Level {
        private static final long serialVersionUID = 1L;

        Named(String name, int value) {
            super(name, value);
        }
    }

    @Test
    void standardLevelsMapByTheTable() {
        assertEquals(Priority.TRACE, JulLevels.priorityOf(Level.FINEST));
        assertEquals(Priority.DELOUSE, JulLevels.priorityOf(Level.FINER));
        assertEquals(Priority.DEBUG, JulLevels.priorityOf(Level.FINE));
        assertEquals(Priority.INFO, JulLevels.priorityOf(Level.CONFIG));
        assertEquals(Priority.INFO, JulLevels.priorityOf(Level.INFO));
        assertEquals(Priority.WARNING, JulLevels.priorityOf(Level.WARNING));
        assertEquals(Priority.ERROR, JulLevels.priorityOf(Level.SEVERE));
    }

    @Test
    void otherValuesTakeTheRowAtOrBelow() {
        assertEquals(Priority.NOTICE, JulLevels.priorityOf(new Named("X850", 850)));
        assertEquals(Priority.CRITICAL, JulLevels.priorityOf(new Named("X1150", 1150)));
        assertEquals(Priority.ALERT, JulLevels.priorityOf(new Named("X1200", 1200)));
        assertEquals(Priority.EMERGENCY, JulLevels.priorityOf(new Named("X9999", 9999)));
        assertEquals(Priority.TRACE, JulLevels.priorityOf(new Named("X1", 1)));
    }

    @Test
    void priorityNamesWinOverValues() {
        // ACS's AcsLogLevel-style names, whatever their values
        assertEquals(Priority.DELOUSE, JulLevels.priorityOf(new Named("DELOUSE", 350)));
        assertEquals(Priority.NOTICE, JulLevels.priorityOf(new Named("Notice", 801)));
        assertEquals(Priority.CRITICAL, JulLevels.priorityOf(new Named("CRITICAL", 1001)));
        assertEquals(Priority.EMERGENCY, JulLevels.priorityOf(new Named("EMERGENCY", 1003)));
    }
}
