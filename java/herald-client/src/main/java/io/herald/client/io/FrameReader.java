package io.herald.client.io;

import io.herald.client.wire.DecodeException;
import io.herald.client.wire.Frame;
import io.herald.client.wire.FrameCodec;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads whole frames from a stream. A frame cut anywhere simply waits for the rest of its
 * bytes; a clean end of stream between frames is {@code null}, an end inside one is an error.
 */
public final class FrameReader {
    /** Slack over the announced maximum: a DELIVER of one record near the limit may exceed it by its header. */
    public static final int FRAME_SLACK_BYTES = 1024;

    private final InputStream in;
    private volatile int maxFrameBytes;

    /** Reads from {@code in}, refusing frames longer than {@code maxFrameBytes} plus the slack. */
    public FrameReader(InputStream in, int maxFrameBytes) {
        this.in = in;
        this.maxFrameBytes = maxFrameBytes;
    }

    /** Sets the largest frame accepted (the server's, from WELCOME). */
    public void setMaxFrameBytes(int value) {
        maxFrameBytes = value;
    }

    /**
     * Returns the next frame's bytes, length prefix included, or null at a clean end of stream.
     *
     * @throws IOException on a read error, an end inside a frame, or a frame over the limit
     */
    public byte[] readRaw() throws IOException {
        byte[] header = new byte[4];
        int got = readFully(header, 0, 4, true);
        if (got == 0) {
            return null;
        }
        long length = ((header[0] & 0xffL) << 24) | ((header[1] & 0xff) << 16) | ((header[2] & 0xff) << 8) | (header[3] & 0xff);
        if (length == 0) {
            throw new IOException("empty frame (length 0) from the server");
        }
        if (length > (long) maxFrameBytes + FRAME_SLACK_BYTES) {
            throw new IOException("frame of " + length + " bytes exceeds the maximum of " + maxFrameBytes + " bytes");
        }
        byte[] frame = new byte[4 + (int) length];
        System.arraycopy(header, 0, frame, 0, 4);
        readFully(frame, 4, (int) length, false);
        return frame;
    }

    /**
     * Returns the next frame, or null at a clean end of stream.
     *
     * @throws IOException as {@link #readRaw()}
     * @throws DecodeException when the frame does not decode
     */
    public Frame read() throws IOException {
        byte[] raw = readRaw();
        return raw == null ? null : FrameCodec.decode(raw);
    }

    private int readFully(byte[] buffer, int offset, int length, boolean endAllowed) throws IOException {
        int done = 0;
        while (done < length) {
            int n = in.read(buffer, offset + done, length - done);
            if (n < 0) {
                if (done == 0 && endAllowed) {
                    return 0;
                }
                throw new EOFException("connection closed in the middle of a frame (" + (done + (endAllowed ? 0 : 4))
                        + " bytes of it read)");
            }
            done += n;
        }
        return done;
    }
}
