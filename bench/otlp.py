#!/usr/bin/env python3
"""OTLP/HTTP ingest into a running `herald serve`: posts an ExportLogsServiceRequest of
BATCH log records (a 128-byte body, two attributes) ROUNDS times, over one keep-alive
connection, in protobuf and then in JSON, and prints records/s for each (the server took
them all: its monitor's `otlp.records` is checked). Each round's bodies carry the round's
number (patched into the encoded request), so that no record repeats another: repeated
records would collapse as a log storm and cost the server less.

    python3 bench/otlp.py 127.0.0.1:7480 [ROUNDS] [BATCH] [GRPC_ADDRESS]

With GRPC_ADDRESS (the server's `otlp_grpc`), the same requests go over OTLP/gRPC too, one
unary call after the other on one channel (grpcio).

Needs the `opentelemetry-proto` package (pip install opentelemetry-exporter-otlp-proto-http),
and grpcio for gRPC (pip install opentelemetry-exporter-otlp-proto-grpc).
"""

import http.client
import json
import sys
import time

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource


# Where each round writes its number into every record's body.
ROUND_MARK = b"round-000000"


def numbered(body: bytes, round: int) -> bytes:
    return body.replace(ROUND_MARK, b"round-%06d" % round)


def request(batch: int) -> ExportLogsServiceRequest:
    now = time.time_ns()
    records = [
        LogRecord(
            time_unix_nano=now + i,
            severity_number=9,
            body=AnyValue(string_value=(ROUND_MARK.decode() + " event %d " % i).ljust(128, "x")),
            attributes=[
                KeyValue(key="n", value=AnyValue(int_value=i)),
                KeyValue(key="unit", value=AnyValue(string_value="mA")),
            ],
        )
        for i in range(batch)
    ]
    resource = Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="bench"))])
    return ExportLogsServiceRequest(
        resource_logs=[ResourceLogs(resource=resource, scope_logs=[ScopeLogs(log_records=records)])]
    )


def to_json(req: ExportLogsServiceRequest) -> bytes:
    def value(v: AnyValue) -> dict:
        if v.HasField("int_value"):
            return {"intValue": str(v.int_value)}
        return {"stringValue": v.string_value}

    out = {"resourceLogs": [{
        "resource": {"attributes": [{"key": kv.key, "value": value(kv.value)} for kv in rl.resource.attributes]},
        "scopeLogs": [{"logRecords": [{
            "timeUnixNano": str(r.time_unix_nano), "severityNumber": r.severity_number,
            "body": value(r.body),
            "attributes": [{"key": kv.key, "value": value(kv.value)} for kv in r.attributes],
        } for r in sl.log_records]} for sl in rl.scope_logs],
    } for rl in req.resource_logs]}
    return json.dumps(out).encode()


def otlp_records(host: str, port: int) -> int:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/monitor")
    monitor = json.loads(conn.getresponse().read())
    return int(monitor.get("otlp", {}).get("records", 0))


def main() -> None:
    address = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    host, port = address.rsplit(":", 1)
    req = request(batch)
    for name, body, content_type in (
        ("protobuf", req.SerializeToString(), "application/x-protobuf"),
        ("json", to_json(req), "application/json"),
    ):
        before = otlp_records(host, int(port))
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        started = time.perf_counter()
        for round in range(rounds):
            conn.request(
                "POST",
                "/v1/logs",
                body=numbered(body, round),
                headers={"Content-Type": content_type},
            )
            answer = conn.getresponse()
            answer.read()
            assert answer.status == 200, answer.status
        elapsed = time.perf_counter() - started
        taken = otlp_records(host, int(port)) - before
        total = rounds * batch
        print(f"otlp {name}: {taken} of {total} records ({len(body) // batch} B each on the wire) "
              f"in {elapsed:.3f} s: {total / elapsed:,.0f} records/s")
    if len(sys.argv) > 4:
        grpc_rounds(sys.argv[4], host, int(port), req.SerializeToString(), rounds, batch)


def grpc_rounds(address: str, host: str, port: int, body: bytes, rounds: int, batch: int) -> None:
    import grpc

    channel = grpc.insecure_channel(address)
    export = channel.unary_unary(
        "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    before = otlp_records(host, port)
    started = time.perf_counter()
    for round in range(rounds):
        export(numbered(body, round), timeout=30)
    elapsed = time.perf_counter() - started
    taken = otlp_records(host, port) - before
    total = rounds * batch
    print(f"otlp grpc: {taken} of {total} records in {elapsed:.3f} s: {total / elapsed:,.0f} records/s")
    channel.close()


if __name__ == "__main__":
    main()
