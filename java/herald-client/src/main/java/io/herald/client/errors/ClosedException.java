package io.herald.client.errors;

/** The client was closed, or lost every server for longer than its reconnect timeout. */
public class ClosedException extends HeraldException {
    private static final long serialVersionUID = 1L;

    /** Makes the error with its message. */
    public ClosedException(String message) {
        super(message);
    }
}
