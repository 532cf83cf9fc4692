"""Structuring hooks: strict JSON scalar checks, tagged and keyed unions, failures by wire path.
Unknown keys are ignored.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
    StructureHandlerNotFoundError,
)

from acp_sidecar.protocol.client import RequestPermissionOutcome
from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.initialize import AuthMethod
from acp_sidecar.protocol.session import PromptRequest
from acp_sidecar.protocol.shapes import (
    JSON_TYPE_NAMES,
    UNION_ORIGINS,
    WireError,
    fields,
    is_wire_type,
    json_type,
    tag_field,
    union_members,
    wire_name,
)
from acp_sidecar.protocol.tool_call import ToolCallContent
from acp_sidecar.protocol.updates import SessionUpdate

_UNION_NOUNS: dict[frozenset[Any], str] = {
    frozenset(get_args(ContentBlock)): "content block type",
    frozenset(get_args(SessionUpdate)): "session update",
    frozenset(get_args(ToolCallContent)): "tool call content type",
    frozenset(get_args(RequestPermissionOutcome)): "permission outcome",
    frozenset(get_args(AuthMethod)): "auth method type",
}
"""How an unknown tag of each closed union is described in errors."""


def _structure_str(obj: Any, _: Any) -> str:
    if isinstance(obj, str):
        return obj
    raise WireError(f"expected string, got {json_type(obj)}")


def _structure_int(obj: Any, _: Any) -> int:
    if isinstance(obj, int) and not isinstance(obj, bool):
        return obj
    raise WireError(f"expected integer, got {json_type(obj)}")


def _structure_float(obj: Any, _: Any) -> float:
    if isinstance(obj, int | float) and not isinstance(obj, bool):
        return float(obj)
    raise WireError(f"expected number, got {json_type(obj)}")


def _structure_bool(obj: Any, _: Any) -> bool:
    if isinstance(obj, bool):
        return obj
    raise WireError(f"expected boolean, got {json_type(obj)}")


def _structure_object(obj: Any, _: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj  # Verbatim: ``_meta`` and raw MCP configs are opaque JSON.
    raise WireError(f"expected object, got {json_type(obj)}")


def _structure_literal(obj: Any, t: Any) -> Any:
    allowed = get_args(t)
    if isinstance(obj, str | int) and not isinstance(obj, bool) and obj in allowed:
        return obj
    expected = ", ".join(repr(v) for v in allowed)
    raise WireError(f"invalid value {obj!r}; expected one of {expected}")


def _structure_string_map(obj: Any, _: Any) -> dict[str, str]:
    if not isinstance(obj, dict):
        raise WireError(f"expected object, got {json_type(obj)}")
    for key, value in obj.items():
        if not isinstance(value, str):
            raise WireError(f"expected string, got {json_type(value)}", (key,))
    return obj


def _field_hook(converter: cattrs.Converter, t: Any) -> Callable[[Any, Any], Any]:
    try:
        hook: Callable[[Any, Any], Any] = converter.get_structure_hook(t)
    except RecursionError:  # a type that holds itself: looked up when a value comes
        return converter.structure
    return hook


def _make_class_structure(converter: cattrs.Converter, cl: type) -> Callable[[Any, Any], Any]:
    """Each field by its wire key, in field order: the first that fails is the one reported
    (with its path below the key), as cattrs' detailed validation reports its first error.
    A closure over the fields, not generated code: no compile on a request's first use."""
    plan = [
        (wire_name(a.name), a.alias or a.name, _field_hook(converter, a.type), a.type)
        for a in fields(cl)
        if a.init
    ]
    required = frozenset(
        wire_name(a.name) for a in fields(cl) if a.init and a.default is attrs.NOTHING
    )

    def structure(obj: Any, _: Any) -> Any:
        if not isinstance(obj, dict):
            raise WireError(f"expected object, got {json_type(obj)}")
        values: dict[str, Any] = {}
        for key, alias, hook, t in plan:
            if key in obj:
                try:
                    values[alias] = hook(obj[key], t)
                except Exception as exc:
                    path, reason = locate(exc)
                    raise WireError(reason, (key, *path)) from exc
            elif key in required:
                raise WireError("required field missing", (key,))
        return cl(**values)

    return structure


def _make_list_structure(converter: cattrs.Converter, t: Any) -> Callable[[Any, Any], list[Any]]:
    (item,) = get_args(t) or (Any,)
    handler = converter.get_structure_hook(item)

    def structure_list(obj: Any, _: Any) -> list[Any]:
        if not isinstance(obj, list):
            raise WireError(f"expected array, got {json_type(obj)}")
        out = []
        for index, element in enumerate(obj):
            try:
                out.append(handler(element, item))
            except Exception as exc:
                path, reason = locate(exc)
                raise WireError(reason, (index, *path)) from exc
        return out

    return structure_list


def _make_tagged_structure(
    converter: cattrs.Converter,
    union: Any,
    classes: list[Any],
    nullable: bool,
    default: type | None = None,
) -> Callable[[Any, Any], Any]:
    """Dispatch on the tag ``classes`` share; without the tag, ``default`` (if any) decodes."""
    tags = [typing.cast("attrs.Attribute[Any]", tag_field(c)) for c in classes]
    if len({t.name for t in tags}) != 1:
        raise StructureHandlerNotFoundError(f"no common tag in {union}", union)
    key = wire_name(tags[0].name)
    members = frozenset(classes if default is None else [*classes, default])
    noun = _UNION_NOUNS.get(members, f"{key} value")
    by_tag: dict[str, type] = {str(t.default): c for t, c in zip(tags, classes, strict=True)}
    hooks = {tag: converter.get_structure_hook(c) for tag, c in by_tag.items()}
    default_hook = None if default is None else converter.get_structure_hook(default)

    def structure_tagged(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        if not isinstance(obj, dict):
            raise WireError(f"expected object, got {json_type(obj)}")
        if key not in obj:
            if default_hook is not None:
                return default_hook(obj, default)
            raise WireError("required field missing", (key,))
        tag = obj[key]
        hook = hooks.get(tag) if isinstance(tag, str) else None
        if hook is None:
            raise WireError(f"unknown {noun} {tag!r}", (key,))
        return hook(obj, by_tag[tag])

    return structure_tagged


def _make_keyed_structure(
    converter: cattrs.Converter, classes: list[Any], nullable: bool
) -> Callable[[Any, Any], Any]:
    """An untagged union told apart by a required key only one member has (``text``/``blob``)."""
    required = [
        {wire_name(a.name) for a in fields(c) if a.default is attrs.NOTHING} for c in classes
    ]
    keys = [r - set().union(*(o for o in required if o is not r)) for r in required]
    choices = [(k, c, converter.get_structure_hook(c)) for k, c in zip(keys, classes, strict=True)]
    expected = " or ".join(repr(k) for ks in keys for k in sorted(ks))

    def structure_keyed(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        if not isinstance(obj, dict):
            raise WireError(f"expected object, got {json_type(obj)}")
        for distinguishing, cl, hook in choices:
            if distinguishing <= obj.keys():
                return hook(obj, cl)
        raise WireError(f"expected an object with {expected}")

    return structure_keyed


def _make_scalar_union_structure(
    converter: cattrs.Converter, scalars: list[Any], nullable: bool
) -> Callable[[Any, Any], Any]:
    hooks = [converter.get_structure_hook(s) for s in scalars]
    names = [JSON_TYPE_NAMES.get(s, getattr(s, "__name__", str(s))) for s in scalars]
    expected = " or ".join(names + ["null"] * nullable)

    def structure_scalar_union(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        for scalar, hook in zip(scalars, hooks, strict=True):
            try:
                return hook(obj, scalar)
            except WireError:
                continue
        raise WireError(f"expected {expected}, got {json_type(obj)}")

    return structure_scalar_union


def _make_optional_structure(
    converter: cattrs.Converter, t: Any, nullable: bool
) -> Callable[[Any, Any], Any]:
    hook = converter.get_structure_hook(t)

    def structure_optional(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        return hook(obj, t)

    return structure_optional


def _make_union_structure(converter: cattrs.Converter, t: Any) -> Callable[[Any, Any], Any]:
    members = union_members(t)
    assert members is not None
    classes, nullable = members
    if len(classes) == 1:
        return _make_optional_structure(converter, classes[0], nullable)
    if all(is_wire_type(c) for c in classes):
        tagged = [c for c in classes if tag_field(c) is not None]
        untagged = [c for c in classes if tag_field(c) is None]
        if not untagged:
            return _make_tagged_structure(converter, t, classes, nullable)
        if len(untagged) == 1:  # the schema's default variant: the one without a tag
            return _make_tagged_structure(converter, t, tagged, nullable, default=untagged[0])
        return _make_keyed_structure(converter, classes, nullable)
    if all(c in JSON_TYPE_NAMES for c in classes):
        return _make_scalar_union_structure(converter, classes, nullable)
    raise StructureHandlerNotFoundError(f"unsupported union {t}", t)


def locate(exc: BaseException) -> tuple[tuple[str | int, ...], str]:
    """The wire path and reason of the first failure inside a structuring exception."""
    if isinstance(exc, WireError):
        return exc.path, exc.reason
    if isinstance(exc, ClassValidationError | IterableValidationError):
        first = exc.exceptions[0]
        for note in getattr(first, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                if isinstance(first, KeyError):
                    return (wire_name(note.name),), "required field missing"
                path, reason = locate(first)
                return (wire_name(note.name), *path), reason
            if isinstance(note, IterableValidationNote):
                path, reason = locate(first)
                return (note.index, *path), reason
        return locate(first)
    return (), str(exc) or type(exc).__name__


def text_prompt_request(obj: dict[str, Any]) -> PromptRequest | None:
    """``obj`` decoded as the converter decodes a :class:`PromptRequest`, for the shape nearly
    every prompt has (a session id, text blocks of ``type`` and ``text`` alone, no ``_meta``);
    ``None`` for any other shape, which the converter decodes (or refuses). Exact types only:
    a subclass of ``str`` would come out as itself from the converter."""
    if type(obj) is not dict:
        return None
    session_id = obj.get("sessionId")
    prompt = obj.get("prompt")
    if type(session_id) is not str or type(prompt) is not list or "_meta" in obj:
        return None
    blocks: list[ContentBlock] = []
    for block in prompt:
        if type(block) is not dict or len(block) != 2 or block.get("type") != "text":
            return None
        text = block.get("text")
        if type(text) is not str or type(block["type"]) is not str:
            return None
        blocks.append(TextContentBlock(text=text))
    return PromptRequest(session_id=session_id, prompt=blocks)


def _is_json_object(t: Any) -> bool:
    return bool(t == dict[str, Any])


def _is_string_map(t: Any) -> bool:
    return bool(t == dict[str, str])


def _is_literal(t: Any) -> bool:
    return get_origin(t) is Literal


def _is_list(t: Any) -> bool:
    return get_origin(t) is list


def _is_union(t: Any) -> bool:
    return get_origin(t) in UNION_ORIGINS


def install(converter: cattrs.Converter) -> None:
    """Register the structuring hooks on ``converter`` (its factories build on it)."""
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(float, _structure_float)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook_func(_is_json_object, _structure_object)
    converter.register_structure_hook_func(_is_string_map, _structure_string_map)
    converter.register_structure_hook_func(_is_literal, _structure_literal)
    converter.register_structure_hook_factory(_is_list, partial(_make_list_structure, converter))
    converter.register_structure_hook_factory(_is_union, partial(_make_union_structure, converter))
    converter.register_structure_hook_factory(
        is_wire_type, partial(_make_class_structure, converter)
    )
