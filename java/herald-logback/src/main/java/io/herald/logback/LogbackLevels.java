package io.herald.logback;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.herald.client.wire.Priority;
import java.util.List;
import java.util.Locale;
import org.slf4j.Marker;

/**
 * Maps Logback events to Herald's eleven priorities.
 *
 * <table>
 * <caption>Logback level → Herald priority</caption>
 * <tr><th>level</th><th>priority</th></tr>
 * <tr><td>TRACE</td><td>TRACE</td></tr>
 * <tr><td>DEBUG</td><td>DEBUG</td></tr>
 * <tr><td>INFO</td><td>INFO</td></tr>
 * <tr><td>WARN</td><td>WARNING</td></tr>
 * <tr><td>ERROR</td><td>ERROR</td></tr>
 * </table>
 *
 * <p>The priorities Logback has no level for — DELOUSE, NOTICE, CRITICAL, ALERT, EMERGENCY —
 * are reached with an SLF4J marker of that name (any case): {@code
 * log.error(MarkerFactory.getMarker("CRITICAL"), "cooling lost")}. A marker naming a
 * priority wins over the level.
 */
public final class LogbackLevels {
    private LogbackLevels() {
    }

    /** Returns the priority of an event: a priority-named marker, else its level. */
    public static Priority priorityOf(ILoggingEvent event) {
        List<Marker> markers = event.getMarkerList();
        if (markers != null) {
            for (Marker marker : markers) {
                Priority named = byName(marker.getName());
                if (named != null) {
                    return named;
                }
            }
        }
        return priorityOf(event.getLevel());
    }

    /** Returns the priority of a level. */
    public static Priority priorityOf(Level level) {
        switch (level.toInt()) {
            case Level.ERROR_INT: return Priority.ERROR;
            case Level.WARN_INT: return Priority.WARNING;
            case Level.INFO_INT: return Priority.INFO;
            case Level.DEBUG_INT: return Priority.DEBUG;
            default: return level.toInt() < Level.DEBUG_INT ? Priority.TRACE : Priority.ERROR;
        }
    }

    private static Priority byName(String name) {
        switch (name.toUpperCase(Locale.ROOT)) {
            case "TRACE": return Priority.TRACE;
            case "DELOUSE": return Priority.DELOUSE;
            case "DEBUG": return Priority.DEBUG;
            case "INFO": return Priority.INFO;
            case "NOTICE": return Priority.NOTICE;
            case "WARNING": return Priority.WARNING;
            case "ERROR": return Priority.ERROR;
            case "CRITICAL": return Priority.CRITICAL;
            case "ALERT": return Priority.ALERT;
            case "EMERGENCY": return Priority.EMERGENCY;
            default: return null;
        }
    }
}
