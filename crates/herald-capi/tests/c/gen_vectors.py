"""Writes vectors.inc for test_vectors.c: every record of the shared test vectors
(testdata/vectors: PUBLISH records and DELIVER entries) as a C function that builds it through
the C API, with the record's exact wire bytes.

The bytes are cut from the vector's own frame: the Python codec encodes the record from its
meaning, and that encoding must occur in the frame's hex, or this script fails.

    python3 gen_vectors.py VECTORS_DIR OUT_FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "python"))

from herald import frame_from_json  # noqa: E402

I64_MAX = 2**63 - 1

KINDS = {"log": "HERALD_KIND_LOG", "message": "HERALD_KIND_MESSAGE", "info": "HERALD_KIND_INFO"}


def c_string(text: str) -> str:
    """A C string literal of `text`'s UTF-8 bytes (octal escapes keep it portable)."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char == "\\" or char == '"':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def c_bytes(data: bytes) -> str:
    return "{" + ", ".join(f"0x{b:02x}" for b in data) + "}" if data else "{0}"


class Writer:
    def __init__(self) -> None:
        self.lines: List[str] = []
        self.statics: List[str] = []
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def byte_array(self, hex_text: str) -> Tuple[str, int]:
        """A static C array of the bytes `hex_text` spells: its name and length."""
        data = bytes.fromhex(hex_text)
        array = self.fresh("bytes")
        self.statics.append(f"static const uint8_t {array}[] = {c_bytes(data)};")
        return array, len(data)

    def field_tree(self, name: str | None, value: Any) -> str:
        """A C initializer of a herald_field for `value`; arrays' and maps' items go into
        static arrays of their own."""
        name_c = c_string(name) if name is not None else "NULL"
        if isinstance(value, bool):
            return f"{{{name_c}, HERALD_BOOL, {int(value)}, 0.0, NULL, 0, NULL, 0}}"
        if isinstance(value, int) and value > I64_MAX:
            return f"{{{name_c}, HERALD_UINT, (int64_t){value}ULL, 0.0, NULL, 0, NULL, 0}}"
        if isinstance(value, int):
            return f"{{{name_c}, HERALD_INT, {value}LL, 0.0, NULL, 0, NULL, 0}}"
        if isinstance(value, float):
            return f"{{{name_c}, HERALD_FLOAT, 0, {value!r}, NULL, 0, NULL, 0}}"
        if isinstance(value, str):
            size = len(value.encode("utf-8"))
            return f"{{{name_c}, HERALD_STR, 0, 0.0, {c_string(value)}, {size}, NULL, 0}}"
        if isinstance(value, dict) and list(value) == ["bytes"]:
            array, size = self.byte_array(value["bytes"])
            return f"{{{name_c}, HERALD_BYTES, 0, 0.0, (const char *){array}, {size}, NULL, 0}}"
        if isinstance(value, dict) and list(value) == ["time"]:
            return f"{{{name_c}, HERALD_TIME, {value['time']}LL, 0.0, NULL, 0, NULL, 0}}"
        if isinstance(value, list):
            items = [self.field_tree(None, item) for item in value]
            kind = "HERALD_ARRAY"
        elif isinstance(value, dict):
            items = [self.field_tree(key, item) for key, item in value.items()]
            kind = "HERALD_MAP"
        else:
            raise ValueError(f"no C form for {value!r}")
        array = self.fresh("items")
        self.statics.append(f"static const herald_field {array}[] = {{{', '.join(items)}}};")
        return f"{{{name_c}, {kind}, 0, 0.0, NULL, 0, {array}, {len(items)}}}"

    def field(self, name: str, value: Any) -> str:
        n = c_string(name)
        if isinstance(value, bool):
            return f"herald_record_add_bool(r, {n}, {int(value)})"
        if isinstance(value, int) and value > I64_MAX:
            return f"herald_record_add_uint(r, {n}, {value}ULL)"
        if isinstance(value, int):
            return f"herald_record_add_int(r, {n}, {value}LL)"
        if isinstance(value, float):
            return f"herald_record_add_float(r, {n}, {value!r})"
        if isinstance(value, str):
            return f"herald_record_add_str(r, {n}, {c_string(value)})"
        if isinstance(value, dict) and list(value) == ["time"]:
            return f"herald_record_add_time(r, {n}, {value['time']}LL)"
        if isinstance(value, dict) and list(value) == ["bytes"]:
            array, size = self.byte_array(value["bytes"])
            return f"herald_record_add_bytes(r, {n}, {array}, {size})"
        tree = self.fresh("tree")
        self.statics.append(f"static const herald_field {tree} = {self.field_tree(None, value)};")
        return f"herald_record_add_value(r, {n}, &{tree})"

    def record(self, function: str, meaning: dict) -> None:
        calls = [f"herald_record_new({KINDS[meaning['kind']]}, {c_string(meaning['subject'])}, &r)"]
        calls.append(f"herald_record_set_time(r, {meaning['time']}LL)")
        calls.append(f"herald_record_set_priority(r, {meaning['priority']})")
        if meaning["type"]:
            calls.append(f"herald_record_set_type(r, {c_string(meaning['type'])})")
        for audience in meaning["audience"]:
            calls.append(f"herald_record_add_audience(r, {c_string(audience)})")
        origin = meaning["origin"]
        for key in ("host", "process", "thread", "context", "log_id", "uri"):
            if key in origin:
                calls.append(f"herald_record_set_{key}(r, {c_string(origin[key])})")
        if "file" in origin or "line" in origin or "routine" in origin:
            file = c_string(origin["file"]) if "file" in origin else "NULL"
            routine = c_string(origin["routine"]) if "routine" in origin else "NULL"
            calls.append(f"herald_record_set_source(r, {file}, {origin.get('line', 0)}, {routine})")
        if "stack_id" in origin:
            stack, level = c_string(origin["stack_id"]), origin.get("stack_level", 0)
            calls.append(f"herald_record_set_stack(r, {stack}, {level})")
        if meaning["text"]:
            calls.append(f"herald_record_set_text(r, {c_string(meaning['text'])})")
        for name, value in meaning["fields"].items():
            calls.append(self.field(name, value))
        if meaning["reply_to"] is not None:
            calls.append(f"herald_record_set_reply_to(r, {c_string(meaning['reply_to'])})")
        if meaning["id"] is not None:
            calls.append(f"herald_record_set_id(r, {meaning['id']}ULL)")
        body = "\n".join(f"  CHECK({call});" for call in calls)
        head = f"static herald_record *{function}(void) {{\n  herald_record *r = NULL;"
        self.lines.append(f"{head}\n{body}\n  return r;\n}}")


def main() -> None:
    vectors, out = Path(sys.argv[1]), Path(sys.argv[2])
    writer = Writer()
    table = []
    for path in sorted(vectors.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            meaning = case["frame"]
            if meaning["type"] == "PUBLISH":
                records = list(zip(meaning["records"], frame_from_json(meaning).records))
            elif meaning["type"] == "DELIVER":
                frame = frame_from_json(meaning)
                pairs = zip(meaning["entries"], frame.entries)
                records = [(entry["record"], made.record) for entry, made in pairs]
            else:
                continue
            for index, (record_meaning, record) in enumerate(records):
                encoded = record.to_bytes()
                if encoded.hex() not in case["hex"]:
                    where = f"{path.stem}/{case['name']} record {index}"
                    raise SystemExit(f"{where}: not in the frame's bytes")
                label = f"{path.stem}/{case['name']}#{index}"
                function = writer.fresh("build")
                writer.record(function, record_meaning)
                data = writer.fresh("wire")
                writer.statics.append(f"static const uint8_t {data}[] = {c_bytes(encoded)};")
                table.append(f"  {{{c_string(label)}, {function}, {data}, {len(encoded)}}},")
    text = [
        "/* Generated by gen_vectors.py from testdata/vectors: do not edit. */",
        *writer.statics,
        *writer.lines,
        "static const struct vector VECTORS[] = {",
        *table,
        "};",
    ]
    out.write_text("\n".join(text) + "\n", encoding="utf-8")
    print(f"gen_vectors: {len(table)} records from {vectors}")


if __name__ == "__main__":
    main()
