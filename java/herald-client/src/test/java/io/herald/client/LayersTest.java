package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The layers import one way: errors ← wire ← io ← connection ← the API package. */
class LayersTest {
    static final List<String> ORDER = List.of("errors", "wire", "io", "connection", "");

    static int rank(String pkg) {
        return ORDER.indexOf(pkg);
    }

    @Test
    void noPackageImportsOneAboveIt() throws IOException {
        Path root = Path.of("src/main/java/io/herald/client");
        List<String> violations = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = root.relativize(file.getParent()).toString();
                for (String line : Files.readAllLines(file)) {
                    String used = imported(line);
                    if (used != null && rank(used) > rank(pkg)) {
                        violations.add(file + ": " + line.trim());
                    }
                }
            }
        }
        assertEquals(List.of(), violations);
    }

    @Test
    void theCheckSeesEachLayer() {
        assertEquals("io", imported("import io.herald.client.io.Link;"));
        assertEquals("connection", imported("import io.herald.client.connection.Connection;"));
        assertEquals("", imported("import io.herald.client.HeraldClient;"));
        assertEquals(null, imported("import java.util.List;"));
    }

    /** Returns the Herald package a line refers to ("" for the API package), or null. */
    static String imported(String line) {
        for (Map.Entry<String, String> layer : Map.of("io.herald.client.errors.", "errors", "io.herald.client.wire.", "wire",
                "io.herald.client.io.", "io", "io.herald.client.connection.", "connection").entrySet()) {
            if (line.contains(layer.getKey())) {
                return layer.getValue();
            }
        }
        if (line.matches(".*\\bio\\.herald\\.client\\.[A-Z].*")) {
            return "";
        }
        return null;
    }
}
