package io.herald.client.errors;

/** The base of every error the Herald client reports; the message names the problem. */
public class HeraldException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Makes the error with its message. */
    public HeraldException(String message) {
        super(message);
    }

    /** Makes the error with its message and cause. */
    public HeraldException(String message, Throwable cause) {
        super(message, cause);
    }
}
