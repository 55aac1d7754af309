package io.herald.client.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ConnectionOptionsTest {
    @Test
    void aBadValueIsNamedWithItsValueAndTheTokenIsNeverShown() {
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> ConnectionOptions.defaults().withIdentity("x", "hrd_secret").withReconnectTimeoutMs(-1));
        assertEquals("bad connection option reconnectTimeoutMs = -1: must be 0 (no failover) or more", bad.getMessage());
        assertFalse(bad.getMessage().contains("hrd_secret"));
    }
}
