//! A `tracing-subscriber` layer: programs that log with `tracing` send to Herald with one
//! line, `tracing_subscriber::registry().with(logger.tracing_layer()).init()`, on the same
//! non-blocking path as [`super::LogBridge`].
//!
//! An event's level is its priority (`ERROR` → ERROR, `WARN` → WARNING, `INFO` → INFO,
//! `DEBUG` → DEBUG, `TRACE` → TRACE); a target set explicitly
//! (`warn!(target: "ANTENNA.DV01.Mount", …)`) is its subject, the default target (the module
//! path) leaves the logger's subject; its `message` is the text; its other fields, and the
//! fields of the spans it is in (outermost first, the event's own last), are typed fields —
//! integers, floats, booleans and strings as themselves, anything recorded with `?` or `%`
//! as its text; file, line and module path are the origin's file, line and routine.

use std::fmt;

use herald_proto::value::{Field, Value};
use herald_proto::Priority;
use tracing::field::{Field as TracingField, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::entry::{Source, Text};
use super::Logger;

/// The layer; see the module docs.
#[derive(Debug, Clone)]
pub struct TracingLayer {
    logger: Logger,
}

impl TracingLayer {
    /// Returns a layer that sends every event it sees through `logger` (the logger's
    /// threshold still applies).
    pub fn new(logger: Logger) -> TracingLayer {
        TracingLayer { logger }
    }
}

impl Logger {
    /// Returns a `tracing-subscriber` layer sending through this logger.
    pub fn tracing_layer(&self) -> TracingLayer {
        TracingLayer::new(self.clone())
    }
}

/// Returns the Herald priority of a `tracing` level.
pub fn priority_of_level(level: &Level) -> Priority {
    match *level {
        Level::ERROR => Priority::Error,
        Level::WARN => Priority::Warning,
        Level::INFO => Priority::Info,
        Level::DEBUG => Priority::Debug,
        _ => Priority::Trace,
    }
}

/// A span's fields, kept in its extensions.
struct SpanFields(Vec<Field>);

impl<S> tracing_subscriber::Layer<S> for TracingLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields(Vec::new());
        attrs.record(&mut fields);
        span.extensions_mut().insert(SpanFields(fields.0));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(SpanFields(fields)) = extensions.get_mut::<SpanFields>() {
            let mut more = Fields(std::mem::take(fields));
            values.record(&mut more);
            *fields = more.0;
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let priority = priority_of_level(metadata.level());
        if !self.logger.shared.takes(priority) {
            return;
        }
        let mut fields = Fields(Vec::new());
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(SpanFields(span_fields)) = span.extensions().get::<SpanFields>() {
                    fields.0.extend(span_fields.iter().cloned());
                }
            }
        }
        event.record(&mut fields);
        let target = metadata.target();
        let subject = match metadata.module_path() {
            Some(module) if module == target => None,
            _ if target.is_empty() => None,
            _ => Some(target),
        };
        let source = Source {
            file: metadata.file().unwrap_or_default(),
            line: metadata.line().unwrap_or(0),
            routine: metadata.module_path().unwrap_or_default(),
        };
        let text = |text: &mut Text| event.record(&mut Message(text));
        // A bad subject is counted as a drop (and reported); a layer cannot return it.
        let _counted = self.logger.emit(priority, subject, text, fields.0, source);
    }
}

/// Collects fields other than `message` as typed values.
struct Fields(Vec<Field>);

impl Fields {
    fn put(&mut self, field: &TracingField, value: Value) {
        if field.name() == "message" {
            return;
        }
        let name = field.name();
        // A span field recorded again, or an event field of a span's name, is replaced.
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) => *old = value,
            None => self.0.push((name.to_string(), value)),
        }
    }
}

impl Visit for Fields {
    fn record_i64(&mut self, field: &TracingField, value: i64) {
        self.put(field, Value::Int(value));
    }
    fn record_u64(&mut self, field: &TracingField, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &TracingField, value: f64) {
        self.put(field, Value::Float(value));
    }
    fn record_bool(&mut self, field: &TracingField, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_str(&mut self, field: &TracingField, value: &str) {
        self.put(field, Value::Str(value.to_string()));
    }
    fn record_debug(&mut self, field: &TracingField, value: &dyn fmt::Debug) {
        if field.name() != "message" {
            self.put(field, Value::Str(format!("{value:?}")));
        }
    }
}

/// Writes the `message` field into the record's text, in place.
struct Message<'a>(&'a mut Text);

impl Visit for Message<'_> {
    fn record_str(&mut self, field: &TracingField, value: &str) {
        if field.name() == "message" {
            self.0.set_args(format_args!("{value}"));
        }
    }
    fn record_debug(&mut self, field: &TracingField, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0.set_args(format_args!("{value:?}"));
        }
    }
}
