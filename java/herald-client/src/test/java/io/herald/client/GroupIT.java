package io.herald.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.herald.client.testkit.HeraldServer;
import io.herald.client.testkit.ServerExtension;
import io.herald.client.wire.DeliveryOptions;
import io.herald.client.wire.Filter;
import io.herald.client.wire.Kind;
import io.herald.client.wire.Record;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Queue groups against a real `herald serve`: members share the records, each record once. */
@ExtendWith(ServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GroupIT {
    static final int RECORDS = 3000;

    @Test
    void membersOfAGroupShareEveryRecordExactlyOnce(HeraldServer server) {
        DeliveryOptions grouped = DeliveryOptions.DEFAULT.withGroup("workers");
        try (HeraldClient publisher = HeraldClient.connect(server.url() + "?name=publisher");
                HeraldClient a = HeraldClient.connect(server.url() + "?name=a");
                HeraldClient b = HeraldClient.connect(server.url() + "?name=b");
                Subscription first = a.subscribe(Filter.subject("IT.job.*"), grouped, null, null);
                Subscription second = b.subscribe(Filter.subject("IT.job.*"), grouped, null, null)) {
            for (int i = 0; i < RECORDS; i++) {
                // Every text its own: identical records would collapse as a log storm.
                publisher.publish(Record.builder(Kind.LOG, "IT.job.x").text("job " + i).build());
            }
            publisher.flush(Duration.ofSeconds(10));
            Set<Long> seen = new HashSet<>();
            int total = 0;
            for (Subscription member : List.of(first, second)) {
                SubscriptionEvent.Delivered got;
                while ((got = member.next(Duration.ofSeconds(1))) != null) {
                    seen.add(got.seq());
                    total++;
                }
            }
            assertEquals(RECORDS, total, "every record reached one member, none both");
            assertEquals(RECORDS, seen.size());
        }
    }

    @Test
    void aBadGroupNameIsRefusedByName() {
        IllegalArgumentException err = assertThrows(IllegalArgumentException.class,
                () -> DeliveryOptions.DEFAULT.withGroup(""));
        assertTrue(err.getMessage().contains("needs a name"), err.getMessage());
    }
}
