package io.herald.client.io;

import io.herald.client.errors.ConnectException;
import io.herald.client.errors.ServerErrorException;
import io.herald.client.wire.DecodeException;
import io.herald.client.wire.Frame;
import io.herald.client.wire.FrameCodec;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * One TCP connection to one server, plain or TLS ({@link TlsDialer}), after the handshake
 * (HELLO → WELCOME). Writes are serialised by the caller (the connection's writer thread); one
 * reader thread reads (a JDK {@code SSLSocket} allows one reader and one writer at once).
 */
public final class Link implements AutoCloseable {
    private final Socket socket;
    private final Socket tcp;
    private final OutputStream out;
    private final FrameReader reader;
    private final Frame.Welcome welcome;
    private final InetSocketAddress address;

    private Link(Socket socket, Socket tcp, FrameReader reader, Frame.Welcome welcome, InetSocketAddress address)
            throws IOException {
        this.socket = socket;
        this.tcp = tcp;
        this.out = socket.getOutputStream();
        this.reader = reader;
        this.welcome = welcome;
        this.address = address;
    }

    /** Connects over plain TCP; see {@link #open(InetSocketAddress, Frame.Hello, int, TlsDialer)}. */
    public static Link open(InetSocketAddress server, Frame.Hello hello, int timeoutMs) {
        return open(server, hello, timeoutMs, null);
    }

    /**
     * Connects, over TLS when {@code tls} is not null, and completes the handshake within
     * {@code timeoutMs} (each step: TCP connect, TLS handshake, HELLO → WELCOME).
     *
     * @throws ServerErrorException when the server answers HELLO with ERROR (refused: do not retry blindly)
     * @throws ConnectException when the server cannot be reached, its TLS handshake fails (saying
     *                          why) or it answers something else
     */
    public static Link open(InetSocketAddress server, Frame.Hello hello, int timeoutMs, TlsDialer tls) {
        InetSocketAddress resolved = new InetSocketAddress(server.getHostString(), server.getPort());
        if (resolved.isUnresolved()) {
            throw new ConnectException("cannot resolve host `" + server.getHostString() + "`");
        }
        String name = server.getHostString() + ":" + server.getPort();
        Socket tcp = new Socket();
        Socket socket = tcp;
        try {
            tcp.connect(resolved, timeoutMs);
            tcp.setTcpNoDelay(true);
            tcp.setSoTimeout(timeoutMs);
            if (tls != null) {
                socket = handshake(tls, tcp, server, name);
            }
            socket.getOutputStream().write(FrameCodec.encode(hello));
            FrameReader reader = new FrameReader(new BufferedInputStream(socket.getInputStream(), 64 * 1024),
                    FrameCodec.DEFAULT_MAX_FRAME_BYTES);
            Frame first = reader.read();
            if (first instanceof Frame.Error error) {
                throw new ServerErrorException(error.code(), error.message());
            }
            if (!(first instanceof Frame.Welcome welcome)) {
                throw new ConnectException(name + " answered HELLO with " + (first == null ? "a close" : first.getClass().getSimpleName())
                        + ", not WELCOME: is it a Herald native port?");
            }
            if (welcome.version() != Frame.PROTOCOL_VERSION) {
                throw new ConnectException(name + " speaks protocol version " + welcome.version() + ", this client 1");
            }
            reader.setMaxFrameBytes((int) Math.min(welcome.maxFrameBytes(), Integer.MAX_VALUE - FrameReader.FRAME_SLACK_BYTES));
            socket.setSoTimeout(0);
            return new Link(socket, tcp, reader, welcome, resolved);
        } catch (SocketTimeoutException e) {
            closeQuietly(tcp);
            throw new ConnectException(name + ": no WELCOME within " + timeoutMs + " ms", e);
        } catch (IOException e) {
            if (socket != tcp) { // TLS 1.3: the server refuses a client certificate after the handshake
                String message = TlsFailure.afterHandshake(name, server.getHostString(), socket, e);
                closeQuietly(tcp);
                throw new ConnectException(message, e);
            }
            closeQuietly(tcp);
            throw new ConnectException(name + ": " + e.getMessage(), e);
        } catch (DecodeException e) {
            closeQuietly(tcp);
            throw new ConnectException(name + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(tcp);
            throw e;
        }
    }

    private static Socket handshake(TlsDialer tls, Socket tcp, InetSocketAddress server, String name) {
        try {
            return tls.handshake(tcp, server.getHostString(), server.getPort());
        } catch (SocketTimeoutException e) {
            throw new ConnectException("TLS handshake with herald server " + name + " failed: no answer within "
                    + "the connect timeout (" + TlsFailure.NOT_TLS + ")", e);
        } catch (IOException e) {
            throw new ConnectException(TlsFailure.describe(name, server.getHostString(), e), e);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a socket that failed: nothing more to report
        }
    }

    /** Returns the server's WELCOME. */
    public Frame.Welcome welcome() {
        return welcome;
    }

    /** Returns the address connected to. */
    public InetSocketAddress address() {
        return address;
    }

    /** Returns the next frame, or null when the server closed the connection. */
    public Frame read() throws IOException {
        return reader.read();
    }

    /** Writes bytes that are whole frames. */
    public void write(byte[] frames, int offset, int length) throws IOException {
        out.write(frames, offset, length);
    }

    /** Flushes written bytes to the socket. */
    public void flush() throws IOException {
        out.flush();
    }

    /**
     * Closes the socket; a reader blocked in {@link #read()} returns with an error. Over TLS
     * this closes the TCP socket under it without close_notify (the protocol allows it: frames
     * carry their length): an {@code SSLSocket}'s own close may wait for a writer blocked on a
     * full socket, and closing must never block.
     */
    @Override
    public void close() {
        closeQuietly(tcp);
    }
}
