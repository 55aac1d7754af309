package io.herald.client.wire;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Writes MessagePack in Herald's canonical forms (docs/protocol.md, MessagePack as Herald uses
 * it) on msgpack-core's packer: shortest integers, non-negative values unsigned, floats
 * always float64, time as extension 1. Not thread-safe; reuse it with {@link #clear()}.
 */
public final class MsgWriter {
    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    private final MessageBufferPacker packer;

    /** Makes an empty writer. */
    public MsgWriter() {
        packer = MessagePack.DEFAULT_PACKER_CONFIG.withBufferSize(512).newBufferPacker();
    }

    /** Writes an unsigned integer; a negative {@code long} is read as its u64 value. */
    public MsgWriter uint(long unsigned) {
        try {
            if (unsigned >= 0) {
                packer.packLong(unsigned);
            } else {
                packer.packBigInteger(BigInteger.valueOf(unsigned).add(TWO_TO_64));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes a signed integer (non-negative values in the unsigned forms). */
    public MsgWriter sint(long value) {
        try {
            packer.packLong(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes a big integer, which must lie in -2^63..2^64-1. */
    public MsgWriter bigint(BigInteger value) {
        if (value.bitLength() <= 63) {
            return sint(value.longValue());
        }
        if (value.signum() < 0 || value.bitLength() > 64) {
            throw new IllegalArgumentException("integer " + value + " is outside -2^63..2^64-1");
        }
        return uint(value.longValue());
    }

    /** Writes a string (UTF-8; fixstr, str8, str16 or str32). */
    public MsgWriter str(String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        try {
            packer.packRawStringHeader(bytes.length);
            packer.writePayload(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes bytes (bin8, bin16 or bin32). */
    public MsgWriter bin(byte[] value) {
        try {
            packer.packBinaryHeader(value.length);
            packer.writePayload(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes a boolean. */
    public MsgWriter bool(boolean value) {
        try {
            packer.packBoolean(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes a float64 (Herald never writes float32). */
    public MsgWriter float64(double value) {
        try {
            packer.packDouble(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes a time: fixext 8 of extension type 1, big-endian i64 nanoseconds. */
    public MsgWriter time(long nanos) {
        try {
            packer.packExtensionTypeHeader((byte) 1, 8);
            byte[] payload = new byte[8];
            for (int i = 7; i >= 0; i--) {
                payload[i] = (byte) nanos;
                nanos >>>= 8;
            }
            packer.writePayload(payload);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes nil; only where Herald's grammar has "or nil" (never as a value). */
    public MsgWriter nil() {
        try {
            packer.packNil();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes an array header. */
    public MsgWriter array(int length) {
        try {
            packer.packArrayHeader(length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes a map header. */
    public MsgWriter map(int length) {
        try {
            packer.packMapHeader(length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Appends bytes that already are MessagePack (an encoded record). */
    public MsgWriter raw(byte[] bytes, int offset, int length) {
        try {
            packer.writePayload(bytes, offset, length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Appends bytes that already are MessagePack. */
    public MsgWriter raw(byte[] bytes) {
        return raw(bytes, 0, bytes.length);
    }

    /** Returns how many bytes were written since the last clear. */
    public long size() {
        return packer.getTotalWrittenBytes();
    }

    /** Returns a copy of the bytes written. */
    public byte[] toByteArray() {
        return packer.toByteArray();
    }

    /** Forgets the bytes written, keeping the buffer. */
    public void clear() {
        packer.clear();
    }
}
