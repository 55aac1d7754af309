package io.herald.logback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.status.Status;
import io.herald.client.HeraldClient;
import io.herald.client.Subscription;
import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.MarkerFactory;

/** The Logback appender against a real server, configured as a program would be (logback.xml). */
@ExtendWith(ServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeraldAppenderIT {
    static final Duration WAIT = Duration.ofSeconds(10);

    static LoggerContext configure(String xml) throws Exception {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        configurator.doConfigure(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        return context;
    }

    @Test
    void whatIsLoggedJustBeforeTheProgramEndsIsSentWithoutStoppingLogback(HeraldServer server) throws Exception {
        try (HeraldClient client = HeraldClient.connect(server.url());
                Subscription records = client.subscribe(Filter.subject("IT.logback.exit"))) {
            Process program = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), ExitWithoutStop.class.getName(), server.url())
                    .redirectErrorStream(true).start();
            assertTrue(program.waitFor(30, TimeUnit.SECONDS), "the program did not end");
            String output = new String(program.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, program.exitValue(), output);
            assertEquals("ready", records.next(WAIT).record().text());
            for (int i = 0; i < 10; i++) {
                io.herald.client.SubscriptionEvent.Delivered delivered = records.next(WAIT);
                assertTrue(delivered != null, "record " + i + " of 10 never came; the program said: " + output);
                assertEquals("last words " + i, delivered.record().text());
            }
        }
    }

    @Test
    void eventsCarryMdcKeyValuesCallerAndStack(HeraldServer server) throws Exception {
        LoggerContext context = configure("<configuration>"
                + "<appender name='HERALD' class='io.herald.logback.HeraldAppender'>"
                + "<url>" + server.url() + "</url><includeCallerData>true</includeCallerData><process>svc</process>"
                + "</appender><root level='DEBUG'><appender-ref ref='HERALD'/></root></configuration>");
        try (HeraldClient client = HeraldClient.connect(server.url());
                Subscription records = client.subscribe(Filter.subject("IT.logback.*"))) {
            Logger log = LoggerFactory.getLogger("IT.logback.svc");
            MDC.put("run", "42");
            try {
                log.atWarn().addKeyValue("temperature", 81.5).addKeyValue("pumps", 3).log("too hot: {}", "rack 7");
            } finally {
                MDC.remove("run");
            }
            log.error(MarkerFactory.getMarker("CRITICAL"), "cooling lost", new IllegalStateException("pump 2"));
            log.trace("below the root level");
            HeraldAppender appender = (HeraldAppender) context.getLogger("ROOT").getAppender("HERALD");
            assertTrue(appender.heraldLogger().flush(WAIT));

            Record warning = records.next(WAIT).record();
            assertEquals("IT.logback.svc", warning.subject());
            assertEquals(Priority.WARNING, warning.priority());
            assertEquals("too hot: rack 7", warning.text());
            assertEquals("42", warning.fields().get("run"));
            assertEquals(81.5, warning.fields().get("temperature"));
            assertEquals(3L, warning.fields().get("pumps"));
            assertEquals("IT.logback.svc", warning.fields().get("logger"));
            assertEquals("HeraldAppenderIT.java", warning.origin().file());
            assertTrue(warning.origin().line() > 0);
            assertEquals(HeraldAppenderIT.class.getName() + ".eventsCarryMdcKeyValuesCallerAndStack", warning.origin().routine());
            assertEquals("svc", warning.origin().process());

            Record critical = records.next(WAIT).record();
            assertEquals(Priority.CRITICAL, critical.priority());
            assertTrue(((String) critical.fields().get("stack")).startsWith("java.lang.IllegalStateException: pump 2"));
            assertEquals(null, records.next(Duration.ofMillis(200)));
            assertEquals(0, appender.dropped());
        } finally {
            context.stop();
        }
    }

    @Test
    void anAppenderWithoutUrlReportsTheProblemAndDoesNotStart() throws Exception {
        LoggerContext context = configure("<configuration>"
                + "<appender name='HERALD' class='io.herald.logback.HeraldAppender'/>"
                + "<root level='INFO'><appender-ref ref='HERALD'/></root></configuration>");
        try {
            HeraldAppender appender = (HeraldAppender) context.getLogger("ROOT").getAppender("HERALD");
            assertFalse(appender.isStarted());
            boolean named = context.getStatusManager().getCopyOfStatusList().stream()
                    .anyMatch(s -> s.getLevel() == Status.ERROR && s.getMessage().contains("needs a server URL"));
            assertTrue(named, "no error status naming the missing URL");
        } finally {
            context.stop();
        }
    }
}
