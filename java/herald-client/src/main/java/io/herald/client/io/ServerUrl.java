package io.herald.client.io;

import io.herald.client.errors.UrlException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A server URL, as the Rust and Python clients read it:
 * <pre>
 * herald://host:port[,host2:port2…][?name=N&amp;token=T]
 * herald+tls://host:port[,host2:port2…][?name=N&amp;token=T&amp;ca=FILE&amp;cert=FILE&amp;key=FILE]
 * </pre>
 * The servers are tried in order; after a lost connection, the next ones (failover).
 * {@code herald+tls} reaches every server over TLS, checking its certificate for the host name
 * (or IP address) written in the URL; {@code ca} is a PEM file of the CAs it must chain to (the
 * system's trust store without it); {@code cert} and {@code key} are the client's certificate
 * chain and private key (PEM) for mutual TLS. Option values are taken as written.
 *
 * @param servers the servers, in the URL's order
 * @param name    the client name to announce, or null
 * @param token   the authentication token, or null
 * @param tls     whether the scheme is {@code herald+tls}
 * @param ca      the CA file ({@code ?ca=}), or null for the system's trust store
 * @param cert    the client certificate file ({@code ?cert=}), or null
 * @param key     the client key file ({@code ?key=}), or null
 */
public record ServerUrl(List<InetSocketAddress> servers, String name, String token, boolean tls, String ca, String cert,
        String key) {
    /** The port of a server named without one. */
    public static final int DEFAULT_PORT = 7400;
    /** The URL of a local server on the default port. */
    public static final String DEFAULT_URL = "herald://127.0.0.1:7400";

    /**
     * Reads a URL.
     *
     * @throws UrlException quoting the URL and naming the problem
     */
    public static ServerUrl parse(String url) {
        if (url == null || url.isBlank()) {
            throw new UrlException("bad server URL ``: empty (expected herald://host:port)");
        }
        String rest = url;
        boolean tls = false;
        int scheme = url.indexOf("://");
        if (scheme >= 0) {
            String name = url.substring(0, scheme);
            if (!name.equals("herald") && !name.equals("herald+tls")) {
                throw new UrlException("bad server URL `" + url + "`: scheme `" + name + "` is not herald:// or herald+tls://");
            }
            tls = name.equals("herald+tls");
            rest = url.substring(scheme + 3);
        }
        int question = rest.indexOf('?');
        String hosts = question >= 0 ? rest.substring(0, question) : rest;
        String query = question >= 0 ? rest.substring(question + 1) : "";
        while (hosts.endsWith("/")) {
            hosts = hosts.substring(0, hosts.length() - 1);
        }
        if (hosts.isEmpty()) {
            throw new UrlException("bad server URL `" + url + "`: no server named (expected herald://host:port)");
        }
        List<InetSocketAddress> servers = new ArrayList<>();
        for (String host : hosts.split(",", -1)) {
            try {
                servers.add(parseHost(host));
            } catch (IllegalArgumentException e) {
                throw new UrlException("bad server URL `" + url + "`: " + e.getMessage());
            }
        }
        String name = null;
        String token = null;
        String ca = null;
        String cert = null;
        String key = null;
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String option = eq >= 0 ? pair.substring(0, eq) : pair;
            String value = eq >= 0 ? pair.substring(eq + 1) : "";
            if (!tls && (option.equals("ca") || option.equals("cert") || option.equals("key"))) {
                throw new UrlException("bad server URL `" + url + "`: `" + option + "` needs herald+tls://");
            }
            switch (option) {
                case "name" -> name = value;
                case "token" -> token = value;
                case "ca" -> ca = value;
                case "cert" -> cert = value;
                case "key" -> key = value;
                default -> throw new UrlException("bad server URL `" + url + "`: unknown option `" + option
                        + "` (expected name, token, ca, cert or key)");
            }
        }
        if ((cert == null) != (key == null)) {
            String given = cert != null ? "cert" : "key";
            String missing = cert != null ? "key" : "cert";
            throw new UrlException("bad server URL `" + url + "`: `" + given + "` without `" + missing
                    + "` (mutual TLS needs both)");
        }
        return new ServerUrl(List.copyOf(servers), name, token, tls, ca, cert, key);
    }

    private static InetSocketAddress parseHost(String host) {
        if (host.isEmpty()) {
            throw new IllegalArgumentException("empty server between commas");
        }
        String name;
        String port;
        if (host.startsWith("[") && host.contains("]")) {
            int close = host.indexOf(']');
            name = host.substring(1, close);
            String after = host.substring(close + 1);
            if (after.startsWith(":")) {
                port = after.substring(1);
            } else if (after.isEmpty()) {
                port = null;
            } else {
                throw new IllegalArgumentException("unexpected `" + after + "` after `" + host.substring(0, close + 1) + "`");
            }
        } else if (host.chars().filter(c -> c == ':').count() > 1) {
            throw new IllegalArgumentException("IPv6 address `" + host + "` needs brackets, as in [::1]:7400");
        } else {
            int colon = host.indexOf(':');
            name = colon >= 0 ? host.substring(0, colon) : host;
            port = colon >= 0 ? host.substring(colon + 1) : null;
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("server `" + host + "` has no host name");
        }
        if (port == null) {
            return InetSocketAddress.createUnresolved(name, DEFAULT_PORT);
        }
        if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            throw new IllegalArgumentException("bad port `" + port + "` in `" + host + "`");
        }
        return InetSocketAddress.createUnresolved(name, Integer.parseInt(port));
    }

    /** Returns the scheme and servers, never the options (a token must not reach a log). */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder(tls ? "herald+tls://" : "herald://");
        for (int i = 0; i < servers.size(); i++) {
            InetSocketAddress server = servers.get(i);
            String host = server.getHostString();
            text.append(i > 0 ? "," : "").append(host.contains(":") ? "[" + host + "]" : host).append(':').append(server.getPort());
        }
        return text.toString();
    }
}
