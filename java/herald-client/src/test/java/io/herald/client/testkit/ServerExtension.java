package io.herald.client.testkit;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test method a fresh {@link HeraldServer} parameter and stops it after the test,
 * keeping its data directory only when the test failed.
 */
public final class ServerExtension implements ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(ServerExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == HeraldServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        HeraldServer server = HeraldServer.start();
        context.getStore(NAMESPACE).put("server-" + parameter.getIndex(), server);
        return server;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        boolean failed = context.getExecutionException().isPresent();
        for (int index = 0; index < 8; index++) {
            HeraldServer server = context.getStore(NAMESPACE).remove("server-" + index, HeraldServer.class);
            if (server != null) {
                server.close(failed);
            }
        }
    }
}
