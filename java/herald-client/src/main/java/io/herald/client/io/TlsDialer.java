package io.herald.client.io;

import io.herald.client.errors.ConnectException;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * TLS over a connected TCP socket, as a {@code herald+tls://} URL asks for: made once at
 * connect from the URL (its files read then, so a bad file fails the connect, not each
 * failover), and used by {@link Link} for every server of the URL. The server's certificate
 * must chain to the URL's {@code ca} (only those CAs: not the system's as well) or, without
 * it, to the system's trust store, and must be valid for the host name or address written in
 * the URL (HTTPS rules). TLS 1.2 and 1.3, no ALPN, as the server.
 */
public final class TlsDialer {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final SSLContext context;
    /** Whether this side presents a client certificate. */
    private final boolean presentsCertificate;

    private TlsDialer(SSLContext context, boolean presentsCertificate) {
        this.context = context;
        this.presentsCertificate = presentsCertificate;
    }

    /**
     * Returns the dialer of a {@code herald+tls://} URL, or null for a plain {@code herald://} one.
     *
     * @throws ConnectException naming a file that cannot be read or is not what it should be
     */
    public static TlsDialer of(ServerUrl url) {
        if (!url.tls()) {
            return null;
        }
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers(url), trustManagers(url), null);
            return new TlsDialer(context, url.cert() != null);
        } catch (GeneralSecurityException e) {
            throw new ConnectException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    private static TrustManager[] trustManagers(ServerUrl url) throws GeneralSecurityException {
        if (url.ca() == null) {
            return null; // the JDK's default: the system's trust store (cacerts)
        }
        List<X509Certificate> cas = PemFiles.readCertificates("TLS CA file", Path.of(url.ca()));
        KeyStore store = emptyStore();
        for (int i = 0; i < cas.size(); i++) {
            store.setCertificateEntry("ca-" + i, cas.get(i));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        return factory.getTrustManagers();
    }

    private static KeyManager[] keyManagers(ServerUrl url) throws GeneralSecurityException {
        if (url.cert() == null || url.key() == null) {
            return null;
        }
        List<X509Certificate> chain = PemFiles.readCertificates("TLS client certificate", Path.of(url.cert()));
        PrivateKey key = PemFiles.readPrivateKey("TLS client key", Path.of(url.key()));
        if (!chain.get(0).getPublicKey().getAlgorithm().equals(key.getAlgorithm())) {
            throw new ConnectException("TLS client key `" + url.key() + "` (" + key.getAlgorithm() + ") does not go with certificate `"
                    + url.cert() + "` (" + chain.get(0).getPublicKey().getAlgorithm() + ")");
        }
        if (!signsFor(key, chain.get(0))) {
            throw new ConnectException("TLS client key `" + url.key() + "` does not go with certificate `" + url.cert()
                    + "`: a signature made with the key does not verify with the certificate's public key");
        }
        return new KeyManager[] {new OneCertificate(chain.toArray(new X509Certificate[0]), key)};
    }

    /**
     * Returns whether {@code key} is the private half of {@code certificate}'s public key: a
     * signature made with it verifies. True for an algorithm this check does not know.
     */
    private static boolean signsFor(PrivateKey key, X509Certificate certificate) throws GeneralSecurityException {
        String algorithm = switch (key.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            case "EdDSA", "Ed25519", "Ed448" -> "EdDSA";
            default -> null;
        };
        if (algorithm == null) {
            return true;
        }
        byte[] probe = "herald client key check".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Signature signer = Signature.getInstance(algorithm);
        signer.initSign(key);
        signer.update(probe);
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(certificate.getPublicKey());
        verifier.update(probe);
        return verifier.verify(signature);
    }

    /**
     * The client certificate of the URL, offered whatever CAs the server names in its request:
     * the JDK's own key manager offers none whose issuer the server did not name, so a
     * certificate from a CA the server does not trust went unsent and the server said "no
     * certificate" rather than "unknown CA". Offered, the server's refusal names the problem.
     */
    private static final class OneCertificate extends X509ExtendedKeyManager {
        private static final String ALIAS = "herald-client";
        private final X509Certificate[] chain;
        private final PrivateKey key;

        OneCertificate(X509Certificate[] chain, PrivateKey key) {
            this.chain = chain;
            this.key = key;
        }

        private String alias(String[] keyTypes) {
            if (keyTypes == null) {
                return ALIAS;
            }
            for (String keyType : keyTypes) {
                if (keyType.equals(key.getAlgorithm()) || keyType.equals("EdDSA") && key.getAlgorithm().startsWith("Ed")) {
                    return ALIAS;
                }
            }
            return null;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return alias(new String[] {keyType}) == null ? null : new String[] {ALIAS};
        }

        @Override
        public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
            return alias(keyTypes);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
            return alias(keyTypes);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return ALIAS.equals(alias) ? chain.clone() : null;
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return ALIAS.equals(alias) ? key : null;
        }
    }

    private static KeyStore emptyStore() throws GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try {
            store.load(null, null);
        } catch (IOException e) {
            throw new IllegalStateException("an empty in-memory key store cannot fail to load", e);
        }
        return store;
    }

    /**
     * Shakes hands over the connected {@code socket} with server {@code host} (the name or
     * address its certificate must hold), within the socket's read timeout. Closing the
     * returned socket closes {@code socket}.
     *
     * @throws IOException as the JDK reports it; {@link TlsFailure#describe} says what it means
     */
    SSLSocket handshake(Socket socket, String host, int port) throws IOException {
        SSLSocket tls = (SSLSocket) context.getSocketFactory().createSocket(socket, host, port, true);
        SSLParameters parameters = tls.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS"); // the host name (or IP address) check
        parameters.setProtocols(PROTOCOLS);
        tls.setSSLParameters(parameters);
        tls.setUseClientMode(true);
        try {
            tls.startHandshake();
        } catch (SSLException e) {
            throw e;
        } catch (IOException e) {
            IOException reason = TlsFailure.pendingAlert(tls, e);
            if (reason == e && presentsCertificate && e instanceof java.net.SocketException) {
                // The connection broke (reset, broken pipe; not a timeout) as this side sent
                // its certificate, and the alert that said why was lost with it: most likely
                // the server refused the certificate.
                throw new TlsFailure.CertificateRefused(e);
            }
            throw reason;
        }
        return tls;
    }
}
