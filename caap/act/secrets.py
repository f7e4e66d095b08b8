"""Secrets a run is given: the task and the model speak of each as ``{NAME}``, and only the executor
ever types its value.

A user gives them as ``--secret NAME=VALUE`` (repeatable) or ``CAAP_SECRET_NAME=VALUE`` in the
environment. The task says ``{NAME}`` where the value goes; the prompt shows the placeholder, the
model answers with it, and the executor fills it in as it types (``fill``). A value the screen
shows back (a field that does not mask what is typed) is written as its placeholder in the
element list (``redact``), so it reaches neither the model nor any file a run writes, and the
trace's screenshots are blacked out where a secret was typed (``caap.agent.trace``).

Names are upper-case letters, digits and underscores, starting with a letter, so a task's own
braces (``{x}``, ``{ "a": 1 }``) are never taken for a placeholder. A value shorter than
``MIN_LENGTH`` is refused: it would be found in ordinary text, and redacting it there would garble
what the model reads.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from caap.elements import Element, element_at
from caap.geometry import Box


def box_of(element: Element) -> Box:
    x1, y1, x2, y2 = element.bbox
    return (x1, y1, x2, y2)

ENV_PREFIX = "CAAP_SECRET_"
MIN_LENGTH = 4
_NAME = r"[A-Z][A-Z0-9_]{0,63}"
NAME = re.compile(rf"^{_NAME}$")
PLACEHOLDER = re.compile(rf"\{{({_NAME})\}}")


# What a field that hides its text draws for each character (GTK and Qt: bullets; Tk and web: often *).
MASK_CHARACTERS = frozenset("•●∙·*")


def masks_itself(text: str | None) -> bool:
    """Whether a field's reading is only mask characters: it hides what was typed into it."""
    shown = (text or "").replace(" ", "")
    return bool(shown) and all(ch in MASK_CHARACTERS for ch in shown)


class SecretError(ValueError):
    """A secret is malformed, or the task needs one the run was not given; the message says which."""


def placeholder(name: str) -> str:
    return "{" + name + "}"


def placeholders(text: str) -> list[str]:
    """The secret names ``text`` speaks of (``{NAME}``), in order, each once."""
    return list(dict.fromkeys(PLACEHOLDER.findall(text or "")))


@dataclass(frozen=True)
class Secrets:
    """The run's secrets by name. Its ``repr`` names them and never shows a value."""

    values: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, flags: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> Secrets:
        """The secrets of ``--secret NAME=VALUE`` flags and of ``CAAP_SECRET_NAME`` variables (a
        flag wins over the environment)."""
        values: dict[str, str] = {}
        env = os.environ if environ is None else environ
        for key, value in env.items():
            if key.startswith(ENV_PREFIX) and len(key) > len(ENV_PREFIX):
                values[_checked_name(key[len(ENV_PREFIX):], f"environment variable {key}")] = value
        for flag in flags:
            name, sep, value = flag.partition("=")
            if not sep:
                raise SecretError(f"--secret {name.strip() or '...'}: expected NAME=VALUE")
            values[_checked_name(name.strip(), f"--secret {name.strip()}")] = value
        return cls.of(values)

    @classmethod
    def of(cls, values: Mapping[str, str]) -> Secrets:
        """Secrets from a mapping of names to values, each name and value checked."""
        for name, value in values.items():
            _checked_name(name, f"secret {name}")
            if len(value) < MIN_LENGTH:
                raise SecretError(f"secret {name}: a value of fewer than {MIN_LENGTH} characters cannot be kept "
                                  "out of what the run writes (it would be found in ordinary text)")
        return cls(dict(values))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.values)

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return f"Secrets({', '.join(self.values)})"

    def check(self, task: str) -> None:
        """One clear error if ``task`` speaks of a secret this run was not given."""
        missing = [n for n in placeholders(task) if n not in self.values]
        if missing:
            named = ", ".join(placeholder(n) for n in missing)
            give = " ".join(f"--secret {n}=VALUE" for n in missing)
            raise SecretError(f"the task needs {named}, which this run was not given: pass {give} "
                              f"(or set {ENV_PREFIX}{missing[0]})")

    def fill(self, text: str) -> str:
        """``text`` with each given secret's placeholder replaced by its value (what the executor types)."""
        return PLACEHOLDER.sub(lambda m: self.values.get(m.group(1), m.group(0)), text)

    def redact(self, text: str) -> str:
        """``text`` with every secret value (as written, or escaped inside JSON) replaced by its
        placeholder; the longest values first, so one that holds another is found whole."""
        for name, value in sorted(self.values.items(), key=lambda kv: -len(kv[1])):
            for form in _forms(value):
                text = text.replace(form, placeholder(name))
        return text

    def redact_reading(self, text: str) -> str:
        """``redact`` for what was read off the screen, where a reader may get a character or two
        wrong (``Transylvania-4Z``): a run of words as long as a value and at most ``NEAR`` of its
        characters away from it is its placeholder too."""
        text = self.redact(text)
        for name, value in sorted(self.values.items(), key=lambda kv: -len(kv[1])):
            text = _near_replaced(text, value, placeholder(name))
        return text

    def hide_in(self, elements: Sequence[Element] | None) -> list[Box]:
        """Each secret value the elements' texts show (a field that does not mask what was typed),
        read a character or two off included, written as its placeholder, in place; the boxes
        where one showed, for the screenshots to black out."""
        shown: list[Box] = []
        if not self.values:
            return shown
        for e in elements or ():
            if e.text:
                hidden = self.redact_reading(e.text)
                if hidden != e.text:
                    e.text = hidden
                    shown.append(box_of(e))
        return shown

    def named_for(self, task: str, name: str, label: str) -> bool:
        """Whether ``label`` (a field's text and label) holds a word the task writes just before
        ``{name}`` (``password "{PASSWORD}"``, ``City: {CITY}``): the task names that field for it."""
        at = task.find(placeholder(name))
        before = [w for w in _WORDS.findall(task[:max(at, 0)].lower())[-3:] if w not in _FILLERS]
        return bool(set(before) & set(_WORDS.findall(label.lower())))

    def in_text(self, text: str) -> bool:
        """Whether ``text`` types a secret: it holds a given secret's placeholder."""
        return any(n in self.values for n in placeholders(text))


_WORDS = re.compile(r"[^\W\d_]+")
_FILLERS = frozenset({"the", "a", "an", "and", "with", "into", "in", "as", "to", "of", "your", "my", "is", "enter",
                      "type", "field", "box"})
NEAR = 0.25  # a reading this share of a value's characters away from it (edits) is taken for it


def _near_replaced(text: str, value: str, mark: str) -> str:
    """``text`` with each run of whole words within ``NEAR`` edits of ``value`` replaced by ``mark``."""
    words = text.split(" ")
    span = value.count(" ") + 1
    out: list[str] = []
    i = 0
    while i < len(words):
        hit = 0
        for n in (span, span - 1, span + 1):
            if n >= 1 and i + n <= len(words) and _near(" ".join(words[i:i + n]), value):
                hit = n
                break
        if hit:
            out.append(mark)
            i += hit
        else:
            out.append(words[i])
            i += 1
    return " ".join(out)


def _near(reading: str, value: str) -> bool:
    if not reading or reading == value or abs(len(reading) - len(value)) > NEAR * len(value):
        return reading == value
    return _edits(reading, value) <= NEAR * len(value)


def _edits(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def unmasked(boxes: Iterable[Box], elements: Sequence[Element] | None) -> list[Box]:
    """Of the fields a secret was typed into (their boxes then), those this screen still shows it
    in: the element now at each one's centre (its box), unless it reads as mask characters."""
    out: list[Box] = []
    for x1, y1, x2, y2 in boxes:
        now = element_at(elements, ((x1 + x2) // 2, (y1 + y2) // 2))
        if now is None or not masks_itself(now.text):
            out.append(box_of(now) if now is not None else (x1, y1, x2, y2))
    return out


def blacked_out(image: Image.Image, boxes: Sequence[Box]) -> Image.Image:
    """A copy of ``image`` black over ``boxes`` (each grown by a pixel: anti-aliased ink at a box's
    edge still shows a letter's shape); ``image`` itself when there are none."""
    if not boxes:
        return image
    out = image.copy()
    draw = ImageDraw.Draw(out)
    for x1, y1, x2, y2 in boxes:
        draw.rectangle((x1 - 1, y1 - 1, x2, y2), fill="black")
    return out


def _checked_name(name: str, where: str) -> str:
    if not NAME.match(name):
        raise SecretError(f"{where}: a secret's name is upper-case letters, digits and underscores, "
                          f"starting with a letter (the task writes it as {{NAME}}), not {name!r}")
    return name


def _forms(value: str) -> tuple[str, ...]:
    """The ways a value appears in what caap writes: as it is, and escaped in a JSON string."""
    escaped = json.dumps(value, ensure_ascii=False)[1:-1]
    ascii_escaped = json.dumps(value)[1:-1]
    return tuple(dict.fromkeys((value, escaped, ascii_escaped)))
