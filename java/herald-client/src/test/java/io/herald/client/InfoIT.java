package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.errors.ServerErrorException;
import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.HeraldTime;
import io.herald.client.wire.InfoObject;
import io.herald.client.wire.InfoType;
import io.herald.client.wire.Kind;
import io.herald.client.wire.Selection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Information objects against a real server: declare, update, get, list, types, subscribe, delete. */
@ExtendWith(ServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InfoIT {
    static final Duration WAIT = Duration.ofSeconds(10);
    static final InfoType RUN_INFO = new InfoType("RunInfo", null, "the run in progress", List.of(
            new InfoType.Attribute("run", "u32", "run number"),
            new InfoType.Attribute("started", "time", "start of the run")));

    @Test
    void objectsAreKeptListedAndSubscribed(HeraldServer server) {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            InfoObjects info = client.info();
            info.declare(RUN_INFO, WAIT);
            info.declare(RUN_INFO, WAIT); // the same type again is fine
            InfoObject made = info.update("RunParams.RunInfo", "RunInfo",
                    Map.of("run", 42L, "started", new HeraldTime(1763604000123456789L)), WAIT);
            assertEquals("RunParams.RunInfo", made.name());
            assertEquals(42L, made.attributes().get("run"));
            List<InfoObject> got = info.get(List.of("RunParams.RunInfo", "RunParams.Missing"), WAIT);
            assertEquals(made.version(), got.get(0).version());
            assertNull(got.get(1));
            assertEquals(List.of("RunParams.RunInfo"), info.list(new Selection("RunParams\\..*", null, false), WAIT).stream()
                    .map(InfoObject::name).toList());
            assertTrue(info.types(WAIT).stream().anyMatch(t -> t.name().equals("RunInfo")));

            try (Subscription changes = info.subscribe(new Selection("RunParams\\..*", null, false), WAIT)) {
                SubscriptionEvent.Delivered snapshot = changes.next(WAIT);
                assertNotNull(snapshot);
                assertEquals(Kind.INFO, snapshot.record().kind());
                assertEquals("snapshot", snapshot.record().text());
                InfoObject updated = info.update("RunParams.RunInfo", null, Map.of("run", 43L), WAIT);
                SubscriptionEvent.Delivered change = changes.next(WAIT);
                assertEquals("updated", change.record().text());
                assertEquals(updated.version(), change.record().id());
                assertEquals(43L, change.record().fields().get("run"));
            }
            InfoObject deleted = info.delete("RunParams.RunInfo", WAIT);
            assertTrue(deleted.version() > made.version());
            assertNull(info.get("RunParams.RunInfo", WAIT));
        }
    }

    @Test
    void aRefusedChangeNamesTheProblem(HeraldServer server) {
        try (HeraldClient client = HeraldClient.connect(server.url())) {
            ServerErrorException error = assertThrows(ServerErrorException.class,
                    () -> client.info().update("RunParams.X", "NoSuchType", Map.of("a", 1L), WAIT));
            assertEquals("bad_info", error.code());
            assertTrue(error.getMessage().contains("NoSuchType"), error.getMessage());
            client.flush(WAIT); // the connection lives on
        }
    }
}
