package io.herald.client.connection;

/**
 * How a connection behaves. Every value has a default ({@link #defaults()}).
 *
 * @param name               client name shown by the server's monitor
 * @param token              authentication token, "" for none
 * @param connectTimeoutMs   longest wait to connect and complete the handshake, per server
 * @param reconnectTimeoutMs longest time without a server before the client gives up
 * @param heartbeatMs        PING interval asked for in HELLO (0: the server's)
 * @param batchBytes         a PUBLISH frame is sent once its records reach this size …
 * @param batchDelayMs       … or when its first record has waited this long
 * @param maxUnackedBytes    bytes published and not acknowledged before publish waits
 */
public record ConnectionOptions(String name, String token, int connectTimeoutMs, long reconnectTimeoutMs, long heartbeatMs,
        int batchBytes, long batchDelayMs, long maxUnackedBytes) {

    /** Default per-server connect and handshake timeout, ms. */
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
    /** Default time without a server before giving up, ms. */
    public static final long DEFAULT_RECONNECT_TIMEOUT_MS = 30_000;
    /** Default PUBLISH frame size, bytes. */
    public static final int DEFAULT_BATCH_BYTES = 64 * 1024;
    /** Default longest wait of a record in the open batch, ms. */
    public static final long DEFAULT_BATCH_DELAY_MS = 5;
    /** Default bytes in flight before publish waits. */
    public static final long DEFAULT_MAX_UNACKED_BYTES = 16L * 1024 * 1024;

    /** Checks the values; a bad one is named with its value (never the token). */
    public ConnectionOptions {
        name = name == null ? "java" : name;
        token = token == null ? "" : token;
        check(connectTimeoutMs > 0, "connectTimeoutMs", connectTimeoutMs, "above 0");
        check(reconnectTimeoutMs >= 0, "reconnectTimeoutMs", reconnectTimeoutMs, "0 (no failover) or more");
        check(heartbeatMs >= 0, "heartbeatMs", heartbeatMs, "0 (the server's) or more");
        check(batchBytes >= 1024, "batchBytes", batchBytes, "at least 1024");
        check(batchDelayMs >= 0, "batchDelayMs", batchDelayMs, "0 or more");
        check(maxUnackedBytes >= batchBytes, "maxUnackedBytes", maxUnackedBytes,
                "at least batchBytes (" + batchBytes + ")");
    }

    private static void check(boolean ok, String field, long value, String rule) {
        if (!ok) {
            throw new IllegalArgumentException("bad connection option " + field + " = " + value + ": must be " + rule);
        }
    }

    /** Returns the defaults, with the client named {@code java}. */
    public static ConnectionOptions defaults() {
        return new ConnectionOptions("java", "", DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_RECONNECT_TIMEOUT_MS, 0,
                DEFAULT_BATCH_BYTES, DEFAULT_BATCH_DELAY_MS, DEFAULT_MAX_UNACKED_BYTES);
    }

    /** Returns a copy with this name and token. */
    public ConnectionOptions withIdentity(String clientName, String clientToken) {
        return new ConnectionOptions(clientName, clientToken, connectTimeoutMs, reconnectTimeoutMs, heartbeatMs, batchBytes,
                batchDelayMs, maxUnackedBytes);
    }

    /** Returns a copy with this reconnect timeout. */
    public ConnectionOptions withReconnectTimeoutMs(long value) {
        return new ConnectionOptions(name, token, connectTimeoutMs, value, heartbeatMs, batchBytes, batchDelayMs, maxUnackedBytes);
    }

    /** Returns a copy with this connect timeout. */
    public ConnectionOptions withConnectTimeoutMs(int value) {
        return new ConnectionOptions(name, token, value, reconnectTimeoutMs, heartbeatMs, batchBytes, batchDelayMs, maxUnackedBytes);
    }
}
