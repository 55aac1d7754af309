package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.errors.ConnectException;
import io.herald.client.testkit.HeraldServer;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Priority;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** herald+tls:// against a real TLS server with certificates from {@code herald cert dev}. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TlsIT {
    static final Duration WAIT = Duration.ofSeconds(10);
    static final String LOOPBACK = "127.0.0.1:0";

    @TempDir
    static Path temp;
    static Path certs;
    static Path otherCerts;

    @BeforeAll
    static void makeCertificates() {
        certs = HeraldServer.devCertificates(temp.resolve("certs"), "ops");
        otherCerts = HeraldServer.devCertificates(temp.resolve("other"), "ops");
    }

    static String ca(Path dir) {
        return "ca=" + dir.resolve("ca.pem");
    }

    static void roundTrip(HeraldClient client, String subject) {
        try (Subscription subscription = client.subscribe(Filter.subject(subject))) {
            client.log(Priority.INFO, subject, "over tls");
            client.flush(WAIT);
            SubscriptionEvent.Delivered delivered = subscription.next(WAIT);
            assertNotNull(delivered, "nothing delivered over TLS");
            assertEquals("over tls", delivered.record().text());
        }
    }

    static ConnectException refused(String url) {
        return assertThrows(ConnectException.class, () -> HeraldClient.connect(url).close());
    }

    @Test
    void publishesAndSubscribesOverTls() {
        try (HeraldServer server = HeraldServer.startTls(certs, null, LOOPBACK);
                HeraldClient client = HeraldClient.connect(server.tlsUrl(ca(certs) + "&name=tls-it"))) {
            roundTrip(client, "IT.tls.ip");
            String port = server.address().substring(server.address().lastIndexOf(':') + 1);
            try (HeraldClient byName = HeraldClient.connect("herald+tls://localhost:" + port + "?" + ca(certs))) {
                roundTrip(byName, "IT.tls.name");
            }
        }
    }

    @Test
    void aServerSignedByAnotherCaIsRefusedSayingWhy() {
        try (HeraldServer server = HeraldServer.startTls(certs, null, LOOPBACK)) {
            ConnectException wrongCa = refused(server.tlsUrl(ca(otherCerts)));
            assertTrue(wrongCa.getMessage().contains("not signed by a CA this client trusts"), wrongCa.getMessage());
            assertTrue(wrongCa.getMessage().contains(server.address()), wrongCa.getMessage());
            ConnectException systemStore = refused(server.tlsUrl(""));
            assertTrue(systemStore.getMessage().contains("give its CA as ?ca=FILE"), systemStore.getMessage());
        }
    }

    @Test
    void aCertificateForAnotherNameIsRefused() {
        // 127.0.0.2 is loopback on Linux, but not among the addresses of the dev certificate.
        try (HeraldServer server = HeraldServer.startTls(certs, null, "127.0.0.2:0")) {
            ConnectException error = refused(server.tlsUrl(ca(certs)));
            assertTrue(error.getMessage().contains("name mismatch"), error.getMessage());
            assertTrue(error.getMessage().contains("`127.0.0.2`"), error.getMessage());
        }
    }

    @Test
    void mutualTlsWithAClientCertificate() {
        try (HeraldServer server = HeraldServer.startTls(certs, "required", LOOPBACK)) {
            String identity = "&cert=" + certs.resolve("client-ops.pem") + "&key=" + certs.resolve("client-ops-key.pem");
            try (HeraldClient client = HeraldClient.connect(server.tlsUrl(ca(certs) + identity))) {
                roundTrip(client, "IT.tls.mutual");
            }
            ConnectException without = refused(server.tlsUrl(ca(certs)));
            assertTrue(without.getMessage().matches("(?s).*requires? a client certificate.*"), without.getMessage());
            // A certificate of a CA the server does not trust is offered all the same, and refused.
            String stranger = "&cert=" + otherCerts.resolve("client-ops.pem") + "&key=" + otherCerts.resolve("client-ops-key.pem");
            ConnectException untrusted = refused(server.tlsUrl(ca(certs) + stranger));
            // The server's alert when it can be read, else "most likely refused": both say it.
            assertTrue(untrusted.getMessage().contains("refused this client's certificate"), untrusted.getMessage());
        }
    }

    @Test
    void aKeyOfAnotherCertificateIsNamed() {
        Path cert = certs.resolve("client-ops.pem");
        Path key = otherCerts.resolve("client-ops-key.pem");
        ConnectException error = refused("herald+tls://127.0.0.1:1?" + ca(certs) + "&cert=" + cert + "&key=" + key);
        assertTrue(error.getMessage().contains("TLS client key `" + key + "` does not go with certificate `" + cert + "`"),
                error.getMessage());
    }

    @Test
    void tlsAndPlainOnTheWrongPortsSaySo() {
        try (HeraldServer plain = HeraldServer.start(Map.of()); HeraldServer tls = HeraldServer.startTls(certs, null, LOOPBACK)) {
            ConnectException tlsToPlain = refused("herald+tls://" + plain.address() + "?" + ca(certs));
            assertTrue(tlsToPlain.getMessage().contains("does the server speak TLS on this port?"), tlsToPlain.getMessage());
            ConnectException plainToTls = refused(tls.url());
            assertTrue(plainToTls.getMessage().contains("herald+tls://"), plainToTls.getMessage());
        }
    }

    @Test
    void failsOverBetweenTwoTlsServers() {
        try (HeraldServer first = HeraldServer.startTls(certs, null, LOOPBACK);
                HeraldServer second = HeraldServer.startTls(certs, null, LOOPBACK);
                HeraldClient client = HeraldClient.connect("herald+tls://" + first.address() + "," + second.address() + "?"
                        + ca(certs));
                Subscription subscription = client.subscribe(Filter.subject("IT.tls.fo"))) {
            assertEquals(first.address(), client.address());
            first.kill();
            SubscriptionEvent event = subscription.nextEvent(WAIT);
            assertTrue(event instanceof SubscriptionEvent.Interrupted, "expected an interruption, got " + event);
            client.log(Priority.INFO, "IT.tls.fo", "after");
            client.flush(WAIT);
            SubscriptionEvent.Delivered after = subscription.next(WAIT);
            assertNotNull(after, "the subscription was not made again on the second TLS server");
            assertEquals("after", after.record().text());
            assertEquals(second.address(), client.address());
        }
    }

    @Test
    void aMissingCaFileIsNamed() {
        Path missing = temp.resolve("no-such-ca.pem");
        ConnectException error = refused("herald+tls://127.0.0.1:1?ca=" + missing);
        assertTrue(error.getMessage().contains("TLS CA file `" + missing + "`"), error.getMessage());
    }
}
