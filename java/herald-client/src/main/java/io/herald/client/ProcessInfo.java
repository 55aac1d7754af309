package io.herald.client;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** The origin of this program: host and process names, found once. */
final class ProcessInfo {
    private static volatile String host;

    private ProcessInfo() {
    }

    /** Returns the machine's name: $HOSTNAME, else the local host's name, else "localhost". */
    static String hostName() {
        String known = host;
        if (known != null) {
            return known;
        }
        String name = System.getenv("HOSTNAME");
        if (name == null || name.isBlank()) {
            try {
                name = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                name = "localhost";
            }
        }
        host = name;
        return name;
    }

    /** Returns the program's name: the main class of {@code sun.java.command}, else "java". */
    static String processName() {
        String command = System.getProperty("sun.java.command", "");
        String first = command.isBlank() ? "java" : command.split(" ")[0];
        int slash = first.lastIndexOf('/');
        return slash >= 0 ? first.substring(slash + 1) : first;
    }
}
