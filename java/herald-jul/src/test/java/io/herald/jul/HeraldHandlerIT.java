package io.herald.jul;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.HeraldClient;
import io.herald.client.LoggerOptions;
import io.herald.client.Subscription;
import io.herald.client.SubscriptionEvent;
import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Priority;
import io.herald.client.wire.Record;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The JUL handler against a real server. */
@ExtendWith(ServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeraldHandlerIT {
    static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void recordsCarryPriorityFieldsCallerAndStack(HeraldServer server) {
        Logger logger = Logger.getLogger("IT.jul.mount");
        logger.setUseParentHandlers(false);
        logger.setLevel(Level.ALL);
        HeraldHandler handler = new HeraldHandler(server.url(), null, true, new LoggerOptions("IT.jul", Priority.TRACE, 1024,
                null, null, "mountd", null, null));
        logger.addHandler(handler);
        try (HeraldClient client = HeraldClient.connect(server.url()); Subscription records = client.subscribe(Filter.subject("IT.jul.*"))) {
            logger.log(Level.WARNING, "encoder {0} fault", new Object[] {"az", Map.of("axis", "az", "count", 3)});
            logger.log(Level.SEVERE, "axis stopped", new IllegalStateException("servo tripped"));
            logger.finer("finer detail");
            handler.flush();
            Record warning = records.next(WAIT).record();
            assertEquals("IT.jul.mount", warning.subject());
            assertEquals(Priority.WARNING, warning.priority());
            assertEquals("encoder az fault", warning.text());
            assertEquals("az", warning.fields().get("axis"));
            assertEquals(3L, warning.fields().get("count"));
            assertEquals("IT.jul.mount", warning.fields().get("logger"));
            assertEquals("mountd", warning.origin().process());
            assertEquals(HeraldHandlerIT.class.getName() + ".recordsCarryPriorityFieldsCallerAndStack", warning.origin().routine());
            assertEquals("HeraldHandlerIT.java", warning.origin().file());
            assertTrue(warning.origin().line() > 0, "no line");
            Record severe = records.next(WAIT).record();
            assertEquals(Priority.ERROR, severe.priority());
            String stack = (String) severe.fields().get("stack");
            assertTrue(stack.startsWith("java.lang.IllegalStateException: servo tripped"), stack);
            assertTrue(stack.contains("HeraldHandlerIT"), stack);
            assertEquals(Priority.DELOUSE, records.next(WAIT).record().priority());
            assertEquals(0, handler.dropped());
        } finally {
            logger.removeHandler(handler);
            handler.close();
        }
    }

    @Test
    void oneLineOfConfigurationJoinsHerald(HeraldServer server) throws Exception {
        String properties = "handlers = io.herald.jul.HeraldHandler\n"
                + "io.herald.jul.HeraldHandler.url = " + server.url() + "\n"
                + "io.herald.jul.HeraldHandler.subject = IT.jul.configured\n"
                + "io.herald.jul.HeraldHandler.level = INFO\n";
        LogManager manager = LogManager.getLogManager();
        try (HeraldClient client = HeraldClient.connect(server.url());
                Subscription records = client.subscribe(Filter.subject("IT.jul.configured"))) {
            manager.readConfiguration(new ByteArrayInputStream(properties.getBytes(StandardCharsets.ISO_8859_1)));
            Logger logger = Logger.getLogger("some.component");
            logger.fine("below the handler's level");
            logger.info("configured by properties");
            for (var handler : Logger.getLogger("").getHandlers()) {
                handler.flush();
            }
            SubscriptionEvent.Delivered got = records.next(WAIT);
            assertNotNull(got);
            assertEquals("configured by properties", got.record().text());
            assertEquals("some.component", got.record().fields().get("logger"));
            assertEquals(null, records.next(Duration.ofMillis(200)));
        } finally {
            manager.reset();
        }
    }

    @Test
    void aHandlerWithoutUrlSaysWhatIsMissing() {
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> new HeraldHandler(null, null, false, new LoggerOptions("x")));
        assertTrue(error.getMessage().contains("io.herald.jul.HeraldHandler.url"), error.getMessage());
    }
}
