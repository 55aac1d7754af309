package io.herald.client.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.errors.UrlException;
import org.junit.jupiter.api.Test;

class ServerUrlTest {
    @Test
    void severalServersWithOptions() {
        ServerUrl url = ServerUrl.parse("herald://a:7401,b,[::1]:7402?name=mountd&token=hrd_x");
        assertEquals(3, url.servers().size());
        assertEquals("a", url.servers().get(0).getHostString());
        assertEquals(7401, url.servers().get(0).getPort());
        assertEquals(ServerUrl.DEFAULT_PORT, url.servers().get(1).getPort());
        assertEquals("::1", url.servers().get(2).getHostString());
        assertEquals("mountd", url.name());
        assertEquals("hrd_x", url.token());
        assertEquals("herald://a:7401,b:7400,[::1]:7402", url.toString(), "never the token");
    }

    @Test
    void theSchemeMayBeLeftOut() {
        ServerUrl url = ServerUrl.parse("127.0.0.1:9000");
        assertEquals(9000, url.servers().get(0).getPort());
        assertNull(url.token());
    }

    static void refused(String url, String part) {
        UrlException error = assertThrows(UrlException.class, () -> ServerUrl.parse(url));
        assertTrue(error.getMessage().contains(part), error.getMessage());
        assertTrue(error.getMessage().contains("`" + url + "`"), "quotes the URL: " + error.getMessage());
    }

    @Test
    void badUrlsAreRefusedNamingTheProblem() {
        refused("http://a:1", "scheme `http`");
        refused("herald://", "no server named");
        refused("herald://a:1,,b:2", "empty server between commas");
        refused("herald://a:99999", "bad port `99999`");
        refused("herald://::1:7400", "needs brackets");
        refused("herald://a:1?colour=red", "unknown option `colour`");
        refused("herald://a:1?ca=ca.pem", "`ca` needs herald+tls://");
        refused("herald+tls://a:1?cert=c.pem", "`cert` without `key`");
        refused("herald+tls://a:1?key=k.pem", "`key` without `cert`");
    }

    @Test
    void tlsUrlsCarryTheirFiles() {
        ServerUrl url = ServerUrl.parse("herald+tls://a:7401,b?ca=/etc/ca.pem&cert=c.pem&key=k.pem&token=t");
        assertTrue(url.tls());
        assertEquals(2, url.servers().size());
        assertEquals("/etc/ca.pem", url.ca());
        assertEquals("c.pem", url.cert());
        assertEquals("k.pem", url.key());
        assertEquals("herald+tls://a:7401,b:7400", url.toString(), "never the options");
        ServerUrl plain = ServerUrl.parse("herald+tls://localhost:7400");
        assertTrue(plain.tls());
        assertNull(plain.ca());
        assertNull(plain.cert());
        assertFalse(ServerUrl.parse("herald://a").tls());
    }
}
