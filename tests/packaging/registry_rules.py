"""The ACP registry's rules for an entry, as the registry documents and checks them.

Sources (github.com/agentclientprotocol/registry, read at commit ``3de1678``): the JSON schema
``agent.schema.json`` (vendored in ``tests/fixtures/acp-registry/``, see ``SOURCE.md``
there), ``CONTRIBUTING.md`` ("Validation": id, version, distribution, icon) and the CI script
``.github/workflows/build_registry.py`` that enforces them. Each function returns the
problems it finds as readable strings — an empty tuple means the registry would accept it —
so a test can assert both that our entry passes and that a broken one is caught.

The registry's CI reads the icon's size and colours with regular expressions; these checks
parse the SVG as XML and are stricter: an icon must be well formed, 16×16 by its
``width``/``height`` *and* its ``viewBox`` (so it is drawn on the pixel grid it was made for;
the registry accepts any square ``viewBox`` once ``width``/``height`` say 16), paint only with
``currentColor`` (or ``none``/``inherit``) in attributes and ``style``, and carry no script,
style sheet or external reference. What the registry checks against the network (the PyPI package exists) and
against a running agent (``authMethods``) is not checked here.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

SCHEMA_PATH = (
    Path(__file__).resolve().parents[1] / "fixtures" / "acp-registry" / "agent.schema.json"
)

ID_PATTERN = re.compile(r"[a-z][a-z0-9-]*")
"""CONTRIBUTING.md: lowercase letters, digits and hyphens, starting with a letter."""

VERSION_PATTERN = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
"""CONTRIBUTING.md: ``x.y.z``, every part numeric."""

DISTRIBUTIONS = ("binary", "npx", "uvx")
OS_FAMILIES = ("darwin", "linux", "windows")

PINNED_PYPI = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:==|@)(?P<version>[0-9][0-9.]*)$")
"""A PyPI package pinned the two ways CONTRIBUTING.md names: ``pkg==1.0.0`` or ``pkg@1.0.0``."""

ICON_SIZE = 16
PAINT_VALUES = frozenset({"currentcolor", "none", "inherit"})
"""CONTRIBUTING.md: ``fill`` and ``stroke`` may only be ``currentColor``, ``none`` or
``inherit`` (compared without case, as the registry's CI does)."""

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
FORBIDDEN_ELEMENTS = frozenset({"script", "foreignObject", "image", "iframe", "embed", "object"})
COLOUR_PROPERTIES = ("fill", "stroke", "color", "stop-color", "flood-color", "lighting-color")


def load_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def entry_problems(entry: Any, directory: str) -> tuple[str, ...]:
    """What the registry would refuse in ``agent.json`` kept in ``<directory>/``."""
    schema_errors = sorted(
        Draft7Validator(load_schema()).iter_errors(entry), key=lambda error: list(error.path)
    )
    if schema_errors:
        return tuple(
            f"schema: {'.'.join(map(str, error.absolute_path)) or 'root'}: {error.message}"
            for error in schema_errors
        )
    problems: list[str] = []
    if not ID_PATTERN.fullmatch(entry["id"]):
        problems.append(f"id {entry['id']!r}: lowercase letters, digits and hyphens only")
    if entry["id"] != directory:
        problems.append(f"id {entry['id']!r} must match its directory {directory!r}")
    version = entry["version"]
    if not VERSION_PATTERN.fullmatch(version):
        problems.append(f"version {version!r} must be x.y.z, all numeric")
    problems.extend(_distribution_problems(entry["distribution"], version))
    return tuple(problems)


def _distribution_problems(distribution: Mapping[str, Any], version: str) -> list[str]:
    problems: list[str] = []
    if not any(kind in distribution for kind in DISTRIBUTIONS):
        problems.append("distribution: at least one of binary, npx, uvx")
    binary = distribution.get("binary")
    if binary is not None:
        families = {platform.split("-")[0] for platform in binary}
        missing = [family for family in OS_FAMILIES if family not in families]
        if missing:
            problems.append(f"distribution.binary: no build for {', '.join(missing)}")
        for platform, target in binary.items():
            if "/latest/" in target["archive"]:
                problems.append(f"distribution.binary.{platform}: a /latest/ URL")
    npx = distribution.get("npx")
    if npx is not None and npx["package"].lower().endswith("@latest"):
        problems.append("distribution.npx: @latest instead of a version")
    uvx = distribution.get("uvx")
    if uvx is not None:
        package = uvx["package"]
        pinned = PINNED_PYPI.match(package)
        if "@latest" in package.lower():
            problems.append("distribution.uvx: @latest instead of a version")
        elif pinned is None:
            problems.append(
                f"distribution.uvx: {package!r} is not pinned (name==version or name@version)"
            )
        elif pinned["version"] != version:
            problems.append(
                f"distribution.uvx: pins {pinned['version']}, the entry's version is {version}"
            )
    return problems


def icon_problems(svg: str) -> tuple[str, ...]:
    """What the registry's documented icon rules refuse in ``icon.svg``'s text."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as error:
        return (f"not well-formed XML: {error}",)
    if root.tag != f"{{{SVG_NS}}}svg":
        return (f"the root element is {root.tag!r}, not an SVG <svg>",)
    problems = _size_problems(root)
    uses_current_color = False
    for element in root.iter():
        name = element.tag.rpartition("}")[2]
        if name in FORBIDDEN_ELEMENTS:
            problems.append(f"<{name}> is not allowed in an icon")
        for attribute, value in element.attrib.items():
            key = attribute.rpartition("}")[2]
            if key.lower().startswith("on"):
                problems.append(f"<{name}> has an event handler {key!r}")
            if attribute in ("href", XLINK_HREF) and not value.startswith("#"):
                problems.append(f"<{name}> refers outside the icon: {value!r}")
            if "url(" in value and not re.search(r"url\(\s*#", value):
                problems.append(f"<{name}> {key} refers outside the icon: {value!r}")
            if key in COLOUR_PROPERTIES:
                uses_current_color |= value.strip().lower() == "currentcolor"
                problems.extend(_paint_problems(name, key, value))
            if key == "style":
                for declaration in value.split(";"):
                    prop, _, prop_value = declaration.partition(":")
                    if prop.strip() in COLOUR_PROPERTIES:
                        uses_current_color |= prop_value.strip().lower() == "currentcolor"
                        problems.extend(_paint_problems(name, f"style {prop.strip()}", prop_value))
        if name == "style":
            problems.append("a <style> sheet is not allowed: paint with attributes")
    if not uses_current_color:
        problems.append("the icon never paints with currentColor")
    return tuple(problems)


def _paint_problems(element: str, what: str, value: str) -> list[str]:
    if value.strip().lower() in PAINT_VALUES:
        return []
    return [f"<{element}> {what}={value.strip()!r}: only currentColor, none or inherit"]


def _size_problems(root: ET.Element) -> list[str]:
    problems: list[str] = []
    width, height = root.get("width"), root.get("height")
    if width is None or height is None:
        problems.append("the <svg> has no width and height")
    elif (width, height) != (str(ICON_SIZE), str(ICON_SIZE)):
        problems.append(f"the <svg> is {width}×{height}, not {ICON_SIZE}×{ICON_SIZE}")
    view_box = root.get("viewBox")
    if view_box is None:
        problems.append("the <svg> has no viewBox")
    else:
        numbers = re.split(r"[\s,]+", view_box.strip())
        size = numbers[2:] if len(numbers) == 4 else []
        if not all(re.fullmatch(r"[0-9.]+", n) for n in size) or [float(n) for n in size] != [
            ICON_SIZE,
            ICON_SIZE,
        ]:
            problems.append(f"the viewBox {view_box!r} is not {ICON_SIZE}×{ICON_SIZE}")
    return problems
