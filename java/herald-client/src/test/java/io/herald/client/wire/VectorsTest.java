package io.herald.client.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.herald.client.io.FrameReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every case of testdata/vectors decodes to its meaning and encodes back byte for byte. */
class VectorsTest {
    static final File VECTORS = findVectors();
    static final Set<String> UNSORTED_ON_THE_WIRE = Set.of("info/info_update", "info/info_reply", "info/info_reply_part");

    static File findVectors() {
        File dir = new File(System.getProperty("user.dir")).getAbsoluteFile();
        while (dir != null && !new File(dir, "testdata/vectors").isDirectory()) {
            dir = dir.getParentFile();
        }
        if (dir == null) {
            throw new IllegalStateException("no testdata/vectors above " + System.getProperty("user.dir"));
        }
        return new File(dir, "testdata/vectors");
    }

    @SuppressWarnings("unchecked")
    static Stream<Arguments> cases() throws IOException {
        ObjectMapper json = new ObjectMapper();
        File[] files = VECTORS.listFiles((d, n) -> n.endsWith(".json"));
        Arrays.sort(files);
        List<Arguments> all = new ArrayList<>();
        for (File file : files) {
            Map<String, Object> doc = json.readValue(file, Map.class);
            String stem = file.getName().replace(".json", "");
            for (Object c : (List<Object>) doc.get("cases")) {
                Map<String, Object> kase = (Map<String, Object>) c;
                all.add(Arguments.of(stem + "/" + kase.get("name"), kase.get("hex"), kase.get("frame")));
            }
        }
        return all.stream();
    }

    /** Integers as Long (BigInteger above 2^63-1), so that equals compares values. */
    static Object normal(Object v) {
        if (v instanceof Integer i) {
            return (long) i;
        }
        if (v instanceof BigInteger b && b.bitLength() <= 63) {
            return b.longValue();
        }
        if (v instanceof Map<?, ?> m) {
            Map<Object, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(k, normal(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(x -> out.add(normal(x)));
            return out;
        }
        return v;
    }

    @Test
    void vectorsFound() throws IOException {
        assertTrue(cases().count() >= 48, "expected the shared vectors in " + VECTORS);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decodeMatchesMeaning(String name, String hex, Map<String, Object> meaning) {
        Frame frame = FrameCodec.decode(HexFormat.of().parseHex(hex));
        assertEquals(normal(meaning), normal(Meaning.of(frame)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void reencodeIsByteExact(String name, String hex, Map<String, Object> meaning) {
        byte[] bytes = HexFormat.of().parseHex(hex);
        assertEquals(hex, HexFormat.of().formatHex(FrameCodec.encode(FrameCodec.decode(bytes))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void buildFromMeaningIsByteExact(String name, String hex, Map<String, Object> meaning) {
        byte[] built = FrameCodec.encode(FromMeaning.frame(meaning));
        if (UNSORTED_ON_THE_WIRE.contains(name)) {
            assertNotEquals(hex, HexFormat.of().formatHex(built), "now sorted on the wire: drop it from the list");
            assertEquals(hex.length() / 2, built.length);
            assertEquals(normal(meaning), normal(Meaning.of(FrameCodec.decode(built))));
        } else {
            assertEquals(hex, HexFormat.of().formatHex(built));
        }
    }

    /** Hands out at most {@code step} bytes per read, so every frame arrives cut. */
    static InputStream trickle(byte[] data, int step) {
        return new ByteArrayInputStream(data) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, step));
            }
        };
    }

    @Test
    void readerTakesEveryVectorCutAnywhere() throws IOException {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        List<String> hexes = new ArrayList<>();
        cases().forEach(a -> hexes.add((String) a.get()[1]));
        for (String hex : hexes) {
            stream.write(HexFormat.of().parseHex(hex));
        }
        for (int step : new int[] {1, 3, 7, 64}) {
            FrameReader reader = new FrameReader(trickle(stream.toByteArray(), step), FrameCodec.DEFAULT_MAX_FRAME_BYTES);
            for (String hex : hexes) {
                assertArrayEquals(HexFormat.of().parseHex(hex), reader.readRaw());
            }
            assertEquals(null, reader.readRaw(), "a clean end of stream is null");
        }
    }
}
