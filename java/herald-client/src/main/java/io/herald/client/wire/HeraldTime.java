package io.herald.client.wire;

import java.time.Instant;

/**
 * A time value in a record's fields or an object's attributes: nanoseconds since
 * 1970-01-01T00:00:00Z, written as MessagePack extension type 1 ({@code d7 01} + i64).
 */
public record HeraldTime(long nanos) {

    /** Returns the time of an instant (nanoseconds beyond the i64 range are an error). */
    public static HeraldTime of(Instant instant) {
        return new HeraldTime(Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano()));
    }

    /** Returns this time as an instant. */
    public Instant toInstant() {
        return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
    }

    /** Returns the current wall-clock time with the clock's precision. */
    public static long nowNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    @Override
    public String toString() {
        return toInstant().toString();
    }
}
