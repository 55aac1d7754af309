package io.herald.client.wire;

/** Bytes that are not a valid Herald frame or value; the message names the problem. */
public class DecodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Makes the error with its message. */
    public DecodeException(String message) {
        super(message);
    }

    /** Makes the error with its message and cause. */
    public DecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
