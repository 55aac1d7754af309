package io.herald.jul;

import io.herald.client.wire.Priority;
import java.util.Locale;
import java.util.logging.Level;

/**
 * Maps {@code java.util.logging} levels to Herald's eleven priorities.
 *
 * <p>A level named as one of the Herald priorities JUL's standard levels lack ({@code TRACE},
 * {@code DELOUSE}, {@code DEBUG}, {@code NOTICE}, {@code CRITICAL}, {@code ALERT},
 * {@code EMERGENCY}, in any case: ACS's {@code AcsLogLevel} names) takes that priority,
 * whatever its value. Any other level, one named {@code INFO}, {@code WARNING} or
 * {@code ERROR} included, takes the priority of the row at or below its value:
 *
 * <table>
 * <caption>JUL level value → Herald priority</caption>
 * <tr><th>level value</th><th>standard levels</th><th>priority</th></tr>
 * <tr><td>below 400</td><td>FINEST (300)</td><td>TRACE</td></tr>
 * <tr><td>400</td><td>FINER</td><td>DELOUSE</td></tr>
 * <tr><td>500</td><td>FINE</td><td>DEBUG</td></tr>
 * <tr><td>700</td><td>CONFIG, INFO (800)</td><td>INFO</td></tr>
 * <tr><td>850</td><td></td><td>NOTICE</td></tr>
 * <tr><td>900</td><td>WARNING</td><td>WARNING</td></tr>
 * <tr><td>1000</td><td>SEVERE</td><td>ERROR</td></tr>
 * <tr><td>1100</td><td></td><td>CRITICAL</td></tr>
 * <tr><td>1200</td><td></td><td>ALERT</td></tr>
 * <tr><td>1300 and above</td><td>(OFF is never logged)</td><td>EMERGENCY</td></tr>
 * </table>
 */
public final class JulLevels {
    private JulLevels() {
    }

    /** Returns the priority of a JUL level. */
    public static Priority priorityOf(Level level) {
        Priority named = byName(level.getName());
        if (named != null) {
            return named;
        }
        int value = level.intValue();
        if (value >= 1300) return Priority.EMERGENCY;
        if (value >= 1200) return Priority.ALERT;
        if (value >= 1100) return Priority.CRITICAL;
        if (value >= 1000) return Priority.ERROR;
        if (value >= 900) return Priority.WARNING;
        if (value >= 850) return Priority.NOTICE;
        if (value >= 700) return Priority.INFO;
        if (value >= 500) return Priority.DEBUG;
        if (value >= 400) return Priority.DELOUSE;
        return Priority.TRACE;
    }

    private static Priority byName(String name) {
        switch (name.toUpperCase(Locale.ROOT)) {
            case "TRACE": return Priority.TRACE;
            case "DELOUSE": return Priority.DELOUSE;
            case "DEBUG": return Priority.DEBUG;
            case "NOTICE": return Priority.NOTICE;
            case "CRITICAL": return Priority.CRITICAL;
            case "ALERT": return Priority.ALERT;
            case "EMERGENCY": return Priority.EMERGENCY;
            default: return null;
        }
    }
}
