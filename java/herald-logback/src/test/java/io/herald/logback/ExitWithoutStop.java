package io.herald.logback;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.slf4j.LoggerFactory;

/**
 * A program that configures the appender, logs ten records and returns from {@code main}
 * without stopping Logback (no {@code <shutdownHook/>}): run by {@link HeraldAppenderIT} in a
 * JVM of its own.
 */
public final class ExitWithoutStop {
    private ExitWithoutStop() {
    }

    public static void main(String[] args) throws Exception {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        String xml = "<configuration><appender name='HERALD' class='io.herald.logback.HeraldAppender'><url>" + args[0]
                + "</url></appender><root level='INFO'><appender-ref ref='HERALD'/></root></configuration>";
        configurator.doConfigure(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        // Connected first (a fresh JVM on a busy machine may take longer than the exit's
        // budget to connect): what is tested is that what is buffered at exit goes out.
        LoggerFactory.getLogger("IT.logback.exit").info("ready");
        HeraldAppender appender = (HeraldAppender) context.getLogger("ROOT").getAppender("HERALD");
        if (!appender.heraldLogger().flush(java.time.Duration.ofSeconds(20))) {
            throw new IllegalStateException("not connected: " + appender.heraldLogger().lastError());
        }
        for (int i = 0; i < 10; i++) {
            LoggerFactory.getLogger("IT.logback.exit").info("last words {}", i);
        }
    }
}
