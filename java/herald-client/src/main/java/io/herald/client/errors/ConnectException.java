package io.herald.client.errors;

/** No server of the URL could be reached or completed the handshake; says why for each. */
public class ConnectException extends HeraldException {
    private static final long serialVersionUID = 1L;

    /** Makes the error with its message. */
    public ConnectException(String message) {
        super(message);
    }

    /** Makes the error with its message and cause. */
    public ConnectException(String message, Throwable cause) {
        super(message, cause);
    }
}
