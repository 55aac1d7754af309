"""OpenTelemetry logs into Herald: the OpenTelemetry Python SDK's own OTLP/HTTP log
exporter (protobuf) sends to a real `herald serve` at /v1/logs, and the records reach a
Herald subscriber with their severity as priority, resource as origin, attributes as typed
fields and trace ids kept; OTLP/JSON and partial success through plain HTTP."""

import json
import logging
import urllib.request
from pathlib import Path

from conftest import Server
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

import herald
from herald.wire.priority import Priority


def test_the_sdk_exporter_reaches_subscribers(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        with herald.connect(server.url, name="otel-watcher") as watcher:
            sub = watcher.subscribe("otel.*")
            watcher.flush()
            resource = Resource.create(
                {"service.name": "beamline", "host.name": "bl01", "deployment.environment": "test"}
            )
            provider = LoggerProvider(resource=resource)
            exporter = OTLPLogExporter(endpoint=f"http://{server.http}/v1/logs")
            provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
            log = logging.getLogger("otel-test")
            log.propagate = False
            log.setLevel(logging.DEBUG)
            log.addHandler(LoggingHandler(level=logging.DEBUG, logger_provider=provider))
            log.warning("vacuum %s", "low", extra={"gauge": 3, "ratio": 0.5, "ok": True})
            log.error("valve stuck")
            provider.force_flush()
            got = sub.wait_for(2, timeout=10)
            warning, error = got
            assert warning.record.subject == "otel.beamline"
            assert warning.record.priority == Priority.WARNING
            assert warning.text == "vacuum low"
            assert warning.fields["gauge"] == 3
            assert warning.fields["ratio"] == 0.5
            assert warning.fields["ok"] is True
            assert warning.fields["deployment.environment"] == "test"
            assert warning.record.origin.host == "bl01"
            assert warning.record.origin.process == "beamline"
            assert warning.record.origin.file.endswith("test_otlp.py")
            assert warning.record.origin.routine == "test_the_sdk_exporter_reaches_subscribers"
            assert warning.record.origin.line and warning.record.origin.line > 0
            assert error.record.priority == Priority.ERROR
            provider.shutdown()
    finally:
        server.stop()


def post(server: Server, body: bytes, content_type: str) -> tuple:
    request = urllib.request.Request(
        f"http://{server.http}/v1/logs", data=body, headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_json_partial_success_and_refusals(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        with herald.connect(server.url, name="otel-watcher") as watcher:
            sub = watcher.subscribe("otel.*")
            watcher.flush()
            good = {
                "timeUnixNano": "1795752000000000000",
                "severityNumber": 17,
                "body": {"stringValue": "over JSON"},
                "traceId": "5b8efff798038103d269b633813fc60c",
                "spanId": "eee19b7ec3c1b174",
                "attributes": [{"key": "n", "value": {"intValue": "42"}}],
            }

            # A service whose name makes a subject longer than 1024 bytes: its record is
            # refused, the rest go on.
            def resource(service: str, records: list) -> dict:
                return {
                    "resource": {
                        "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                    },
                    "scopeLogs": [{"scope": {"name": "lib"}, "logRecords": records}],
                }

            body = {
                "resourceLogs": [
                    resource("json.svc", [good]),
                    resource("s" * 2000, [{"body": {"stringValue": "lost"}}]),
                ]
            }
            status, answer = post(server, json.dumps(body).encode(), "application/json")
            assert status == 200, answer
            partial = json.loads(answer)["partialSuccess"]
            assert partial["rejectedLogRecords"] == "1"
            assert partial["errorMessage"]
            record = sub.wait_for(1, timeout=10)[0]
            assert record.record.subject == "otel.json_svc"
            assert record.record.priority == Priority.ERROR
            assert record.text == "over JSON"
            assert record.fields["n"] == 42
            assert record.fields["trace_id"] == "5b8efff798038103d269b633813fc60c"
            assert record.fields["span_id"] == "eee19b7ec3c1b174"
            assert record.record.time == 1795752000000000000
            status, answer = post(server, b"{}", "text/plain")
            assert status == 415 and b"application/x-protobuf" in answer
            status, answer = post(server, b"\xff\xff", "application/x-protobuf")
            assert status == 400 and b"ExportLogsServiceRequest" in answer
    finally:
        server.stop()
