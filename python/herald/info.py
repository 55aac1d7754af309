"""Information objects: declare types, set, get and list objects (INFO / INFO_REPLY).

An answer larger than a frame (a list of 100,000 objects) comes in parts that the connection
joins; a request larger than a frame (a get of very many names) raises RequestTooLargeError
at the call and is not sent."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from .wire.frames import Frame, Info, InfoReplyFrame, InfoSubscribe
from .wire.info import (
    AttributeData,
    Declare,
    Get,
    InfoReply,
    InfoRequest,
    List_,
    ObjectData,
    Selection,
    TypeData,
    Update,
    UpdateMode,
)
from .wire.record import Kind

if TYPE_CHECKING:
    from .connection import Connection
    from .subscription import Delivered, Subscription


def object_dict(obj: ObjectData) -> Dict[str, Any]:
    """An object as a dict: ``name``, ``type``, ``time``, ``version``, ``attributes``."""
    return {
        "name": obj.name,
        "type": obj.type,
        "time": obj.time,
        "version": obj.version,
        "attributes": dict(obj.attributes),
    }


@dataclass
class InfoChange:
    """One change of an object from :meth:`Client.subscribe_info`: ``reason`` is
    ``snapshot`` (its value when the subscription started), ``created``, ``updated`` or
    ``deleted``; ``object`` is the object after it (for ``deleted``, as it was, with its version
    advanced) as a dict like :meth:`Client.get_info`'s."""

    reason: str
    object: Dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.object["name"])

    @classmethod
    def from_delivered(cls, delivered: Delivered) -> Optional[InfoChange]:
        """The change a delivered record of kind ``info`` carries; None for other records."""
        record = delivered.record
        if record.kind != Kind.INFO:
            return None
        return cls(
            reason=record.text,
            object={
                "name": record.subject,
                "type": record.type,
                "time": record.time,
                "version": record.id or 0,
                "attributes": dict(record.fields),
            },
        )


class InfoMixin:
    """The information-object calls of :class:`herald.Client`."""

    _conn: Connection

    def _subscribe_with(
        self,
        frame_for: Callable[[int, int], Frame],
        what: str,
        callback: Optional[Callable[[Delivered], Any]],
        timeout: float,
    ) -> Subscription:
        raise NotImplementedError

    def subscribe_info(
        self,
        regex: Optional[str] = None,
        types: Optional[str] = None,
        any: bool = False,
        callback: Optional[Callable[[Delivered], Any]] = None,
        timeout: float = 10.0,
    ) -> Subscription:
        """Subscribes to the objects whose name matches ``regex`` and (or, with ``any``) whose
        type matches ``types``: first the current value of each (reason ``snapshot``), then
        every change, none lost or repeated between the two. Read each delivered record with
        :meth:`InfoChange.from_delivered`. A bad selection raises ServerError (``bad_info``)."""
        selection = Selection(regex, types, any)
        return self._subscribe_with(
            lambda cid, sid: InfoSubscribe(cid, sid, selection),
            "INFO_SUBSCRIBE",
            callback,
            timeout,
        )

    def _info(self, request: InfoRequest, timeout: float) -> InfoReply:
        reply = self._conn.request(lambda cid: Info(cid, request), timeout, "INFO")
        assert isinstance(reply, InfoReplyFrame)
        return reply.reply

    def declare_type(
        self,
        name: str,
        attributes: Sequence[Tuple[str, str, str]] = (),
        base: Optional[str] = None,
        description: str = "",
        timeout: float = 10.0,
    ) -> None:
        """Declares (or redeclares) a type with ``(name, type, description)`` attributes."""
        data = TypeData(
            name=name,
            base=base,
            description=description,
            attributes=[AttributeData(*a) for a in attributes],
        )
        self._info(Declare(data), timeout)

    def set_info(
        self,
        name: str,
        type: Optional[str] = None,
        *,
        timeout: float = 10.0,
        **attributes: Any,
    ) -> Dict[str, Any]:
        """Creates or updates object ``name``; returns the object as the server keeps it."""
        request = Update(UpdateMode.UPSERT, name, type, time.time_ns(), dict(attributes))
        reply = self._info(request, timeout)
        objects = [o for o in reply.objects if o is not None]
        if not objects:
            found = self.get_info(name, timeout=timeout)
            assert found is not None
            return found
        return object_dict(objects[0])

    def get_info(self, name: str, timeout: float = 10.0) -> Optional[Dict[str, Any]]:
        """Object ``name``, or None if there is none."""
        found = self.get_infos([name], timeout)
        return found[0] if found else None

    def get_infos(
        self, names: Sequence[str], timeout: float = 10.0
    ) -> List[Optional[Dict[str, Any]]]:
        """Objects ``names``, all as they were at one instant, in order (None where there is
        none). A request larger than the server's frame (very many names) raises
        RequestTooLargeError and is not sent: ask in smaller groups."""
        reply = self._info(Get(list(names)), timeout)
        return [None if o is None else object_dict(o) for o in reply.objects]

    def list_info(
        self,
        regex: Optional[str] = None,
        types: Optional[str] = None,
        any: bool = False,
        timeout: float = 10.0,
    ) -> List[Dict[str, Any]]:
        """Objects whose name matches ``regex`` and (or, with ``any``) whose type matches
        ``types``, by name. However many there are: an answer larger than a frame comes in
        parts, joined before it is returned (``timeout`` is for the whole answer)."""
        reply = self._info(List_(Selection(regex, types, any)), timeout)
        return [object_dict(o) for o in reply.objects if o is not None]
