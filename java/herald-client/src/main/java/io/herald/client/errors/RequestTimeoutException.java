package io.herald.client.errors;

/** A request, flush or reply did not complete within its timeout. */
public class RequestTimeoutException extends HeraldException {
    private static final long serialVersionUID = 1L;

    /** Makes the error with its message. */
    public RequestTimeoutException(String message) {
        super(message);
    }
}
