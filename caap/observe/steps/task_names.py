"""Names the task speaks of, checked against the reader's frames.

A person told to drag ``Billi`` finds it in a grid of 8 px names where ``Billi`` is drawn as a
``B`` and four bars; read without the task, the same pixels give ``Bli``. The agent tells the
observer the names in its task (``caap.observe.observation.task_names``), and this step asks the
reader's own CTC frames how likely each name is in the element read closest to it: where the name
is about as likely as what was read (``NAME_MARGIN``), that element, and only that one, reads the
name. An element whose frames rule the name out, or clearly see another letter in it
(``VARIANT_GAIN``), keeps its reading; a name some element reads already is left alone.
"""

from __future__ import annotations

import re
import string

from caap.elements import Element
from caap.observe.pipeline import Look
from caap.observe.text_choice import ctc_log_likelihoods, levenshtein
from caap.taxonomy import TEXT, ElementType, attributes_of

# nats: a name this much less likely than the reading under the reader's frames is still taken.
# One letter the frames see clearly otherwise costs 15 or more; 8 px names whose i's and l's are
# bars of one width cost up to 12 (drag-items-grid, development seeds).
NAME_MARGIN = 12.0
# nats: where a name with one letter changed is this much likelier, the frames see that letter, not the
# name's: ``Liza`` is no ``Lisa``, ``Astrid`` no ``Astris`` (6 or more at 8 px; the names drawn, at most 4.3).
# A change between the thin glyphs below is no such evidence: at 8 px each is one bar, with a dot or
# a hook of a pixel or two (``Dafli`` 5.3 over ``Daffi``).
VARIANT_GAIN = 5.0
THIN = "iIl1fjt"


def _letters(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _near(read: str, name: str) -> bool:
    """Whether ``read`` may be ``name`` misread: one word, letters other than the name's, at most
    half the name's letters away."""
    if not read or " " in read.strip() or _letters(read) == _letters(name) or abs(len(read) - len(name)) > 3:
        return False
    return levenshtein(read.lower(), name.lower()) <= max(1, len(name) // 2)


def _fits(frames: object, name: str, read: set[str], alphabet: object) -> bool:
    """Whether the frames find ``name`` at most ``NAME_MARGIN`` less likely than the likelier of the
    ``read`` texts, and no one-letter change of it (not between ``THIN`` glyphs) ``VARIANT_GAIN``
    or more likelier than it: the name, its changes and the readings in one batch."""
    read_as = sorted(t for t in read if t)
    variants = [name[:k] + c + name[k + 1:] for k in range(len(name)) for c in string.ascii_letters + string.digits
                if c != name[k] and not (c in THIN and name[k] in THIN)]
    scores = ctc_log_likelihoods(frames, [name, *read_as, *variants], alphabet)
    own, seen, changed = scores[0], scores[1:1 + len(read_as)], scores[1 + len(read_as):]
    return own >= max(seen, default=own) - NAME_MARGIN and max(changed, default=own) < own + VARIANT_GAIN


def read_task_names(look: Look, elements: list[Element]) -> list[Element]:
    """Each of ``look.names`` that no element reads, taken by the one element read near it whose
    reader frames find it at most ``NAME_MARGIN`` less likely than the likelier of its text and the
    reader's own reading, and no one-letter change of it much likelier (``VARIANT_GAIN``); where
    two elements could be the name, neither takes it."""
    reader, readings = look.parts.reader, look.readings
    if not look.names or reader is None or readings is None or len(readings) != len(elements) \
            or len(readings.log_probs) < len(elements):
        return elements
    shown = {(e.text or "").strip() for e in elements}
    words = [i for i, e in enumerate(elements) if TEXT in attributes_of(e.type) and e.type != ElementType.TEXT_AREA
             and e.text and " " not in e.text.strip()]
    out = list(elements)
    taken: set[int] = set()
    for name in look.names:
        if name in shown:
            continue
        fits: list[int] = []
        for i in words:
            text, frames = (out[i].text or "").strip(), readings.frames(i)
            if i in taken or frames is None or not _near(text, name):
                continue
            if _fits(frames, name, {text, (readings.readings[i].text or "").strip()}, reader.alphabet):
                fits.append(i)
        if len(fits) == 1:
            out[fits[0]] = out[fits[0]].model_copy(update={"text": name})
            taken.add(fits[0])
    return out

