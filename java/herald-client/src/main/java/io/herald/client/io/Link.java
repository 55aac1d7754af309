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
 * One TCP connection to one server, after the handshake (HELLO → WELCOME). Writes are
 * serialised by the caller (the connection's writer thread); one reader thread reads.
 */
public final class Link implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final FrameReader reader;
    private final Frame.Welcome welcome;
    private final InetSocketAddress address;

    private Link(Socket socket, FrameReader reader, Frame.Welcome welcome, InetSocketAddress address) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.reader = reader;
        this.welcome = welcome;
        this.address = address;
    }

    /**
     * Connects and completes the handshake within {@code timeoutMs}.
     *
     * @throws ServerErrorException when the server answers HELLO with ERROR (refused: do not retry blindly)
     * @throws ConnectException when the server cannot be reached or answers something else
     */
    public static Link open(InetSocketAddress server, Frame.Hello hello, int timeoutMs) {
        InetSocketAddress resolved = new InetSocketAddress(server.getHostString(), server.getPort());
        if (resolved.isUnresolved()) {
            throw new ConnectException("cannot resolve host `" + server.getHostString() + "`");
        }
        String name = server.getHostString() + ":" + server.getPort();
        Socket socket = new Socket();
        try {
            socket.connect(resolved, timeoutMs);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(timeoutMs);
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
            return new Link(socket, reader, welcome, resolved);
        } catch (SocketTimeoutException e) {
            closeQuietly(socket);
            throw new ConnectException(name + ": no WELCOME within " + timeoutMs + " ms", e);
        } catch (IOException | DecodeException e) {
            closeQuietly(socket);
            throw new ConnectException(name + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(socket);
            throw e;
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

    /** Closes the socket; a reader blocked in {@link #read()} returns with an error. */
    @Override
    public void close() {
        closeQuietly(socket);
    }
}
