package io.herald.client.connection;

import io.herald.client.errors.ConnectException;
import io.herald.client.errors.HeraldException;
import io.herald.client.errors.ServerErrorException;
import io.herald.client.io.Link;
import io.herald.client.io.TlsDialer;
import io.herald.client.wire.Frame;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Finding a server: the first of the URL that completes the handshake, and after a lost
 * connection the next ones, round after round with backoff (50 ms doubling to 1 s, as the
 * Rust client), until one answers or the reconnect timeout passes.
 */
final class Failover {
    static final long FIRST_BACKOFF_MS = 50;
    static final long MAX_BACKOFF_MS = 1_000;

    /** A link and the index of its server in the URL. */
    record Found(int index, Link link) {
    }

    private Failover() {
    }

    /**
     * Returns the first server of the list, from {@code start} on, that completes the
     * handshake, trying each once ({@code tls} null: plain TCP).
     *
     * @throws ConnectException naming why each one failed
     */
    static Found firstLink(List<InetSocketAddress> servers, int start, Frame.Hello hello, int timeoutMs, TlsDialer tls) {
        List<String> errors = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            int index = (start + i) % servers.size();
            InetSocketAddress server = servers.get(index);
            try {
                return new Found(index, Link.open(server, hello, timeoutMs, tls));
            } catch (ServerErrorException e) {
                errors.add(server.getHostString() + ":" + server.getPort() + " refused the handshake (" + e.code() + ": "
                        + e.getMessage() + ")");
            } catch (HeraldException e) {
                errors.add(e.getMessage());
            }
        }
        throw new ConnectException("no server answered: " + String.join("; ", errors));
    }

    /**
     * Tries every server, round after round, until one answers, {@code timeoutMs} passes
     * (then null) or {@code stop} says to give up (then null).
     */
    static Found reconnect(List<InetSocketAddress> servers, int start, Frame.Hello hello, int connectTimeoutMs, TlsDialer tls,
            long timeoutMs, BooleanSupplier stop, List<String> lastErrors) {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        long backoff = FIRST_BACKOFF_MS;
        while (!stop.getAsBoolean()) {
            try {
                return firstLink(servers, start, hello, connectTimeoutMs, tls);
            } catch (ConnectException e) {
                lastErrors.clear();
                lastErrors.add(e.getMessage());
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return null;
            }
            try {
                Thread.sleep(Math.min(backoff, left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
        return null;
    }
}
