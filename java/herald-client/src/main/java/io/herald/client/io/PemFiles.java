package io.herald.client.io;

import io.herald.client.errors.ConnectException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PEM files a {@code herald+tls://} URL names, with the JDK only: X.509 certificates
 * ({@code CERTIFICATE} blocks, through {@link CertificateFactory}) and unencrypted PKCS#8
 * private keys ({@code PRIVATE KEY} blocks: RSA, EC or Ed25519/Ed448, as {@code herald cert dev}
 * makes them). PKCS#1 ({@code RSA PRIVATE KEY}), SEC1 ({@code EC PRIVATE KEY}) and encrypted
 * ({@code ENCRYPTED PRIVATE KEY}) keys are refused with an error naming the file, the format and
 * the {@code openssl} command that converts them. Every error is a {@link ConnectException}
 * naming the file.
 */
public final class PemFiles {
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    private static final String CONVERT = "convert it with `openssl pkcs8 -topk8 -nocrypt -in OLD -out NEW`";

    private PemFiles() {
    }

    /** One PEM block: its label ({@code CERTIFICATE}) and decoded body. */
    record Block(String label, byte[] body) {
    }

    /**
     * Returns the certificates of a PEM file, in file order (a chain: leaf first).
     *
     * @param what what the file is for, for errors ({@code CA file})
     * @throws ConnectException naming the file when it cannot be read or holds no certificate
     */
    public static List<X509Certificate> readCertificates(String what, Path file) {
        List<X509Certificate> certificates = new ArrayList<>();
        CertificateFactory factory = certificateFactory();
        for (Block block : readBlocks(what, file)) {
            if (!block.label().equals("CERTIFICATE")) {
                continue;
            }
            try {
                certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(block.body())));
            } catch (CertificateException e) {
                throw new ConnectException(what + " `" + file + "` holds a CERTIFICATE that is not X.509: " + e.getMessage(), e);
            }
        }
        if (certificates.isEmpty()) {
            throw new ConnectException(what + " `" + file + "` holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return certificates;
    }

    /**
     * Returns the private key of a PEM file: its first key block, which must be PKCS#8.
     *
     * @throws ConnectException naming the file and the format when it is not an unencrypted
     *                          PKCS#8 RSA, EC or EdDSA key
     */
    public static PrivateKey readPrivateKey(String what, Path file) {
        for (Block block : readBlocks(what, file)) {
            switch (block.label()) {
                case "PRIVATE KEY" -> {
                    return pkcs8(what, file, block.body());
                }
                case "RSA PRIVATE KEY" -> throw new ConnectException(what + " `" + file
                        + "` is a PKCS#1 RSA key (BEGIN RSA PRIVATE KEY); the Java client reads PKCS#8 keys (BEGIN PRIVATE KEY): "
                        + CONVERT);
                case "EC PRIVATE KEY" -> throw new ConnectException(what + " `" + file
                        + "` is a SEC1 EC key (BEGIN EC PRIVATE KEY); the Java client reads PKCS#8 keys (BEGIN PRIVATE KEY): "
                        + CONVERT);
                case "ENCRYPTED PRIVATE KEY" -> throw new ConnectException(what + " `" + file
                        + "` is encrypted (BEGIN ENCRYPTED PRIVATE KEY); herald needs it unencrypted: " + CONVERT);
                default -> {
                    // a certificate beside the key, parameters: look further
                }
            }
        }
        throw new ConnectException(what + " `" + file + "` holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    }

    private static PrivateKey pkcs8(String what, Path file, byte[] der) {
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String algorithm : List.of("EC", "RSA", "Ed25519", "Ed448", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // not this algorithm: try the next
            }
        }
        throw new ConnectException(what + " `" + file + "` holds a PKCS#8 key that is not RSA, EC or EdDSA, or is damaged");
    }

    /** Returns every PEM block of the file, in order. */
    static List<Block> readBlocks(String what, Path file) {
        String text;
        try {
            // Latin-1 decodes any bytes: a binary file is not an encoding error, it just holds no PEM.
            text = Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new ConnectException("cannot read " + what + " `" + file + "`: " + describe(e), e);
        }
        return parseBlocks(what, file, text);
    }

    static List<Block> parseBlocks(String what, Path file, String text) {
        List<Block> blocks = new ArrayList<>();
        Matcher matcher = BLOCK.matcher(text);
        while (matcher.find()) {
            String body = matcher.group(2).replaceAll("\\s", "");
            try {
                blocks.add(new Block(matcher.group(1), Base64.getDecoder().decode(body)));
            } catch (IllegalArgumentException e) {
                throw new ConnectException(what + " `" + file + "` has a " + matcher.group(1) + " block that is not base64: "
                        + e.getMessage(), e);
            }
        }
        if (blocks.isEmpty()) {
            throw new ConnectException(what + " `" + file + "` holds no PEM (expected -----BEGIN …----- blocks)");
        }
        return blocks;
    }

    private static String describe(IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        return e.toString();
    }

    private static CertificateFactory certificateFactory() {
        try {
            return CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException("every JDK has an X.509 certificate factory", e);
        }
    }
}
