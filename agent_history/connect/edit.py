"""Structural edits of agent config files: text in, text out (pure).

JSON (`json_set`, `json_remove`): parsed with `json`, the key path set or removed, written back
with 2-space indentation; every other key keeps its value and position (dicts keep insertion
order). JSON with comments cannot be rewritten without losing them, so unparsable text raises
`EditError` (the caller then shows the snippet to paste by hand).

TOML (`toml_set`, `toml_remove`): a new server table is appended at the end of the file as
``[parent.name]`` (text untouched above it); an existing one is replaced in place and removed with
`tomlkit`, which keeps comments, blank lines, ordering and formatting of everything else. A
parent written as an inline table cannot take a sub-table: `EditError`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError


class EditError(ValueError):
    """The existing file cannot be edited structurally (invalid JSON/TOML or a non-table on the path)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice raises EditError (rewriting the file would
    keep only the last value and lose the other)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise EditError(f"the key {key!r} appears twice in one object")
        data[key] = value
    return data


def _parse_json(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        data = json.loads(text, object_pairs_hook=_unique)
    except EditError:
        raise
    except ValueError as exc:
        raise EditError(f"not plain JSON ({exc.msg} at line {exc.lineno}); comments or trailing commas?") from None
    if not isinstance(data, dict):
        raise EditError("the top level is not a JSON object")
    return data


def _dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def json_get(text: str, path: Sequence[str]) -> Any:
    """The value at `path` in JSON `text`, or None."""
    node: Any = _parse_json(text)
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def json_set(text: str, path: Sequence[str], value: Any) -> str:
    """`text` with `value` at key `path` (intermediate objects created). Raises EditError."""
    data = _parse_json(text)
    node = data
    for key in path[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise EditError(f"{'.'.join(path[:-1])} is not an object")
        node = child
    node[path[-1]] = value
    return _dump_json(data)


def json_remove(text: str, path: Sequence[str]) -> str:
    """`text` without key `path` (unchanged text when absent). Raises EditError."""
    data = _parse_json(text)
    node: Any = data
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return text
    if not isinstance(node, dict) or path[-1] not in node:
        return text
    del node[path[-1]]
    return _dump_json(data)


def _parse_toml(text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise EditError(f"not valid TOML: {exc}") from None


def toml_get(text: str, path: Sequence[str]) -> Any:
    """The value at `path` in TOML `text` as plain Python, or None."""
    node: Any = _parse_toml(text).unwrap()
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _toml_table(table: dict[str, Any]) -> Any:
    new = tomlkit.table()
    for k, v in table.items():
        if isinstance(v, dict):
            inline = tomlkit.inline_table()
            inline.update(v)
            new[k] = inline
        else:
            new[k] = v
    return new


def toml_set(text: str, path: Sequence[str], table: dict[str, Any]) -> str:
    """`text` with the table at `path` set to `table`. Raises EditError.

    A new table is appended at the end of the file as ``[a.b]`` (valid TOML wherever the parent
    table is, and it leaves every other line untouched); an existing one is replaced in place.
    """
    doc = _parse_toml(text)
    if toml_get(text, path) is None:
        block = tomlkit.dumps({path[0]: _nest(path[1:], _toml_table(table))}) if len(path) > 1 else None
        if block is not None:
            sep = "" if not text.strip() else ("\n" if text.endswith("\n") else "\n\n")
            out = text + sep + block
            try:
                if toml_get(out, path) == table:
                    return out
            except EditError:
                pass  # e.g. the parent is an inline table: insert structurally below
    node: Any = doc
    for key in path[:-1]:
        if key not in node:
            node[key] = tomlkit.table(is_super_table=True)
        node = node[key]
        if not isinstance(node, dict):
            raise EditError(f"{'.'.join(path[:-1])} is not a table")
    try:
        node[path[-1]] = _toml_table(table)
    except ValueError as exc:  # e.g. the parent is an inline table
        raise EditError(f"cannot add a table under {'.'.join(path[:-1])}: {exc}") from None
    out = tomlkit.dumps(doc)
    return out if out.endswith("\n") else out + "\n"


def _nest(path: Sequence[str], leaf: Any) -> Any:
    """``{a: {b: leaf}}`` as super-tables, so only the leaf's header is written."""
    if not path:
        return leaf
    if len(path) == 1:
        outer = tomlkit.table(is_super_table=True)
        outer[path[0]] = leaf
        return outer
    outer = tomlkit.table(is_super_table=True)
    outer[path[0]] = _nest(path[1:], leaf)
    return outer


def toml_remove(text: str, path: Sequence[str]) -> str:
    """`text` without the key/table at `path` (unchanged when absent); blank lines left at the
    end of the file by the removal are dropped. Comment lines that end the removed table's
    block (the user's note above the next table, which tomlkit counts as the table's) stay
    (`_keep_trailing_comments`). Raises EditError."""
    doc = _parse_toml(text)
    node: Any = doc
    for key in path[:-1]:
        if not isinstance(node, dict) or key not in node:
            return text
        node = node[key]
    if not isinstance(node, dict) or path[-1] not in node:
        return text
    del node[path[-1]]
    out = tomlkit.dumps(doc)
    out = _keep_trailing_comments(text, path, out)
    return out.rstrip("\n") + "\n" if out.strip() else ""


def _header_path(line: str) -> tuple[str, ...] | None:
    """The key path of a ``[a.b]`` table header line, None for any other line."""
    if not line.lstrip().startswith("[") or line.lstrip().startswith("[["):
        return None
    try:
        node: Any = tomlkit.parse(line).unwrap()
    except TOMLKitError:
        return None
    keys: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key, node = next(iter(node.items()))
        keys.append(key)
    return tuple(keys) if node == {} else None


def _keep_trailing_comments(text: str, path: Sequence[str], removed: str) -> str:
    """`removed` (tomlkit's `text` without table `path`), or — when that table's block in `text`
    ends with comment lines — `text` with the table's header and keys cut out and those comment
    lines left where they were; used only when it parses to the same document as `removed`."""
    lines = text.splitlines(keepends=True)
    start = next((n for n, line in enumerate(lines) if _header_path(line) == tuple(path)), None)
    if start is None:
        return removed
    end = next((n for n in range(start + 1, len(lines)) if _header_path(lines[n]) is not None), len(lines))
    last = max(n for n in range(start, end) if lines[n].strip() and not lines[n].lstrip().startswith("#"))
    kept = [line for line in lines[last + 1 : end] if line.strip()]
    if not kept:
        return removed
    out = "".join(lines[:start] + kept + lines[end:])
    try:
        same = tomlkit.parse(out).unwrap() == tomlkit.parse(removed).unwrap()
    except TOMLKitError:
        return removed
    return out if same else removed
