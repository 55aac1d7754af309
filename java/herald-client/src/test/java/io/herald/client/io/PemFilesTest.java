package io.herald.client.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.errors.ConnectException;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * PEM reading. The fixtures in src/test/resources/tls/ are throw-away test keys made with
 * openssl: a self-signed P-256 certificate and its PKCS#8 key, an RSA PKCS#8 key, and the EC key
 * as SEC1 and encrypted PKCS#8, the RSA key as PKCS#1.
 */
class PemFilesTest {
    @TempDir
    Path temp;

    static Path fixture(String name) {
        try {
            return Path.of(PemFilesTest.class.getResource("/tls/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static void refused(Executable read, String... parts) {
        ConnectException error = assertThrows(ConnectException.class, read);
        for (String part : parts) {
            assertTrue(error.getMessage().contains(part), error.getMessage());
        }
    }

    @Test
    void readsCertificatesAndPkcs8Keys() {
        assertEquals("CN=test", PemFiles.readCertificates("CA file", fixture("ec-cert.pem")).get(0).getSubjectX500Principal().getName());
        assertEquals("EC", PemFiles.readPrivateKey("key", fixture("ec-key.pem")).getAlgorithm());
        assertEquals("RSA", PemFiles.readPrivateKey("key", fixture("rsa-key.pem")).getAlgorithm());
    }

    @Test
    void otherKeyFormatsAreRefusedNamingFileAndFormat() {
        Path pkcs1 = fixture("rsa-pkcs1-key.pem");
        refused(() -> PemFiles.readPrivateKey("TLS client key", pkcs1), "TLS client key `" + pkcs1 + "`", "PKCS#1", "openssl pkcs8");
        Path sec1 = fixture("ec-sec1-key.pem");
        refused(() -> PemFiles.readPrivateKey("TLS client key", sec1), "`" + sec1 + "`", "SEC1");
        Path encrypted = fixture("ec-encrypted-key.pem");
        refused(() -> PemFiles.readPrivateKey("TLS client key", encrypted), "`" + encrypted + "`", "is encrypted");
    }

    @Test
    void badFilesAreRefusedNamingTheFile() throws IOException {
        Path missing = temp.resolve("missing.pem");
        refused(() -> PemFiles.readCertificates("TLS CA file", missing), "cannot read TLS CA file `" + missing + "`", "no such file");
        Path text = Files.writeString(temp.resolve("text.pem"), "not pem at all\n");
        refused(() -> PemFiles.readCertificates("TLS CA file", text), "`" + text + "` holds no PEM");
        Path keyOnly = fixture("ec-key.pem");
        refused(() -> PemFiles.readCertificates("TLS CA file", keyOnly), "`" + keyOnly + "` holds no PEM certificate");
        Path certOnly = fixture("ec-cert.pem");
        refused(() -> PemFiles.readPrivateKey("TLS client key", certOnly), "`" + certOnly + "` holds no PEM private key");
        Path damaged = Files.writeString(temp.resolve("damaged.pem"),
                "-----BEGIN CERTIFICATE-----\nMIIBnotacertificate\n-----END CERTIFICATE-----\n");
        refused(() -> PemFiles.readCertificates("TLS CA file", damaged), "`" + damaged + "`", "not X.509");
        Path garbageKey = Files.writeString(temp.resolve("garbage-key.pem"),
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        refused(() -> PemFiles.readPrivateKey("TLS client key", garbageKey), "`" + garbageKey + "`", "damaged");
    }

    @Test
    void aKeyThatDoesNotGoWithTheCertificateIsRefused() {
        String url = "herald+tls://a:1?cert=" + fixture("ec-cert.pem") + "&key=" + fixture("rsa-key.pem");
        refused(() -> TlsDialer.of(ServerUrl.parse(url)), "does not go with certificate");
    }

    @Test
    void aPlainUrlHasNoDialerAndACaFileMakesOne() {
        assertEquals(null, TlsDialer.of(ServerUrl.parse("herald://a:1")));
        assertTrue(TlsDialer.of(ServerUrl.parse("herald+tls://a:1?ca=" + fixture("ec-cert.pem"))) != null);
        assertTrue(TlsDialer.of(ServerUrl.parse("herald+tls://a:1")) != null, "the system trust store");
    }
}
