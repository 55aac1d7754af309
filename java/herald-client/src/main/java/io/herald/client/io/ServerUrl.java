package io.herald.client.io;

import io.herald.client.errors.UrlException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A server URL, as the Rust and Python clients read it:
 * {@code herald://host:port[,host2:port2…][?name=N&token=T]}. The servers are tried in order;
 * after a lost connection, the next ones (failover).
 *
 * @param servers the servers, in the URL's order
 * @param name    the client name to announce, or null
 * @param token   the authentication token, or null
 */
public record ServerUrl(List<InetSocketAddress> servers, String name, String token) {
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
        int scheme = url.indexOf("://");
        if (scheme >= 0) {
            String name = url.substring(0, scheme);
            if (name.equals("herald+tls")) {
                throw new UrlException("bad server URL `" + url + "`: herald+tls:// is not supported by the Java client yet "
                        + "(connect to a plain-TCP port with herald://)");
            }
            if (!name.equals("herald")) {
                throw new UrlException("bad server URL `" + url + "`: scheme `" + name + "` is not herald://");
            }
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
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = eq >= 0 ? pair.substring(0, eq) : pair;
            String value = eq >= 0 ? pair.substring(eq + 1) : "";
            switch (key) {
                case "name" -> name = value;
                case "token" -> token = value;
                default -> throw new UrlException("bad server URL `" + url + "`: unknown option `" + key
                        + "` (expected name or token)");
            }
        }
        return new ServerUrl(List.copyOf(servers), name, token);
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
        StringBuilder text = new StringBuilder("herald://");
        for (int i = 0; i < servers.size(); i++) {
            InetSocketAddress server = servers.get(i);
            String host = server.getHostString();
            text.append(i > 0 ? "," : "").append(host.contains(":") ? "[" + host + "]" : host).append(':').append(server.getPort());
        }
        return text.toString();
    }
}
