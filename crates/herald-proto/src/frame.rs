//! Frames: the units of the native protocol.
//!
//! Every frame is `u32 length (big-endian) | u8 type | body`, where `length` counts the type
//! byte and the body. Bodies are MessagePack. docs/protocol.md draws each one.

use crate::error::{DecodeError, FrameError};
use crate::filter::Filter;
use crate::msgpack::{self, Reader};
use crate::value::{self, Field};

pub use crate::raw_record::RawRecord;

/// Protocol version spoken by this crate.
pub const PROTOCOL_VERSION: u64 = 1;
/// Bytes of the length prefix.
pub const LENGTH_BYTES: usize = 4;
/// Default largest frame (length field value) either side accepts.
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 1024 * 1024;

/// The type byte of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameType {
    /// Client → server, first frame: version, name, token, capabilities.
    Hello = 0x01,
    /// Server → client answer to a good `Hello`.
    Welcome = 0x02,
    /// Client → server: a batch of records, with an optional acknowledgement request.
    Publish = 0x10,
    /// Server → client: acknowledges a `Publish`.
    Ack = 0x11,
    /// Server → client: a batch of records for subscriptions.
    Deliver = 0x12,
    /// Server → client: records were dropped for a subscription.
    Gap = 0x13,
    /// Client → server: start a subscription.
    Subscribe = 0x20,
    /// Client → server: end a subscription.
    Unsubscribe = 0x21,
    /// Server → client: a control request succeeded.
    Ok = 0x22,
    /// Client → server: ask for monitor data.
    Monitor = 0x30,
    /// Server → client: monitor data.
    MonitorReply = 0x31,
    /// Client → server: read the configuration again and apply what can change live.
    Reload = 0x32,
    /// Server → client: what a `RELOAD` changed, and what waits for a restart.
    ReloadReply = 0x33,
    /// Client → server: an information-service request.
    Info = 0x50,
    /// Server → client: the answer to an `INFO` request.
    InfoReply = 0x51,
    /// Client → server: subscribe to information objects — their current values, then
    /// every change.
    InfoSubscribe = 0x52,
    /// Client → server: an archive query.
    Query = 0x60,
    /// Server → client: the answer to a `QUERY`.
    QueryReply = 0x61,
    /// Either way: are you alive?
    Ping = 0x40,
    /// Either way: yes.
    Pong = 0x41,
    /// Between cluster members, over a route: who is in the cluster.
    Members = 0x70,
    /// Between cluster members, over a route: changes of information objects, from the
    /// owner of their namespace.
    InfoChange = 0x71,
    /// Source → mirror, first after `WELCOME`: the connection feeds a read-only mirror of
    /// these subjects and objects.
    Mirror = 0x72,
    /// Between cluster members, over a route, second after `MEMBERS` when the members
    /// share a cluster secret: the sender's proof that it knows it.
    RouteAuth = 0x73,
    /// Either way: something was wrong.
    Error = 0x7f,
}

impl FrameType {
    /// Returns the frame type for `byte`.
    ///
    /// # Errors
    /// [`FrameError::UnknownType`] for a byte no frame uses.
    pub fn from_u8(byte: u8) -> Result<FrameType, FrameError> {
        use FrameType::*;
        [
            Hello,
            Welcome,
            Publish,
            Ack,
            Deliver,
            Gap,
            Subscribe,
            Unsubscribe,
            Ok,
            Monitor,
            MonitorReply,
            Reload,
            ReloadReply,
            Info,
            InfoReply,
            InfoSubscribe,
            Query,
            QueryReply,
            Ping,
            Pong,
            Members,
            InfoChange,
            Mirror,
            RouteAuth,
            Error,
        ]
        .into_iter()
        .find(|t| *t as u8 == byte)
        .ok_or(FrameError::UnknownType(byte))
    }

    /// Returns the upper-case name used in docs and errors.
    pub fn name(self) -> &'static str {
        match self {
            FrameType::Hello => "HELLO",
            FrameType::Welcome => "WELCOME",
            FrameType::Publish => "PUBLISH",
            FrameType::Ack => "ACK",
            FrameType::Deliver => "DELIVER",
            FrameType::Gap => "GAP",
            FrameType::Subscribe => "SUBSCRIBE",
            FrameType::Unsubscribe => "UNSUBSCRIBE",
            FrameType::Ok => "OK",
            FrameType::Monitor => "MONITOR",
            FrameType::MonitorReply => "MONITOR_REPLY",
            FrameType::Reload => "RELOAD",
            FrameType::ReloadReply => "RELOAD_REPLY",
            FrameType::Info => "INFO",
            FrameType::InfoReply => "INFO_REPLY",
            FrameType::InfoSubscribe => "INFO_SUBSCRIBE",
            FrameType::Query => "QUERY",
            FrameType::QueryReply => "QUERY_REPLY",
            FrameType::Ping => "PING",
            FrameType::Pong => "PONG",
            FrameType::Members => "MEMBERS",
            FrameType::InfoChange => "INFO_CHANGE",
            FrameType::Mirror => "MIRROR",
            FrameType::RouteAuth => "ROUTE_AUTH",
            FrameType::Error => "ERROR",
        }
    }
}

/// How far a producer wants a batch acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum AckLevel {
    /// Fire and forget.
    #[default]
    None = 0,
    /// The server has the records and has routed them.
    Received = 1,
    /// The records are durably in the archive.
    Stored = 2,
}

impl AckLevel {
    fn from_u64(value: u64) -> Result<AckLevel, DecodeError> {
        match value {
            0 => Ok(AckLevel::None),
            1 => Ok(AckLevel::Received),
            2 => Ok(AckLevel::Stored),
            _ => Err(DecodeError::InvalidField {
                field: "ack level",
                reason: format!("unknown level {value} (expected 0 none, 1 received, 2 stored)"),
            }),
        }
    }
}

/// `HELLO`: the client introduces itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// Protocol version the client speaks.
    pub version: u64,
    /// Client name, shown by the monitor.
    pub name: String,
    /// Authentication token; empty when none.
    pub token: String,
    /// Optional features the client understands.
    pub capabilities: Vec<String>,
    /// Heartbeat interval the client asks for, in milliseconds (0: server default).
    pub heartbeat_ms: u64,
    /// The producer's id (0: none): chosen once by the client and kept across its
    /// reconnections, it names the producer whose numbered records a member deduplicates.
    pub producer: u64,
}

/// `WELCOME`: the server accepts the connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Welcome {
    /// Protocol version the server speaks.
    pub version: u64,
    /// Server name.
    pub server: String,
    /// Heartbeat interval in force, in milliseconds.
    pub heartbeat_ms: u64,
    /// Largest frame the server accepts.
    pub max_frame_bytes: u64,
    /// The server's id for this connection.
    pub connection: u64,
}

/// `PUBLISH`: a batch of records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish {
    /// Correlation id for the `ACK`; 0 when no acknowledgement is wanted.
    pub ack_id: u64,
    /// Acknowledgement level wanted.
    pub ack: AckLevel,
    /// The records.
    pub records: Vec<RawRecord>,
    /// The producer's sequence number of the batch's first record (0: not numbered); the
    /// records of the batch are numbered from it, one by one.
    pub first_seq: u64,
    /// The producer's sequence number of each record in `records` when the batch is
    /// numbered (refused records taken out keep their numbers out); empty otherwise.
    pub seqs: Vec<u64>,
}

/// `ACK`: a batch was taken up to the level asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// The `ack_id` of the `PUBLISH`.
    pub ack_id: u64,
    /// The level reached.
    pub level: AckLevel,
    /// Records accepted from that batch.
    pub count: u64,
}

/// One delivered record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliverEntry {
    /// The subscription it matched.
    pub subscription: u64,
    /// The server's sequence number.
    pub seq: u64,
    /// The server's receive time, ns since the epoch.
    pub received: i64,
    /// The record, exactly as the producer sent it, with its routing fields read.
    pub record: RawRecord,
    /// Between cluster members only: the producer that numbered the record and its number
    /// (0 and 0 when it was not numbered).
    pub producer: u64,
    /// See `producer`.
    pub pseq: u64,
    /// Between cluster members only: the queue groups the receiving member is to give the
    /// record to (one member each); its other groups' members do not get it (empty: none).
    pub groups: Vec<String>,
}

/// `GAP`: records that matched a subscription but were dropped before delivery.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GapNotice {
    /// The subscription that lost them.
    pub subscription: u64,
    /// How many records.
    pub count: u64,
    /// Lowest server sequence number lost.
    pub first_seq: u64,
    /// Highest server sequence number lost.
    pub last_seq: u64,
    /// Lost records per priority, ascending by priority, zero counts left out.
    pub by_priority: Vec<(crate::Priority, u64)>,
    /// The cluster member whose route to this server lost them (then the sequence numbers
    /// are that member's); `None` for losses on this server.
    pub member: Option<String>,
}

/// `SUBSCRIBE`: start receiving records that pass a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscribe {
    /// Correlation id for the `OK` or `ERROR`.
    pub cid: u64,
    /// Client-chosen subscription id, unique on the connection.
    pub subscription: u64,
    /// What to receive.
    pub filter: Filter,
    /// How to deliver it when the subscriber falls behind.
    pub options: crate::delivery_options::DeliveryOptions,
}

/// Error codes carried by `ERROR` frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A frame could not be decoded.
    BadFrame,
    /// A frame exceeded the maximum size.
    FrameTooLarge,
    /// The first frame was not `HELLO`, or `HELLO` came twice.
    Handshake,
    /// The client speaks a protocol version the server does not.
    Version,
    /// A missing, unknown or revoked token: the connection closes.
    Unauthorized,
    /// The connection's identity may not do what one request asks; the request is refused
    /// alone.
    Denied,
    /// A bad subscription filter.
    BadFilter,
    /// A record was refused.
    BadRecord,
    /// A limit was reached (subscriptions, connections).
    Limit,
    /// A subscription id is unknown or already in use.
    BadSubscription,
    /// The peer stopped answering heartbeats.
    HeartbeatTimeout,
    /// A subscriber with policy `disconnect` fell behind.
    SlowConsumer,
    /// An information-service request was refused (unknown type, wrong attribute, …).
    BadInfo,
    /// The server is shutting down.
    ShuttingDown,
    /// An archive query was refused (empty range, bad limit or pattern).
    BadQuery,
    /// The archive cannot do what was asked: there is none, or no rule keeps a record sent
    /// with acknowledgement level `stored`, or its store failed.
    Archive,
    /// A request whose body does not decode (or of a frame type the server does not know),
    /// answered alone; the connection stays open.
    BadRequest,
    /// In a cluster: the member that owns an information object's namespace cannot be
    /// reached now.
    Unavailable,
    /// A publish or change of a subject or object this server mirrors read-only.
    ReadOnly,
    /// A `RELOAD` found the new configuration invalid; the old one stays in force.
    BadConfig,
    /// A code this version does not know.
    Other,
}

impl ErrorCode {
    const ALL: [(ErrorCode, &'static str); 20] = [
        (ErrorCode::BadFrame, "bad_frame"),
        (ErrorCode::FrameTooLarge, "frame_too_large"),
        (ErrorCode::Handshake, "handshake"),
        (ErrorCode::Version, "version"),
        (ErrorCode::Unauthorized, "unauthorized"),
        (ErrorCode::Denied, "denied"),
        (ErrorCode::BadFilter, "bad_filter"),
        (ErrorCode::BadRecord, "bad_record"),
        (ErrorCode::Limit, "limit"),
        (ErrorCode::BadSubscription, "bad_subscription"),
        (ErrorCode::HeartbeatTimeout, "heartbeat_timeout"),
        (ErrorCode::SlowConsumer, "slow_consumer"),
        (ErrorCode::BadInfo, "bad_info"),
        (ErrorCode::ShuttingDown, "shutting_down"),
        (ErrorCode::BadQuery, "bad_query"),
        (ErrorCode::Archive, "archive"),
        (ErrorCode::BadRequest, "bad_request"),
        (ErrorCode::Unavailable, "unavailable"),
        (ErrorCode::ReadOnly, "read_only"),
        (ErrorCode::BadConfig, "bad_config"),
    ];

    /// Returns the wire string (`bad_frame`).
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(code, _)| *code == self)
            .map_or("other", |(_, name)| name)
    }

    /// Returns true for the codes that always end the connection (docs/protocol.md,
    /// Errors: "closed"): what a client's calls report once the server closed it. `limit`
    /// is not among them: only a connection over the limits is closed with it.
    pub fn closes_connection(self) -> bool {
        matches!(
            self,
            ErrorCode::BadFrame
                | ErrorCode::FrameTooLarge
                | ErrorCode::Handshake
                | ErrorCode::Version
                | ErrorCode::Unauthorized
                | ErrorCode::SlowConsumer
                | ErrorCode::HeartbeatTimeout
                | ErrorCode::ShuttingDown
        )
    }

    /// Returns the code for a wire string; unknown strings give [`ErrorCode::Other`].
    pub fn from_wire(text: &str) -> ErrorCode {
        Self::ALL
            .iter()
            .find(|(_, name)| *name == text)
            .map_or(ErrorCode::Other, |(code, _)| *code)
    }
}

/// `ERROR`: what went wrong. `cid` 0 means the connection as a whole; the sender closes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorFrame {
    /// The request this answers, or 0.
    pub cid: u64,
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Sentence for people, naming the problem and the value.
    pub message: String,
}

/// A decoded frame.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Frame {
    /// See [`Hello`].
    Hello(Hello),
    /// See [`Welcome`].
    Welcome(Welcome),
    /// See [`Publish`].
    Publish(Publish),
    /// See [`Ack`].
    Ack(Ack),
    /// A batch of delivered records.
    Deliver(Vec<DeliverEntry>),
    /// See [`GapNotice`].
    Gap(GapNotice),
    /// See [`Subscribe`].
    Subscribe(Subscribe),
    /// End subscription `subscription`.
    Unsubscribe {
        /// Correlation id.
        cid: u64,
        /// The subscription.
        subscription: u64,
    },
    /// Request `cid` succeeded.
    Ok {
        /// Correlation id.
        cid: u64,
    },
    /// Ask for monitor data.
    Monitor {
        /// Correlation id.
        cid: u64,
    },
    /// Monitor data: named values (see docs/protocol.md for the names).
    MonitorReply {
        /// Correlation id.
        cid: u64,
        /// The data.
        data: Vec<Field>,
    },
    /// Read the configuration again (admin only).
    Reload {
        /// Correlation id.
        cid: u64,
    },
    /// What a reload did: named values (see docs/protocol.md for the names).
    ReloadReply {
        /// Correlation id.
        cid: u64,
        /// The data.
        data: Vec<Field>,
    },
    /// An information-service request.
    Info {
        /// Correlation id.
        cid: u64,
        /// The request.
        request: crate::info::InfoRequest,
    },
    /// The answer to an `INFO` request.
    InfoReply {
        /// Correlation id.
        cid: u64,
        /// The answer.
        reply: crate::info::InfoReply,
        /// More parts of this answer follow under the same cid (an answer larger than a
        /// frame is split; written as a third body element, `true`, only when set).
        more: bool,
    },
    /// Subscribe to the information objects a selection matches.
    InfoSubscribe {
        /// Correlation id.
        cid: u64,
        /// Client-chosen subscription id.
        subscription: u64,
        /// Which objects.
        selection: crate::info::SelectionData,
    },
    /// An archive query.
    Query {
        /// Correlation id.
        cid: u64,
        /// The query.
        request: crate::archive::ArchiveRequest,
    },
    /// The answer to a `QUERY`.
    QueryReply {
        /// Correlation id.
        cid: u64,
        /// The answer.
        reply: crate::archive::ArchiveReply,
        /// Stored records the archive left out because they do not decode (written as a
        /// third body element only when not 0, or when `more` follows it).
        skipped: u64,
        /// More parts of this answer follow (a fourth body element, `true`): buckets and
        /// values at an instant too large for one frame come in parts.
        more: bool,
    },
    /// Heartbeat request.
    Ping,
    /// Heartbeat answer.
    Pong,
    /// Who is in the cluster (routes only): see [`crate::route::Members`].
    Members(crate::route::Members),
    /// Changes of information objects (routes only): see [`crate::route::InfoChange`].
    InfoChange(crate::route::InfoChange),
    /// A source announces a mirror feed: see [`crate::route::MirrorFeed`].
    Mirror(crate::route::MirrorFeed),
    /// A member's proof that it knows the cluster secret (routes only): the MAC that
    /// [`crate::route::Members::nonce`] describes.
    RouteAuth(Vec<u8>),
    /// See [`ErrorFrame`].
    Error(ErrorFrame),
}

/// Starts a frame of type `frame_type` in `out`; returns the position to hand to
/// [`end_frame`] once the body is written.
pub fn begin_frame(out: &mut Vec<u8>, frame_type: FrameType) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0, 0, 0, 0, frame_type as u8]);
    start
}

/// Writes the length prefix of the frame begun at `start`.
///
/// # Panics
/// Panics if the frame is longer than `u32::MAX`, which no limit allows.
pub fn end_frame(out: &mut [u8], start: usize) {
    let length = u32::try_from(out.len() - start - LENGTH_BYTES).expect("frame longer than 4 GiB");
    out[start..start + LENGTH_BYTES].copy_from_slice(&length.to_be_bytes());
}

/// Appends one `DELIVER` entry; the caller has written the array header for the batch.
pub fn write_deliver_entry(
    out: &mut Vec<u8>,
    subscription: u64,
    seq: u64,
    received: i64,
    record: &[u8],
) {
    msgpack::write_array_len(out, 4);
    msgpack::write_uint(out, subscription);
    msgpack::write_uint(out, seq);
    msgpack::write_int(out, received);
    out.extend_from_slice(record);
}

/// Appends one `DELIVER` entry of a route (between cluster members): with the producer's
/// id and number of the record when it has them (`producer` non-zero), and the queue groups
/// the far member is to give it to, when there are any.
pub fn write_route_entry(
    out: &mut Vec<u8>,
    seq: u64,
    received: i64,
    record: &[u8],
    (producer, pseq): (u64, u64),
    groups: &[impl AsRef<str>],
) {
    write_entry(out, 0, seq, received, record, (producer, pseq), groups);
}

/// Appends one `DELIVER` entry in its shortest form: 4 elements, 6 with the producer's id and
/// number (`producer` non-zero), 7 with queue groups (docs/protocol.md, `DELIVER`).
pub(crate) fn write_entry(
    out: &mut Vec<u8>,
    subscription: u64,
    seq: u64,
    received: i64,
    record: &[u8],
    (producer, pseq): (u64, u64),
    groups: &[impl AsRef<str>],
) {
    if producer == 0 && groups.is_empty() {
        return write_deliver_entry(out, subscription, seq, received, record);
    }
    msgpack::write_array_len(out, if groups.is_empty() { 6 } else { 7 });
    msgpack::write_uint(out, subscription);
    msgpack::write_uint(out, seq);
    msgpack::write_int(out, received);
    out.extend_from_slice(record);
    msgpack::write_uint(out, producer);
    msgpack::write_uint(out, pseq);
    if !groups.is_empty() {
        msgpack::write_array_len(out, msgpack::len_u32(groups.len()));
        for group in groups {
            msgpack::write_str(out, group.as_ref());
        }
    }
}

/// Appends the header of a `PUBLISH` body for `count` records; the records follow.
pub fn write_publish_header(out: &mut Vec<u8>, ack_id: u64, ack: AckLevel, count: u32) {
    msgpack::write_array_len(out, 3);
    msgpack::write_uint(out, ack_id);
    msgpack::write_uint(out, ack as u64);
    msgpack::write_array_len(out, count);
}

/// Appends the header of a numbered `PUBLISH` body for `count` records; the records
/// follow, then [`write_publish_first_seq`] ends the body.
pub fn write_numbered_publish_header(out: &mut Vec<u8>, ack_id: u64, ack: AckLevel, count: u32) {
    msgpack::write_array_len(out, 4);
    msgpack::write_uint(out, ack_id);
    msgpack::write_uint(out, ack as u64);
    msgpack::write_array_len(out, count);
}

/// Ends a numbered `PUBLISH` body: the producer's number of its first record.
pub fn write_publish_first_seq(out: &mut Vec<u8>, first_seq: u64) {
    msgpack::write_uint(out, first_seq);
}

/// Returns the total size (prefix included) of the frame at the start of `buf`, or `None`
/// if more bytes are needed to know or to hold it.
///
/// # Errors
/// [`FrameError`] for a zero or too-large length, or bytes that look like HTTP.
pub fn check_frame(buf: &[u8], max_frame_bytes: u32) -> Result<Option<usize>, FrameError> {
    let Some(prefix) = buf.get(..LENGTH_BYTES) else {
        return Ok(None);
    };
    if matches!(prefix, b"GET " | b"POST" | b"PUT " | b"HEAD" | b"HTTP") {
        return Err(FrameError::Http);
    }
    let length = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
    if length == 0 {
        return Err(FrameError::Empty);
    }
    if length > max_frame_bytes {
        return Err(FrameError::TooLarge {
            size: u64::from(length),
            max: u64::from(max_frame_bytes),
        });
    }
    let total = LENGTH_BYTES + length as usize;
    Ok((buf.len() >= total).then_some(total))
}

impl Frame {
    /// Returns the frame's type.
    pub fn frame_type(&self) -> FrameType {
        match self {
            Frame::Hello(_) => FrameType::Hello,
            Frame::Welcome(_) => FrameType::Welcome,
            Frame::Publish(_) => FrameType::Publish,
            Frame::Ack(_) => FrameType::Ack,
            Frame::Deliver(_) => FrameType::Deliver,
            Frame::Gap(_) => FrameType::Gap,
            Frame::Subscribe(_) => FrameType::Subscribe,
            Frame::Unsubscribe { .. } => FrameType::Unsubscribe,
            Frame::Ok { .. } => FrameType::Ok,
            Frame::Monitor { .. } => FrameType::Monitor,
            Frame::MonitorReply { .. } => FrameType::MonitorReply,
            Frame::Reload { .. } => FrameType::Reload,
            Frame::ReloadReply { .. } => FrameType::ReloadReply,
            Frame::Info { .. } => FrameType::Info,
            Frame::InfoReply { .. } => FrameType::InfoReply,
            Frame::InfoSubscribe { .. } => FrameType::InfoSubscribe,
            Frame::Query { .. } => FrameType::Query,
            Frame::QueryReply { .. } => FrameType::QueryReply,
            Frame::Ping => FrameType::Ping,
            Frame::Pong => FrameType::Pong,
            Frame::Members(_) => FrameType::Members,
            Frame::InfoChange(_) => FrameType::InfoChange,
            Frame::Mirror(_) => FrameType::Mirror,
            Frame::RouteAuth(_) => FrameType::RouteAuth,
            Frame::Error(_) => FrameType::Error,
        }
    }
}

pub(crate) fn read_ack_level(reader: &mut Reader<'_>) -> Result<AckLevel, DecodeError> {
    AckLevel::from_u64(reader.read_uint()?)
}

pub(crate) fn read_fields(reader: &mut Reader<'_>) -> Result<Vec<Field>, DecodeError> {
    value::decode_fields(reader, 1)
}
