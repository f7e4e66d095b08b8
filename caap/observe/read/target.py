"""The reader's record: the short structured string its decoder writes for one element.

Target format (version 1)::

    TYPE(|KEY=VALUE)*

    TYPE   an ``ElementType`` value: button, text, icon, ...
    KEY    one letter per attribute: c=checked  f=focused  h=highlighted  e=expanded  s=subtype  t=text
    VALUE  booleans 0/1; subtype a taxonomy name; text escaped (below)

    button|f=0|t=Submit            checkbox|c=1|t=Remember me       icon|c=0|s=important
    text|h=1|t=a\\|b\\=c\\nd        scrollbar                        text_area|f=1|t=

Fields come in the fixed order c, f, h, s, t — text last, so a generation cut short loses only the
end of the text. Only the attributes the type carries (``taxonomy.TYPE_ATTRIBUTES``) appear, and
only when known: a null attribute is omitted, an empty text is ``t=``. In text, ``\\`` ``|`` ``=``
newline, carriage return and tab are written ``\\\\`` ``\\|`` ``\\=`` ``\\n`` ``\\r`` ``\\t``; every
other character is written as itself — the tokenizer is byte-level.

Decoding never raises on a generation: one whose first field is not a type name becomes
``Element(type=unknown, text=<the raw generation>)``; unknown keys, attributes the type does not
carry, booleans other than 0/1, subtypes outside the taxonomy and repeated keys (after the first)
are dropped; an unknown escape ``\\x`` reads as ``x`` and a trailing ``\\`` as itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caap.elements import Element
from caap.geometry import as_box
from caap.taxonomy import (
    BOOLEAN_ATTRIBUTES,
    CHECKED,
    EXPANDED,
    FOCUSED,
    HIGHLIGHTED,
    SUBTYPE,
    TEXT,
    ElementType,
    attributes_of,
    subtypes_of,
)

TARGET_FORMAT = 1
# Attribute → key letter, in the order fields are written (text last).
KEYS: dict[str, str] = {CHECKED: "c", FOCUSED: "f", HIGHLIGHTED: "h", EXPANDED: "e", SUBTYPE: "s", TEXT: "t"}
_ATTR_OF_KEY = {v: k for k, v in KEYS.items()}
_ESCAPE = {"\\": "\\\\", "|": "\\|", "=": "\\=", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPE = {"\\": "\\", "|": "|", "=": "=", "n": "\n", "r": "\r", "t": "\t"}
TYPES = {t.value: t for t in ElementType}


def escape_text(text: str) -> str:
    return "".join(_ESCAPE.get(ch, ch) for ch in text)


def encode_target(element: Element) -> str:
    """The target string of an element (see the module docstring)."""
    parts = [element.type.value]
    carried = attributes_of(element.type)
    for name, key in KEYS.items():
        if name not in carried:
            continue
        value = getattr(element, name)
        if value is None:
            continue
        if name in BOOLEAN_ATTRIBUTES:
            parts.append(f"{key}={int(bool(value))}")
        elif name == TEXT:
            parts.append(f"{key}={escape_text(value)}")
        else:
            parts.append(f"{key}={value}")
    return "|".join(parts)


def _split_fields(text: str) -> list[tuple[str, str | None]]:
    """Unescaped fields as ``(before '=', after '=' or None)``, splitting on unescaped ``|`` and ``=``."""
    fields: list[tuple[str, str | None]] = []
    key: list[str] = []
    value: list[str] | None = None
    i, n = 0, len(text)
    while i <= n:
        ch = text[i] if i < n else "|"  # a virtual separator closes the last field
        if ch == "\\" and i < n:
            if i + 1 < n:
                nxt = text[i + 1]
                (key if value is None else value).append(_UNESCAPE.get(nxt, nxt))
                i += 2
                continue
            (key if value is None else value).append("\\")  # a trailing lone backslash is itself
        elif ch == "|":
            fields.append(("".join(key), None if value is None else "".join(value)))
            key, value = [], None
        elif ch == "=" and value is None:
            value = []
        else:
            (key if value is None else value).append(ch)
        i += 1
    return fields


def decode_target(text: str, bbox: Sequence[int]) -> Element:
    """An element from a generated target string; never raises on the string (see the module
    docstring). ``bbox`` must be a valid box (``geometry.as_box``) — that is the caller's part."""
    box = as_box(bbox)
    raw = text if isinstance(text, str) else str(text)
    fields = _split_fields(raw)  # not stripped: spaces at the end of a text are part of it
    head, head_value = fields[0]
    element_type = TYPES.get(head)
    if element_type is None or head_value is not None:
        return Element(type=ElementType.UNKNOWN, bbox=box, text=raw or None)
    carried = attributes_of(element_type)
    values: dict[str, Any] = {}
    for key, value in fields[1:]:
        name = _ATTR_OF_KEY.get(key)
        if name is None or value is None or name not in carried or name in values:
            continue
        if name in BOOLEAN_ATTRIBUTES:
            if value in ("0", "1"):
                values[name] = value == "1"
        elif name == SUBTYPE:
            if value in subtypes_of(element_type):
                values[name] = value
        else:
            values[name] = value
    try:
        return Element(type=element_type, bbox=box, **values)
    except ValueError:  # cannot happen with the checks above; belt and braces for "never raises"
        return Element(type=ElementType.UNKNOWN, bbox=box, text=raw or None)


class RecordGrammar:
    """Every record the target format allows, as a trie of decoder tokens, for constrained
    generation: the decoder only chooses among valid continuations, so a record is always
    parseable and never runs past its end. A byte-level decoder that cannot tell ``but|t`` from
    ``butt|o`` (measured: 0.51 against 0.49 after 700k samples) still writes ``button``, because no
    type name continues ``buttt``.

    The records are produced by ``encode_target`` itself over every type and every combination of
    the attribute values the taxonomy allows (``None`` included), so the grammar cannot drift from
    the format. With ``text``, the node after ``t=`` is free: any token may follow until the end.
    ``allowed(..., element_type)`` keeps to the records of one type (the detector's class, when the
    observer takes the type from the detector: the decoder then writes that class's attributes)."""

    def __init__(self, tokenizer: Any, *, text: bool) -> None:
        from itertools import product

        self.eos = int(tokenizer.eos_token_id)
        self.vocab = len(tokenizer)
        self._root: dict[Any, Any] = {}
        self._roots: dict[ElementType, dict[Any, Any]] = {}
        self._memo: dict[tuple[Any, ...], list[int]] = {}
        box = (0, 0, 1, 1)
        for element_type in ElementType:
            if element_type is ElementType.UNKNOWN:
                continue
            carried = [n for n in KEYS if n in attributes_of(element_type) and n != TEXT]
            choices = [(None, *((False, True) if n in BOOLEAN_ATTRIBUTES else subtypes_of(element_type)))
                       for n in carried]
            texts = (None, "") if text and TEXT in attributes_of(element_type) else (None,)
            for values in product(*choices, texts):
                fields = dict(zip([*carried, TEXT], values, strict=True))
                record = encode_target(Element(type=element_type, bbox=box, **fields))
                for node in (self._root, self._roots.setdefault(element_type, {})):
                    for token in tokenizer(record, add_special_tokens=False).input_ids:
                        node = node.setdefault(int(token), {})
                    node[self.eos] = {}
                    if fields[TEXT] == "":
                        node["free"] = True
        self.longest = self._depth(self._root)

    def _depth(self, node: dict[Any, Any]) -> int:
        return max((1 + self._depth(child) for key, child in node.items() if key != "free"), default=0)

    def allowed(self, generated: Sequence[int], element_type: ElementType | None = None) -> list[int]:
        """The tokens that may follow ``generated`` (the decoder's output after its start token) in
        a record of any type, or of ``element_type``."""
        key = (element_type, *generated)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        root = self._root if element_type is None else self._roots.get(element_type)
        node: dict[Any, Any] | None = root if root is not None else self._root
        for token in key[1:]:
            assert node is not None  # the walk stops where it leaves the grammar
            if node.get("free"):
                break
            node = node.get(token)
            if node is None or token == self.eos:
                node = None
                break
        if node is None:
            out = [self.eos]  # finished (or off the grammar, which constrained generation cannot reach)
        elif node.get("free"):
            out = list(range(self.vocab))
        else:
            out = [k for k in node if k != "free"]
        if len(self._memo) < 100_000:
            self._memo[key] = out
        return out


def _allowed(grammar: RecordGrammar, types: Sequence[ElementType | None], row: int, ids: Any) -> list[int]:
    """``generate``'s prefix_allowed_tokens_fn: ``ids`` starts with the decoder's start token."""
    return grammar.allowed(ids[1:].tolist(), types[row])


def same_record(read: Element, gold: Element) -> bool:
    """Whether a read element agrees with its label on type and every attribute of the record its
    type carries that the label knows (the exact-match metric; a null in the label is unknown, not
    scored, as the attribute accuracies do: a label made before buttons carried ``checked`` does not
    know it). The states the record does not write (``enabled``, ``indeterminate``, ``value``: the
    state head's and the level rule's) are scored on their own."""
    return read.type == gold.type and all(
        getattr(gold, n) is None or getattr(read, n) == getattr(gold, n) for n in attributes_of(gold.type) if n in KEYS)
