package io.herald.client.wire;

import java.nio.charset.StandardCharsets;

/** Checks subjects and patterns as the server does, so that bad input fails at the call. */
public final class Subjects {
    /** Longest subject, reply_to or pattern, in UTF-8 bytes. */
    public static final int MAX_SUBJECT_BYTES = 1024;

    private Subjects() {
    }

    /**
     * Checks a subject: non-empty, at most 1024 bytes, no {@code *} or {@code ?}, no control
     * characters.
     *
     * @throws IllegalArgumentException naming the subject and the problem
     */
    public static String checkSubject(String subject, String what) {
        if (subject == null || subject.isEmpty()) {
            throw new IllegalArgumentException("invalid " + what + ": empty subject");
        }
        checkLength(subject, what);
        for (int i = 0; i < subject.length(); i++) {
            char c = subject.charAt(i);
            if (c == '*' || c == '?') {
                throw new IllegalArgumentException("invalid " + what + ": subject `" + subject + "` contains `" + c
                        + "` (wildcards belong in subscriptions, not in records)");
            }
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException("invalid " + what + ": subject `" + subject.replaceAll("\\p{Cntrl}", "?")
                        + "` contains a control character");
            }
        }
        return subject;
    }

    /**
     * Checks a glob pattern: 1..1024 bytes, no control characters.
     *
     * @throws IllegalArgumentException naming the pattern and the problem
     */
    public static String checkPattern(String pattern, String what) {
        if (pattern == null || pattern.isEmpty()) {
            throw new IllegalArgumentException("invalid " + what + " pattern: empty (use `*` for everything)");
        }
        checkLength(pattern, what);
        for (int i = 0; i < pattern.length(); i++) {
            if (Character.isISOControl(pattern.charAt(i))) {
                throw new IllegalArgumentException("invalid " + what + " pattern `" + pattern + "`: contains a control character");
            }
        }
        return pattern;
    }

    private static void checkLength(String text, String what) {
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_SUBJECT_BYTES) {
            throw new IllegalArgumentException("invalid " + what + ": " + bytes + " bytes long (at most " + MAX_SUBJECT_BYTES + ")");
        }
    }
}
