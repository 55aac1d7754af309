package io.herald.client.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ValuesTest {
    static String hex(Object value) {
        MsgWriter writer = new MsgWriter();
        Values.encodeValue(writer, value, "v");
        return HexFormat.of().formatHex(writer.toByteArray());
    }

    @Test
    void integersTakeTheCanonicalForms() {
        assertEquals("7f", hex(127));
        assertEquals("cc80", hex(128L));
        assertEquals("fb", hex(-5));
        assertEquals("d2fffeee90", hex(-70000L));
        assertEquals("cfffffffffffffffff", hex(new BigInteger("18446744073709551615")));
        assertEquals("cb400c000000000000", hex(3.5f));
    }

    @Test
    void whatIsNoValueIsRefusedNamingTheField() {
        Map<String, Object> fields = new HashMap<>();
        fields.put("gone", null);
        IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                () -> Values.encodeFields(new MsgWriter(), fields));
        assertTrue(nul.getMessage().contains("`gone` is null"), nul.getMessage());
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> hex(BigInteger.ONE.shiftLeft(64)));
        assertTrue(big.getMessage().contains("outside -2^63..2^64-1"), big.getMessage());
        IllegalArgumentException nested = assertThrows(IllegalArgumentException.class,
                () -> hex(Map.of("a", List.of(new Object()))));
        assertTrue(nested.getMessage().contains("`v.a[0]`"), nested.getMessage());
    }

    @Test
    void nilAndUnknownExtensionsAreRefusedWhenReading() {
        DecodeException nil = assertThrows(DecodeException.class,
                () -> Values.decodeFields(new MsgReader(HexFormat.of().parseHex("81a178c0"))));
        assertTrue(nil.getMessage().contains("nil"), nil.getMessage());
        DecodeException ext = assertThrows(DecodeException.class,
                () -> Values.decodeFields(new MsgReader(HexFormat.of().parseHex("81a7636f756e746572d7050000000000000001"))));
        assertTrue(ext.getMessage().contains("extension type 5"), ext.getMessage());
        DecodeException twice = assertThrows(DecodeException.class,
                () -> Values.decodeFields(new MsgReader(HexFormat.of().parseHex("82a17801a17802"))));
        assertTrue(twice.getMessage().contains("`x` appears twice"), twice.getMessage());
    }

    @Test
    void recordsRefuseWhatTheServerWould() {
        assertThrows(IllegalArgumentException.class, () -> Priority.fromValue(7));
        IllegalArgumentException priority = assertThrows(IllegalArgumentException.class, () -> Priority.parse("WARN"));
        assertTrue(priority.getMessage().contains("`WARN`"), priority.getMessage());
        DecodeException missing = assertThrows(DecodeException.class,
                () -> Record.decode(new MsgReader(HexFormat.of().parseHex("82000003cf1797" + "9cfe362a0000"))));
        assertTrue(missing.getMessage().contains("missing required field `subject`"), missing.getMessage());
        IllegalArgumentException control = assertThrows(IllegalArgumentException.class,
                () -> Record.builder(Kind.LOG, "a\nb").build());
        assertTrue(control.getMessage().contains("control character"), control.getMessage());
    }
}
