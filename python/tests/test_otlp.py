"""OpenTelemetry logs into Herald: the OpenTelemetry Python SDK's own OTLP/HTTP log
exporter (protobuf) sends to a real `herald serve` at /v1/logs, and its OTLP/gRPC exporter to
the `otlp_grpc` port; the records reach a Herald subscriber with their severity as priority,
resource as origin, attributes as typed fields and trace ids kept; OTLP/JSON and partial
success through plain HTTP, partial success, refusals and tokens through grpcio."""

import json
import logging
import subprocess
import urllib.request
from pathlib import Path

import grpc
import pytest
from conftest import Server, herald_bin
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
    OTLPLogExporter as GrpcLogExporter,
)
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
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


# ---- OTLP/gRPC ---------------------------------------------------------------------------


def grpc_server(tmp_path: Path) -> Server:
    return Server(tmp_path, settings={"otlp_grpc": "127.0.0.1:0"})


def test_the_sdk_grpc_exporter_reaches_subscribers(tmp_path: Path) -> None:
    server = grpc_server(tmp_path)
    try:
        with herald.connect(server.url, name="otel-watcher") as watcher:
            sub = watcher.subscribe("otel.*")
            watcher.flush()
            resource = Resource.create({"service.name": "rf", "host.name": "rf01"})
            provider = LoggerProvider(resource=resource)
            exporter = GrpcLogExporter(endpoint=f"http://{server.otlp_grpc}", insecure=True)
            provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
            log = logging.getLogger("otel-grpc-test")
            log.propagate = False
            log.setLevel(logging.DEBUG)
            log.addHandler(LoggingHandler(level=logging.DEBUG, logger_provider=provider))
            log.info("cavity %d tuned", 3, extra={"detune_hz": -12.5, "cavity": 3})
            log.critical("klystron arc")
            provider.force_flush()
            info, critical = sub.wait_for(2, timeout=10)
            assert info.record.subject == "otel.rf"
            assert info.record.priority == Priority.INFO
            assert info.text == "cavity 3 tuned"
            assert info.fields["detune_hz"] == -12.5 and info.fields["cavity"] == 3
            assert info.record.origin.host == "rf01"
            assert info.record.origin.process == "rf"
            assert info.record.origin.file.endswith("test_otlp.py")
            assert critical.record.priority == Priority.CRITICAL
            assert critical.text == "klystron arc"
            monitor = watcher.monitor()
            assert monitor["otlp"]["grpc_requests"] >= 1
            assert monitor["otlp"]["records"] == 2
            provider.shutdown()
    finally:
        server.stop()


def test_grpc_partial_success_and_refusals(tmp_path: Path) -> None:
    server = grpc_server(tmp_path)
    channel = grpc.insecure_channel(server.otlp_grpc)
    try:
        with herald.connect(server.url, name="otel-watcher") as watcher:
            sub = watcher.subscribe("otel.*")
            watcher.flush()
            export = logs_service_pb2_grpc.LogsServiceStub(channel).Export
            request = logs_service_pb2.ExportLogsServiceRequest()
            for service, text in (("grpc.svc", "kept"), ("s" * 2000, "lost")):
                resource_logs = request.resource_logs.add()
                attribute = resource_logs.resource.attributes.add()
                attribute.key = "service.name"
                attribute.value.string_value = service
                record = resource_logs.scope_logs.add().log_records.add()
                record.severity_number = 13
                record.body.string_value = text
            answer = export(request, timeout=10)
            assert answer.partial_success.rejected_log_records == 1
            assert "subject" in answer.partial_success.error_message
            got = sub.wait_for(1, timeout=10)[0]
            assert (got.record.subject, got.text) == ("otel.grpc_svc", "kept")
            assert got.record.priority == Priority.WARNING

            raw = channel.unary_unary(
                "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
                request_serializer=lambda b: b,
                response_deserializer=lambda b: b,
            )
            with pytest.raises(grpc.RpcError) as bad:
                raw(b"\xff\xff", timeout=10)
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "ExportLogsServiceRequest" in bad.value.details()
            traces = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
            other = channel.unary_unary(traces)
            with pytest.raises(grpc.RpcError) as missing:
                other(b"", timeout=10)
            assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED
            assert "LogsService/Export only" in missing.value.details()
            with pytest.raises(grpc.RpcError) as gzip:
                export(request, timeout=10, compression=grpc.Compression.Gzip)
            assert gzip.value.code() == grpc.StatusCode.UNIMPLEMENTED
            assert "compression none" in gzip.value.details()
    finally:
        channel.close()
        server.stop()


def test_grpc_needs_a_token_where_the_server_has_identities(tmp_path: Path) -> None:
    made = subprocess.run(
        [herald_bin(), "token", "new", "otel", "--data-dir", str(tmp_path), "--publish", "otel.*"],
        capture_output=True,
        text=True,
        check=True,
    )
    secret = made.stdout.strip()
    server = grpc_server(tmp_path)
    channel = grpc.insecure_channel(server.otlp_grpc)
    try:
        export = logs_service_pb2_grpc.LogsServiceStub(channel).Export
        request = logs_service_pb2.ExportLogsServiceRequest()
        request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = "x"
        for metadata in ((), (("authorization", "Bearer hrd_nope"),)):
            with pytest.raises(grpc.RpcError) as refused:
                export(request, timeout=10, metadata=metadata)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        answer = export(request, timeout=10, metadata=(("authorization", f"Bearer {secret}"),))
        assert answer.partial_success.rejected_log_records == 0
    finally:
        channel.close()
        server.stop()


def test_grpc_over_tls_with_the_servers_certificate(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    subprocess.run([herald_bin(), "cert", "dev", str(certs)], check=True, capture_output=True)
    settings = {
        "otlp_grpc": "127.0.0.1:0",
        "tls_cert": str(certs / "server.pem"),
        "tls_key": str(certs / "server-key.pem"),
    }
    server = Server(tmp_path / "data", settings=settings)
    credentials = grpc.ssl_channel_credentials((certs / "ca.pem").read_bytes())
    port = server.otlp_grpc.rsplit(":", 1)[1]
    # The development certificate names localhost.
    channel = grpc.secure_channel(f"localhost:{port}", credentials)
    try:
        export = logs_service_pb2_grpc.LogsServiceStub(channel).Export
        request = logs_service_pb2.ExportLogsServiceRequest()
        request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = "tls"
        answer = export(request, timeout=10)
        assert answer.partial_success.rejected_log_records == 0
        plain = grpc.insecure_channel(server.otlp_grpc)
        with pytest.raises(grpc.RpcError):
            logs_service_pb2_grpc.LogsServiceStub(plain).Export(request, timeout=5)
        plain.close()
    finally:
        channel.close()
        server.stop()
