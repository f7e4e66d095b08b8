"""Find a remembered element on the current screen: by type, text and position.

Replay (a recorded action's element) and the action cache (an element descriptor stored for a
screen) both hold an element seen on an *earlier* screen; its id means nothing now. ``locate``
picks the element of the current observation that is the same thing, or says there is none.

Rules, in order:

1. Only elements of the same type are candidates (``same_type=False`` lifts this, for a reader
   that confuses look-alike types).
2. A remembered element with text needs a candidate whose text matches: equal after folding case
   and spaces, or similar enough (``min_text_similarity``, a difflib ratio: OCR typos pass,
   another word does not). A match still in place (within 2% of the diagonal) wins; among the
   others, the more similar text wins, then the nearer centre.
3. A remembered element without text (an icon, a checkbox without a label) is matched by
   position alone: the nearest candidate whose centre lies within ``max_shift`` (a fraction of the
   screen diagonal) and whose size is within a factor of 2.
   One whose text is shorter than ``min_text_chars`` ("OK", "2", or a label misread as "l") is
   matched by position first: a candidate still in place (within 2% of the diagonal) wins, else
   the nearest with the same text, else the nearest within ``max_shift``. One or two characters
   name little, and another checkbox misread as the same "l" must not beat the one still in place.
4. A tie that position cannot break (two candidates equally good and equally near) is ambiguous:
   no match, because acting on the wrong one of two identical buttons is worse than stopping.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from caap.elements import Element

_SPACES = re.compile(r"\s+")
_IN_PLACE = 0.02  # of the screen diagonal: an element this close to where it was has not moved


def fold(text: str | None) -> str:
    """Text compared case-insensitively with runs of white space as one space."""
    return _SPACES.sub(" ", text or "").strip().casefold()


def text_similarity(a: str | None, b: str | None) -> float:
    """1.0 for equal folded texts, else difflib's ratio of the folded texts (0 for one empty)."""
    fa, fb = fold(a), fold(b)
    if fa == fb:
        return 1.0
    if not fa or not fb:
        return 0.0
    return SequenceMatcher(None, fa, fb, autojunk=False).ratio()


@dataclass(frozen=True)
class Located:
    """The element found, how well its text matched (1.0 when compared by position only) and how
    far its centre moved, in pixels."""

    element: Element
    text_similarity: float
    shift_px: float


def _shift(a: Element, b: Element) -> float:
    (ax, ay), (bx, by) = a.centre, b.centre
    return math.hypot(ax - bx, ay - by)


def _size_ratio(a: Element, b: Element) -> float:
    wa, ha = a.bbox[2] - a.bbox[0], a.bbox[3] - a.bbox[1]
    wb, hb = b.bbox[2] - b.bbox[0], b.bbox[3] - b.bbox[1]
    return max(wa / wb, wb / wa, ha / hb, hb / ha)


def locate(
    target: Element,
    elements: Sequence[Element],
    *,
    screen_size: tuple[int, int],
    min_text_similarity: float = 0.75,
    max_shift: float = 0.25,
    same_type: bool = True,
    min_text_chars: int = 3,
) -> Located | None:
    """The element of ``elements`` that is ``target`` (see the module rules), or None."""
    diagonal = math.hypot(*screen_size) or 1.0
    candidates = [e for e in elements if e.visible and (not same_type or e.type == target.type)]
    scored: list[tuple[float, float, Element]] = []  # (-similarity, shift, element): smaller is better
    if len(fold(target.text)) >= min_text_chars:
        for e in candidates:
            similarity = text_similarity(target.text, e.text)
            if similarity >= min_text_similarity:
                scored.append((-similarity, _shift(target, e), e))
    else:
        near = [(e, _shift(target, e)) for e in candidates if _size_ratio(target, e) <= 2.0]
        in_place = [(e, d) for e, d in near if d <= _IN_PLACE * diagonal]
        same_text = [(e, d) for e, d in near if fold(target.text)
                     and text_similarity(target.text, e.text) >= min_text_similarity]
        for e, d in in_place or same_text or [(e, d) for e, d in near if d <= max_shift * diagonal]:
            scored.append((-1.0, d, e))
    # One still in place that reads like it is the element, however well a text far away matches
    # (a header tab read "Pege 3" is still the tab clicked, not a "page 3" at the window's foot).
    in_place_scored = [s for s in scored if s[1] <= _IN_PLACE * diagonal]
    scored = in_place_scored or scored
    scored.sort(key=lambda s: (s[0], s[1]))
    if not scored:
        return None
    best = scored[0]
    if len(scored) > 1:
        second = scored[1]
        if abs(second[0] - best[0]) < 1e-9 and abs(second[1] - best[1]) < 1.0:
            return None  # two equally good candidates at the same distance: ambiguous
    return Located(best[2], -best[0], best[1])


def describe_miss(target: Element, elements: Sequence[Element], *, min_text_chars: int = 3) -> str:
    """Why ``locate`` found nothing, for the message a person reads."""
    same = [e for e in elements if e.type == target.type]
    what = f"{target.type.value}" + (f" {target.text!r}" if fold(target.text) else f" near {list(target.centre)}")
    if not same:
        return f"no {target.type.value} on the screen (looking for {what})"
    if len(fold(target.text)) >= min_text_chars:
        texts = ", ".join(repr(e.text) for e in same[:6])
        return f"no {target.type.value} reads like {target.text!r} (on screen: {texts})"
    return f"no {target.type.value} of a similar size near {list(target.centre)} (looking for {what})"
