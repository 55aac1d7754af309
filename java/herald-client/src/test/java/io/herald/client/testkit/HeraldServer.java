package io.herald.client.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code herald serve} on free loopback ports with a temporary data directory, for
 * integration tests: the binary comes from the system property {@code herald.binary}.
 * {@link #close(boolean)} stops the process by its PID and removes the directory unless
 * asked to keep it (a failed test keeps it and prints where).
 */
public final class HeraldServer implements AutoCloseable {
    /** The system property naming the server binary. */
    public static final String BINARY_PROPERTY = "herald.binary";

    private final Process process;
    private final Path dataDir;
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private volatile String address;
    private volatile boolean stopped;

    /** Starts a server with default settings. */
    public static HeraldServer start() {
        return start(Map.of());
    }

    /**
     * Starts a server; {@code settings} are server settings by key ({@code archive_backend →
     * none}), given as {@code HERALD_<KEY>} variables.
     */
    public static HeraldServer start(Map<String, String> settings) {
        return start(settings, "127.0.0.1:0");
    }

    /** Starts a server listening on {@code listen} (a loopback {@code host:port}). */
    public static HeraldServer start(Map<String, String> settings, String listen) {
        return start(settings, listen, List.of());
    }

    /**
     * Starts a server speaking TLS with the certificates {@link #devCertificates} made in
     * {@code certs} ({@code server.pem}, {@code server-key.pem}); with {@code clientAuth}
     * ({@code optional} or {@code required}) it also takes client certificates signed by
     * {@code ca.pem}, or null for none.
     */
    public static HeraldServer startTls(Path certs, String clientAuth, String listen) {
        List<String> flags = new ArrayList<>(List.of("--tls-cert", certs.resolve("server.pem").toString(),
                "--tls-key", certs.resolve("server-key.pem").toString()));
        if (clientAuth != null) {
            flags.addAll(List.of("--tls-client-ca", certs.resolve("ca.pem").toString(), "--tls-client-auth", clientAuth));
        }
        return start(Map.of(), listen, flags);
    }

    /**
     * Makes a development CA, server certificate and one client certificate per name in
     * {@code dir} with {@code herald cert dev} (files {@code ca.pem}, {@code server.pem},
     * {@code server-key.pem}, {@code client-NAME.pem}, {@code client-NAME-key.pem}).
     */
    public static Path devCertificates(Path dir, String... clients) {
        List<String> command = new ArrayList<>(List.of(binary(), "cert", "dev", dir.toString()));
        for (String client : clients) {
            command.addAll(List.of("--client", client));
        }
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
            return dir;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted making certificates", e);
        }
    }

    private static String binary() {
        String binary = System.getProperty(BINARY_PROPERTY, "");
        if (binary.isBlank()) {
            throw new IllegalStateException("no server binary: run the integration tests with -D" + BINARY_PROPERTY
                    + "=/path/to/herald (scripts/java-tests.sh does)");
        }
        if (!Files.isExecutable(Path.of(binary))) {
            throw new IllegalStateException(BINARY_PROPERTY + " `" + binary + "` is not an executable file");
        }
        return binary;
    }

    private static HeraldServer start(Map<String, String> settings, String listen, List<String> flags) {
        String binary = binary();
        try {
            return new HeraldServer(binary, settings, listen, flags);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start `" + binary + " serve`: " + e.getMessage(), e);
        }
    }

    private HeraldServer(String binary, Map<String, String> settings, String listen, List<String> flags) throws IOException {
        dataDir = Files.createTempDirectory("herald-java-test-");
        List<String> command = new ArrayList<>(List.of(binary, "serve", "--listen", listen, "--http", "127.0.0.1:0",
                "--data-dir", dataDir.toString(), "--log-level", "warn"));
        command.addAll(flags);
        ProcessBuilder builder = new ProcessBuilder(command);
        // The server reads every HERALD_* variable as a setting: only ours get through.
        builder.environment().keySet().removeIf(key -> key.startsWith("HERALD_"));
        settings.forEach((key, value) -> builder.environment().put("HERALD_" + key.toUpperCase(), value));
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        process = builder.start();
        CountDownLatch found = new CountDownLatch(1);
        Thread reader = new Thread(() -> readStderr(found), "herald-server-stderr");
        reader.setDaemon(true);
        reader.start();
        boolean ok;
        try {
            ok = found.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ok = false;
        }
        if (!ok || address == null) {
            close(false);
            throw new IllegalStateException("herald serve printed no address:\n" + String.join("\n", lines));
        }
    }

    private void readStderr(CountDownLatch found) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(line);
                int at = line.indexOf("herald serving on ");
                if (at >= 0 && address == null) {
                    address = line.substring(at + "herald serving on ".length()).trim().split("\\s+")[0];
                    found.countDown();
                }
            }
        } catch (IOException e) {
            // the process ended
        }
        found.countDown();
    }

    /** Returns {@code host:port} of the native protocol. */
    public String address() {
        return address;
    }

    /** Returns {@code herald://host:port}. */
    public String url() {
        return "herald://" + address;
    }

    /** Returns {@code herald+tls://host:port} with {@code query} (such as {@code ca=FILE}) after a {@code ?}. */
    public String tlsUrl(String query) {
        return "herald+tls://" + address + (query.isEmpty() ? "" : "?" + query);
    }

    /** Returns the process id. */
    public long pid() {
        return process.pid();
    }

    /** Returns the data directory. */
    public Path dataDir() {
        return dataDir;
    }

    /** Returns what the server wrote on stderr so far. */
    public List<String> output() {
        return List.copyOf(lines);
    }

    /** Stops the server at once (SIGKILL to its PID), as a crash would; keeps the directory. */
    public void kill() {
        ProcessHandle.of(process.pid()).ifPresent(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stopped = true;
    }

    /**
     * Freezes the server (SIGSTOP to its PID): it reads, routes and acknowledges nothing
     * more, while its connections stay open. {@link #kill()} ends it.
     */
    public void pause() {
        try {
            Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(process.pid())).inheritIO().start();
            if (stop.waitFor() != 0) {
                throw new IllegalStateException("kill -STOP " + process.pid() + " failed");
            }
            awaitStopped();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -STOP: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until the kernel has stopped the process: {@code kill -STOP} returns before it
     * has, and a server still running for a moment answers what the test meant it to miss.
     */
    private void awaitStopped() throws InterruptedException {
        Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            String line;
            try {
                line = Files.readString(stat, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return; // the process is gone
            }
            // "pid (name) STATE …": the state follows the name's closing parenthesis.
            char state = line.charAt(line.lastIndexOf(')') + 2);
            if (state == 'T' || state == 't') {
                return;
            }
            Thread.sleep(1);
        }
        throw new IllegalStateException("server " + process.pid() + " did not stop within 5 s of kill -STOP");
    }

    /** Stops the server (by its PID) and removes its directory unless {@code keep}. */
    public void close(boolean keep) {
        if (!stopped) {
            kill();
        }
        if (keep) {
            System.err.println("kept the data directory of the failed test's server: " + dataDir);
            return;
        }
        try (Stream<Path> paths = Files.walk(dataDir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not remove " + dataDir + ": " + e.getMessage());
        }
    }

    /** Stops the server and removes its directory. */
    @Override
    public void close() {
        close(false);
    }

    /** Returns a {@code herald://} URL of a loopback port nothing listens on. */
    public static String closedPortUrl() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return "herald://127.0.0.1:" + socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
