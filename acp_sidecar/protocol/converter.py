"""The one cattrs converter for ACP wire types, and the :func:`to_wire` / :func:`from_wire` seam.

Hooks are generated lazily, on first use of a type, so importing costs almost nothing. They
apply only to :class:`WireType` subclasses: other attrs classes that pass through the
converter (pygls's JSON-RPC envelopes) keep cattrs' default handling.
"""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
from cattrs.errors import StructureHandlerNotFoundError

from acp_sidecar.protocol import decoding
from acp_sidecar.protocol.encoding import to_wire, unstructure_hook
from acp_sidecar.protocol.errors import ProtocolParamsError
from acp_sidecar.protocol.shapes import is_wire_type, wire_name

__all__ = ["converter", "from_wire", "to_wire", "wire_name"]

T = TypeVar("T")

converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
"""The converter for every ACP wire type (also usable for pygls's envelopes)."""


def from_wire(data: Any, cls: type[T]) -> T:
    """Decode a wire JSON value into ``cls``; unknown keys are ignored.

    Raises :class:`ProtocolParamsError` naming the offending field's wire path.
    """
    try:
        return converter.structure(data, cls)
    except StructureHandlerNotFoundError:
        raise
    except Exception as exc:
        path, reason = decoding.locate(exc)
        raise ProtocolParamsError("/".join(str(p) for p in path), reason) from exc


converter.register_unstructure_hook_factory(is_wire_type, unstructure_hook)
decoding.install(converter)
