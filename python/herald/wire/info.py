"""Information-object requests and replies (``INFO``/``INFO_REPLY``/``INFO_SUBSCRIBE``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Dict, List, Optional, Union

from .msgpack_codec import DecodeError, Reader, Writer
from .values import Fields, decode_fields, encode_fields, fields_from_json, fields_to_json


class UpdateMode(IntEnum):
    CREATE = 0
    UPDATE = 1
    UPSERT = 2


@dataclass
class AttributeData:
    name: str
    type: str
    description: str = ""


@dataclass
class TypeData:
    """A type: name, optional base type, description and its own attributes."""

    name: str
    base: Optional[str] = None
    description: str = ""
    attributes: List[AttributeData] = field(default_factory=list)

    def encode(self, w: Writer) -> None:
        w.array_len(4)
        w.string(self.name)
        w.opt_str(self.base)
        w.string(self.description)
        w.array_len(len(self.attributes))
        for a in self.attributes:
            w.array_len(3)
            w.string(a.name)
            w.string(a.type)
            w.string(a.description)

    @classmethod
    def decode(cls, r: Reader) -> TypeData:
        r.expect_array("type", 4)
        data = cls(name=r.read_str(), base=r.opt_str(), description=r.read_str())
        for _ in range(r.read_array_len()):
            r.expect_array("attribute", 3)
            data.attributes.append(AttributeData(r.read_str(), r.read_str(), r.read_str()))
        return data

    def to_json(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "base": self.base,
            "description": self.description,
            "attributes": [
                {"name": a.name, "type": a.type, "description": a.description}
                for a in self.attributes
            ],
        }

    @classmethod
    def from_json(cls, m: Dict[str, Any]) -> TypeData:
        attributes = [
            AttributeData(a["name"], a["type"], a["description"]) for a in m["attributes"]
        ]
        return cls(m["name"], m["base"], m["description"], attributes)


@dataclass
class ObjectData:
    """An information object as the server keeps it."""

    name: str
    type: str
    time: int
    version: int
    attributes: Fields = field(default_factory=dict)

    def encode(self, w: Writer) -> None:
        w.array_len(5)
        w.string(self.name)
        w.string(self.type)
        w.sint(self.time)
        w.uint(self.version)
        encode_fields(w, self.attributes)

    @classmethod
    def decode(cls, r: Reader) -> ObjectData:
        r.expect_array("object", 5)
        return cls(r.read_str(), r.read_str(), r.read_int(), r.read_uint(), decode_fields(r))

    def to_json(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "time": self.time,
            "version": self.version,
            "attributes": fields_to_json(self.attributes),
        }

    @classmethod
    def from_json(cls, m: Dict[str, Any]) -> ObjectData:
        return cls(m["name"], m["type"], m["time"], m["version"], fields_from_json(m["attributes"]))


@dataclass
class Selection:
    """Objects whose name matches ``match`` (a regex) and/or whose type matches ``types``."""

    match: Optional[str] = None
    types: Optional[str] = None
    any: bool = False

    def encode(self, w: Writer) -> None:
        w.array_len(3)
        w.opt_str(self.match)
        w.opt_str(self.types)
        w.boolean(self.any)

    @classmethod
    def decode(cls, r: Reader) -> Selection:
        r.expect_array("selection", 3)
        return cls(r.opt_str(), r.opt_str(), r.read_bool())

    def to_json(self) -> Dict[str, Any]:
        return {"match": self.match, "type": self.types, "combine": "or" if self.any else "and"}

    @classmethod
    def from_json(cls, m: Dict[str, Any]) -> Selection:
        return cls(m["match"], m["type"], m["combine"] == "or")


@dataclass
class Declare:
    type: TypeData


@dataclass
class Update:
    mode: UpdateMode
    name: str
    type: Optional[str]
    time: int
    attributes: Fields = field(default_factory=dict)


@dataclass
class Delete:
    name: str
    time: int


@dataclass
class Get:
    names: List[str]


@dataclass
class List_:
    selection: Selection


@dataclass
class Types:
    pass


InfoRequest = Union[Declare, Update, Delete, Get, List_, Types]
_OPS = {Declare: 0, Update: 1, Delete: 2, Get: 3, List_: 4, Types: 5}


def encode_info_request(w: Writer, request: InfoRequest) -> None:
    w.array_len(2)
    w.uint(_OPS[type(request)])
    if isinstance(request, Declare):
        request.type.encode(w)
    elif isinstance(request, Update):
        w.array_len(5)
        w.uint(int(request.mode))
        w.string(request.name)
        w.opt_str(request.type)
        w.sint(request.time)
        encode_fields(w, request.attributes)
    elif isinstance(request, Delete):
        w.array_len(2)
        w.string(request.name)
        w.sint(request.time)
    elif isinstance(request, Get):
        w.array_len(len(request.names))
        for name in request.names:
            w.string(name)
    elif isinstance(request, List_):
        request.selection.encode(w)
    else:
        w.nil()


def decode_info_request(r: Reader) -> InfoRequest:
    r.expect_array("info request", 2)
    op = r.read_uint()
    if op == 0:
        return Declare(TypeData.decode(r))
    if op == 1:
        r.expect_array("update", 5)
        mode = r.read_uint()
        if mode > 2:
            raise DecodeError(f"invalid update mode {mode}")
        return Update(UpdateMode(mode), r.read_str(), r.opt_str(), r.read_int(), decode_fields(r))
    if op == 2:
        r.expect_array("delete", 2)
        return Delete(r.read_str(), r.read_int())
    if op == 3:
        return Get([r.read_str() for _ in range(r.read_array_len())])
    if op == 4:
        return List_(Selection.decode(r))
    if op == 5:
        if not r.read_nil():
            raise DecodeError("invalid types request: expected nil")
        return Types()
    raise DecodeError(f"invalid info operation {op}")


def info_request_to_json(request: InfoRequest) -> Dict[str, Any]:
    if isinstance(request, Declare):
        return {"op": "declare", "type": request.type.to_json()}
    if isinstance(request, Update):
        return {
            "op": "update",
            "mode": request.mode.name.lower(),
            "name": request.name,
            "type": request.type,
            "time": request.time,
            "attributes": fields_to_json(request.attributes),
        }
    if isinstance(request, Delete):
        return {"op": "delete", "name": request.name, "time": request.time}
    if isinstance(request, Get):
        return {"op": "get", "names": list(request.names)}
    if isinstance(request, List_):
        return {"op": "list", "selection": request.selection.to_json()}
    return {"op": "types"}


def info_request_from_json(m: Dict[str, Any]) -> InfoRequest:
    op = m["op"]
    if op == "declare":
        return Declare(TypeData.from_json(m["type"]))
    if op == "update":
        mode = UpdateMode[m["mode"].upper()]
        return Update(mode, m["name"], m["type"], m["time"], fields_from_json(m["attributes"]))
    if op == "delete":
        return Delete(m["name"], m["time"])
    if op == "get":
        return Get(list(m["names"]))
    if op == "list":
        return List_(Selection.from_json(m["selection"]))
    if op == "types":
        return Types()
    raise ValueError(f"unknown info op {op!r}")


@dataclass
class InfoReply:
    objects: List[Optional[ObjectData]] = field(default_factory=list)
    types: List[TypeData] = field(default_factory=list)

    def encode(self, w: Writer) -> None:
        w.array_len(2)
        w.array_len(len(self.objects))
        for obj in self.objects:
            if obj is None:
                w.nil()
            else:
                obj.encode(w)
        w.array_len(len(self.types))
        for t in self.types:
            t.encode(w)

    def extend(self, part: InfoReply) -> None:
        """Appends a later part of the same answer (an answer larger than a frame comes in
        several ``INFO_REPLY`` frames under one cid), in order."""
        self.objects.extend(part.objects)
        self.types.extend(part.types)

    @classmethod
    def decode(cls, r: Reader) -> InfoReply:
        r.expect_array("info reply", 2)
        reply = cls()
        for _ in range(r.read_array_len()):
            reply.objects.append(None if r.read_nil() else ObjectData.decode(r))
        for _ in range(r.read_array_len()):
            reply.types.append(TypeData.decode(r))
        return reply
