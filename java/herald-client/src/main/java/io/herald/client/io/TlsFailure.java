package io.herald.client.io;

import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import javax.net.ssl.SSLException;

/**
 * What a failed TLS handshake means, in the words of docs/security.md: the JDK's message (with
 * the server's alert when it sent one) and the likely cause. With TLS 1.3 the server checks a
 * client certificate after the client has finished its side of the handshake, so its refusal
 * arrives with the first read (the WELCOME): {@link Link} describes that failure here too.
 */
final class TlsFailure {
    static final String UNTRUSTED = "the server's certificate is not signed by a CA this client trusts: give its CA as ?ca=FILE";
    static final String NOT_TLS = "does the server speak TLS on this port? a plain server is reached with herald://";
    static final String CLIENT_CERT_REQUIRED = "the server requires a client certificate: give ?cert=FILE&key=FILE";
    static final String CLOSED_AFTER_HANDSHAKE = "the server closed the connection: does it require a client certificate "
            + "(?cert=FILE&key=FILE), or refuse this one?";
    static final int ALERT_WAIT_MS = 1_000;
    static final String CLIENT_CERT_REFUSED = "the server refused this client's certificate: is it signed by the server's client CA?";
    static final String CLIENT_CERT_PROBABLY_REFUSED = "the server most likely refused this client's certificate: is it signed by "
            + "the server's client CA?";

    private TlsFailure() {
    }

    /** The server closed the connection as this client sent its certificate, its alert lost. */
    static final class CertificateRefused extends SSLException {
        private static final long serialVersionUID = 1L;

        CertificateRefused(IOException cause) {
            super("the server closed the connection as this client sent its certificate (" + cause.getMessage() + ")", cause);
        }
    }

    /** Returns {@code TLS handshake with herald server WHERE failed: REASON (CAUSE)}. */
    static String describe(String where, String host, IOException error) {
        String message = "TLS handshake with herald server " + where + " failed: " + reasons(error);
        String cause = likelyCause(host, error);
        return cause == null ? message : message + " (" + cause + ")";
    }

    /**
     * Describes {@code error}, met on a TLS socket after its handshake (sending HELLO, reading
     * WELCOME). A TLS 1.3 server refuses a client certificate (or its absence) after the client
     * has finished its side of the handshake: its alert may be waiting to be read when our write
     * fails on the closed connection, so this reads once (briefly) to find it.
     */
    static String afterHandshake(String where, String host, Socket tls, IOException error) {
        IOException reason = error instanceof SSLException ? error : pendingAlert(tls, error);
        if (reason instanceof SSLException) {
            return describe(where, host, reason);
        }
        return where + ": " + error.getMessage() + " right after the TLS handshake (" + CLOSED_AFTER_HANDSHAKE + ")";
    }

    /**
     * Returns the server's alert when one waits to be read on {@code tls} after {@code error}
     * (a write that failed on a connection the server closed, its alert sent before), else
     * {@code error}.
     */
    static IOException pendingAlert(Socket tls, IOException error) {
        try {
            tls.setSoTimeout(ALERT_WAIT_MS);
            tls.getInputStream().read();
        } catch (SSLException alert) {
            return alert;
        } catch (IOException ignored) {
            // no alert to be read: the first error stands
        }
        return error;
    }

    private static String likelyCause(String host, IOException error) {
        String text = reasons(error);
        if (has(error, CertificateExpiredException.class)) {
            return "the server's certificate has expired";
        }
        if (has(error, CertificateNotYetValidException.class)) {
            return "the server's certificate is not valid yet: is this machine's clock right?";
        }
        if (text.contains("No subject alternative") || text.contains("No name matching")) {
            return "name mismatch: the server's certificate is not valid for `" + host
                    + "`; connect with a name or address it holds";
        }
        if (has(error, CertPathBuilderException.class) || has(error, CertPathValidatorException.class)
                || text.contains("PKIX path")) {
            return UNTRUSTED;
        }
        if (text.contains("certificate_required")) {
            return CLIENT_CERT_REQUIRED;
        }
        if (text.contains("bad_certificate") || text.contains("unknown_ca")) {
            return CLIENT_CERT_REFUSED;
        }
        if (has(error, CertificateRefused.class)) {
            return CLIENT_CERT_PROBABLY_REFUSED;
        }
        if (text.contains("Unsupported or unrecognized SSL message") || text.contains("Remote host terminated")
                || has(error, EOFException.class)) {
            return NOT_TLS;
        }
        return null;
    }

    /** Returns the messages of the error and its causes, without repeats, joined by ": ". */
    private static String reasons(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable at = error; at != null; at = at.getCause() == at ? null : at.getCause()) {
            String message = at.getMessage() == null ? at.getClass().getSimpleName() : at.getMessage();
            if (text.indexOf(message) < 0) {
                text.append(text.length() > 0 ? ": " : "").append(message);
            }
        }
        return text.toString();
    }

    private static boolean has(Throwable error, Class<? extends Throwable> kind) {
        for (Throwable at = error; at != null; at = at.getCause() == at ? null : at.getCause()) {
            if (kind.isInstance(at)) {
                return true;
            }
        }
        return false;
    }
}
