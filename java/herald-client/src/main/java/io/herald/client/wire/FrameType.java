package io.herald.client.wire;

/** The type byte of each frame (docs/protocol.md, Framing). */
public final class FrameType {
    /** HELLO. */ public static final int HELLO = 0x01;
    /** WELCOME. */ public static final int WELCOME = 0x02;
    /** PUBLISH. */ public static final int PUBLISH = 0x10;
    /** ACK. */ public static final int ACK = 0x11;
    /** DELIVER. */ public static final int DELIVER = 0x12;
    /** GAP. */ public static final int GAP = 0x13;
    /** SUBSCRIBE. */ public static final int SUBSCRIBE = 0x20;
    /** UNSUBSCRIBE. */ public static final int UNSUBSCRIBE = 0x21;
    /** OK. */ public static final int OK = 0x22;
    /** MONITOR. */ public static final int MONITOR = 0x30;
    /** MONITOR_REPLY. */ public static final int MONITOR_REPLY = 0x31;
    /** RELOAD. */ public static final int RELOAD = 0x32;
    /** RELOAD_REPLY. */ public static final int RELOAD_REPLY = 0x33;
    /** PING. */ public static final int PING = 0x40;
    /** PONG. */ public static final int PONG = 0x41;
    /** INFO. */ public static final int INFO = 0x50;
    /** INFO_REPLY. */ public static final int INFO_REPLY = 0x51;
    /** INFO_SUBSCRIBE. */ public static final int INFO_SUBSCRIBE = 0x52;
    /** QUERY. */ public static final int QUERY = 0x60;
    /** QUERY_REPLY. */ public static final int QUERY_REPLY = 0x61;
    /** ERROR. */ public static final int ERROR = 0x7f;

    private FrameType() {
    }

    /** Returns the type byte of a frame. */
    public static int of(Frame frame) {
        if (frame instanceof Frame.Hello) return HELLO;
        if (frame instanceof Frame.Welcome) return WELCOME;
        if (frame instanceof Frame.Publish) return PUBLISH;
        if (frame instanceof Frame.Ack) return ACK;
        if (frame instanceof Frame.Deliver) return DELIVER;
        if (frame instanceof Frame.Gap) return GAP;
        if (frame instanceof Frame.Subscribe) return SUBSCRIBE;
        if (frame instanceof Frame.Unsubscribe) return UNSUBSCRIBE;
        if (frame instanceof Frame.Ok) return OK;
        if (frame instanceof Frame.Monitor) return MONITOR;
        if (frame instanceof Frame.MonitorReply) return MONITOR_REPLY;
        if (frame instanceof Frame.Reload) return RELOAD;
        if (frame instanceof Frame.ReloadReply) return RELOAD_REPLY;
        if (frame instanceof Frame.Info) return INFO;
        if (frame instanceof Frame.InfoReplyFrame) return INFO_REPLY;
        if (frame instanceof Frame.InfoSubscribe) return INFO_SUBSCRIBE;
        if (frame instanceof Frame.Query) return QUERY;
        if (frame instanceof Frame.QueryReply) return QUERY_REPLY;
        if (frame instanceof Frame.Ping) return PING;
        if (frame instanceof Frame.Pong) return PONG;
        return ERROR;
    }
}
