"""Argument validation: a spec wired into one validator, and :func:`validate_args`.

All-or-nothing: a detached deep-frozen copy with defaults filled, or one :class:`ToolArgsError`
listing *every* violation by JSON pointer, in a stable order. Nothing is compiled per call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final

import attrs

from acp_sidecar.tools.checkers import Check
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.json_values import FrozenDict
from acp_sidecar.tools.schema import (
    SchemaProp,
    SchemaSpec,
    checked_spec,
    properties_checker,
    schema_spec_to_json_schema,
)

__all__ = ["CompiledSpec", "compile_spec", "validate_args"]

_CACHE_SIZE: Final = 256


@attrs.frozen(eq=False)
class CompiledSpec:
    """A :data:`SchemaSpec` wired into one validator; build it with :func:`compile_spec`."""

    spec: Mapping[str, SchemaProp]
    """The (frozen) spec this validates."""
    _check: Check = attrs.field(repr=False)

    def validate(self, args: object) -> FrozenDict:
        """See :func:`validate_args`."""
        violations: list[str] = []
        value = self._check(args, "", None, violations)
        if violations:
            raise ToolArgsError(violations)
        assert type(value) is FrozenDict
        return value

    def json_schema(self) -> dict[str, Any]:
        """See :func:`~acp_sidecar.tools.schema.schema_spec_to_json_schema`."""
        return schema_spec_to_json_schema(self.spec)


def compile_spec(spec: SchemaSpec) -> CompiledSpec:
    """Wire ``spec`` into a reusable validator (cheap: props compiled themselves when built).

    Raises:
        SchemaSpecError: ``spec`` is not a mapping of names to :class:`SchemaProp`.
    """
    frozen = checked_spec(spec)
    return CompiledSpec(frozen, properties_checker(frozen))


_compiled: dict[tuple[tuple[str, int], ...], tuple[tuple[SchemaProp, ...], CompiledSpec]] = {}
_compiled_lock = threading.Lock()


def validate_args(spec: SchemaSpec | CompiledSpec, args: object) -> FrozenDict:
    """Check model-generated ``args`` against ``spec``; return them narrowed and deep-frozen.

    ``args`` is a JSON object, frozen or not. The result is a detached copy with defaults
    filled for absent optional properties (in nested objects too, when those are present),
    integral floats narrowed to ``int`` for ``integer`` props, properties in spec order.

    A plain spec is compiled on first use and cached by the identity of its props (the cache
    keeps those props alive, so an identity is never reused while cached).

    Raises:
        ToolArgsError: listing every violation, e.g. ``/files/2/path: expected string, got
            number``, ``/mode: expected one of "a", "b", got "c"``, ``/path: required
            property missing``, ``/extra: unexpected property``, ``/: expected object, got
            array``.
        SchemaSpecError: ``spec`` is not a mapping of names to :class:`SchemaProp`.
    """
    if isinstance(spec, CompiledSpec):
        return spec.validate(args)
    key = tuple((name, id(prop)) for name, prop in spec.items())
    hit = _compiled.get(key)
    if hit is None:
        compiled = compile_spec(spec)
        with _compiled_lock:
            while len(_compiled) >= _CACHE_SIZE:
                del _compiled[next(iter(_compiled))]
            _compiled[key] = (tuple(compiled.spec.values()), compiled)
    else:
        compiled = hit[1]
    return compiled.validate(args)
