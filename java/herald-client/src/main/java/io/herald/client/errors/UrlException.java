package io.herald.client.errors;

/** A server URL that cannot be read; the message quotes it and says why. */
public class UrlException extends HeraldException {
    private static final long serialVersionUID = 1L;

    /** Makes the error with its message. */
    public UrlException(String message) {
        super(message);
    }
}
