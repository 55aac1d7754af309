package io.herald.bench;

import java.util.Arrays;

/** Call durations in ns, and their median and tail. */
final class Latencies {
    private final long[] samples;
    private int count;

    Latencies(int capacity) {
        samples = new long[capacity];
    }

    void add(long nanos) {
        samples[count++] = nanos;
    }

    String summary() {
        long[] sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        return String.format("median %d ns, p90 %d ns, p99 %d ns, p99.9 %d ns, max %d ns", sorted[count / 2],
                sorted[(int) (count * 0.90)], sorted[(int) (count * 0.99)], sorted[(int) (count * 0.999)], sorted[count - 1]);
    }

    long median() {
        long[] sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        return sorted[count / 2];
    }
}
