package io.herald.client.wire;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.CodingErrorAction;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Reads the MessagePack Herald writes and accepts (docs/protocol.md), on msgpack-core's
 * unpacker: every integer form whose value fits, float32 widened, strict UTF-8, time only as
 * extension 1 of 8 bytes. Errors are {@link DecodeException}s that say what was expected and
 * at which byte.
 */
public final class MsgReader {
    private static final MessagePack.UnpackerConfig CONFIG = new MessagePack.UnpackerConfig()
            .withActionOnMalformedString(CodingErrorAction.REPORT)
            .withActionOnUnmappableString(CodingErrorAction.REPORT);

    private final MessageUnpacker unpacker;
    private final byte[] bytes;
    private final int offset;
    private final int end;

    /** Reads {@code length} bytes of {@code bytes} from {@code offset}. */
    public MsgReader(byte[] bytes, int offset, int length) {
        this.bytes = bytes;
        this.offset = offset;
        this.end = offset + length;
        this.unpacker = CONFIG.newUnpacker(bytes, offset, length);
    }

    /** Reads all of {@code bytes}. */
    public MsgReader(byte[] bytes) {
        this(bytes, 0, bytes.length);
    }

    /** Returns the position of the next value, from the start of the bytes given. */
    public int position() {
        return offset + (int) unpacker.getTotalReadBytes();
    }

    /** Returns the underlying bytes (to copy a value's bytes between two positions). */
    public byte[] bytes() {
        return bytes;
    }

    /** Returns true when every byte has been read. */
    public boolean atEnd() {
        return position() >= end;
    }

    /** Fails unless every byte has been read: nothing may follow a frame's body. */
    public void expectEnd(String what) {
        if (!atEnd()) {
            throw new DecodeException((end - position()) + " trailing bytes after " + what);
        }
    }

    /** Returns the type of the next value, or fails at the end of the bytes. */
    public ValueType peekType() {
        try {
            if (!unpacker.hasNext()) {
                throw new DecodeException("unexpected end of data at byte " + position());
            }
            return unpacker.getNextFormat().getValueType();
        } catch (IOException e) {
            throw new DecodeException("unreadable data at byte " + position(), e);
        }
    }

    /** Returns true when the next value is nil (without reading it). */
    public boolean peekNil() {
        return peekType() == ValueType.NIL;
    }

    /** Reads a nil, which must be next. */
    public void readNil() {
        expect(ValueType.NIL, "nil");
        try {
            unpacker.unpackNil();
        } catch (IOException | MessagePackException e) {
            throw fail("nil", e);
        }
    }

    /** Reads an unsigned integer; a u64 above 2^63-1 comes back as a negative long. */
    public long readUint(String what) {
        expect(ValueType.INTEGER, what);
        try {
            if (unpacker.getNextFormat() == MessageFormat.UINT64) {
                return unpacker.unpackBigInteger().longValue();
            }
            long value = unpacker.unpackLong();
            if (value < 0) {
                throw new DecodeException(what + " is negative (" + value + ") at byte " + position());
            }
            return value;
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads an unsigned integer that must fit in an int. */
    public int readSmallUint(String what) {
        long value = readUint(what);
        if (value < 0 || value > Integer.MAX_VALUE) {
            throw new DecodeException(what + " " + Long.toUnsignedString(value) + " is too large");
        }
        return (int) value;
    }

    /** Reads a signed integer that fits in i64. */
    public long readInt(String what) {
        expect(ValueType.INTEGER, what);
        try {
            return unpacker.unpackLong();
        } catch (IOException | MessagePackException e) {
            throw fail(what + " (an integer in i64)", e);
        }
    }

    /** Reads any integer: a Long, or a BigInteger for u64 values above 2^63-1. */
    public Object readAnyInt(String what) {
        expect(ValueType.INTEGER, what);
        try {
            if (unpacker.getNextFormat() == MessageFormat.UINT64) {
                BigInteger big = unpacker.unpackBigInteger();
                return big.bitLength() <= 63 ? (Object) big.longValue() : big;
            }
            return unpacker.unpackLong();
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads a string (strict UTF-8). */
    public String readStr(String what) {
        expect(ValueType.STRING, what);
        try {
            return unpacker.unpackString();
        } catch (IOException | MessagePackException e) {
            throw fail(what + " (valid UTF-8)", e);
        }
    }

    /** Reads a string or nil (null). */
    public String readStrOrNil(String what) {
        if (peekNil()) {
            readNil();
            return null;
        }
        return readStr(what);
    }

    /** Reads a boolean. */
    public boolean readBool(String what) {
        expect(ValueType.BOOLEAN, what);
        try {
            return unpacker.unpackBoolean();
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads a float32 or float64. */
    public double readFloat(String what) {
        expect(ValueType.FLOAT, what);
        try {
            return unpacker.unpackDouble();
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads bytes (bin8, bin16, bin32). */
    public byte[] readBin(String what) {
        expect(ValueType.BINARY, what);
        try {
            int length = unpacker.unpackBinaryHeader();
            return unpacker.readPayload(length);
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads a time: extension type 1 of 8 bytes; any other extension is refused, naming it. */
    public long readTime(String what) {
        int at = position();
        expect(ValueType.EXTENSION, what);
        try {
            var header = unpacker.unpackExtensionTypeHeader();
            if (header.getType() != 1 || header.getLength() != 8) {
                throw new DecodeException(what + " holds MessagePack extension type " + header.getType()
                        + " of " + header.getLength() + " bytes at byte " + at
                        + ", which is no Herald value type (extension 1 of 8 bytes is time)");
            }
            byte[] payload = unpacker.readPayload(8);
            long nanos = 0;
            for (byte b : payload) {
                nanos = (nanos << 8) | (b & 0xff);
            }
            return nanos;
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads an array header. */
    public int readArray(String what) {
        expect(ValueType.ARRAY, what + " (an array)");
        try {
            return unpacker.unpackArrayHeader();
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Reads an array header that must have one of the given lengths. */
    public int readArray(String what, int min, int max) {
        int length = readArray(what);
        if (length < min || length > max) {
            String expected = min == max ? String.valueOf(min) : min + ".." + max;
            throw new DecodeException(what + " is an array of " + length + " (expected " + expected + ")");
        }
        return length;
    }

    /** Reads a map header. */
    public int readMap(String what) {
        expect(ValueType.MAP, what + " (a map)");
        try {
            return unpacker.unpackMapHeader();
        } catch (IOException | MessagePackException e) {
            throw fail(what, e);
        }
    }

    /** Skips one value of any type. */
    public void skip() {
        try {
            unpacker.skipValue();
        } catch (IOException | MessagePackException e) {
            throw fail("a value", e);
        }
    }

    private void expect(ValueType type, String what) {
        ValueType actual = peekType();
        if (actual != type) {
            throw new DecodeException("expected " + what + " at byte " + position() + ", found "
                    + actual.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    private DecodeException fail(String what, Exception cause) {
        if (cause instanceof DecodeException decode) {
            return decode;
        }
        return new DecodeException("bad " + what + " at byte " + position() + ": " + cause.getMessage(), cause);
    }
}
