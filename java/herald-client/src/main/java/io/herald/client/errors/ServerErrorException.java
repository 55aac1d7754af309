package io.herald.client.errors;

/** The server answered a request (or the handshake) with an ERROR frame. */
public class ServerErrorException extends HeraldException {
    private static final long serialVersionUID = 1L;
    private final String code;

    /** Makes the error of an ERROR frame's code and message. */
    public ServerErrorException(String code, String message) {
        super("server refused: " + code + ": " + message);
        this.code = code;
    }

    /** Returns the ERROR code ({@code bad_record}, {@code denied}, {@code bad_info}, …). */
    public String code() {
        return code;
    }
}
