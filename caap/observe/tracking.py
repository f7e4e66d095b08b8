"""Stable element ids across the steps of one episode.

An element that matches one on the previous screen keeps its id, so the model can refer to
"element_4" across steps. An element that vanished is carried once more, marked not visible, so
the next prompt can say what went away (a closed dropdown, a dismissed dialog). New elements get
ids never used before in the episode.
"""

from __future__ import annotations

from collections.abc import Sequence

from caap.elements import Element
from caap.geometry import iou
from caap.observe.order import reading_order

# An overlap this large with the same type is the same element, whatever its text now says
# (a dropdown showing its new choice, a field being typed into).
SAME_PLACE_IOU = 0.5
# Elements that moved (scrolling) are matched by type, exact text and size.
SIZE_SLACK_PX = 3


def _match_score(old: Element, new: Element) -> float:
    if old.type != new.type:
        return 0.0
    overlap = iou(old.bbox, new.bbox)
    same_text = bool(old.text) and old.text == new.text
    if overlap >= SAME_PLACE_IOU:
        return 1.0 + overlap + (0.5 if same_text else 0.0)
    if same_text:
        ow, oh = old.bbox[2] - old.bbox[0], old.bbox[3] - old.bbox[1]
        nw, nh = new.bbox[2] - new.bbox[0], new.bbox[3] - new.bbox[1]
        if abs(ow - nw) <= SIZE_SLACK_PX and abs(oh - nh) <= SIZE_SLACK_PX:
            dx = abs(old.centre[0] - new.centre[0])
            dy = abs(old.centre[1] - new.centre[1])
            return 0.5 / (1.0 + (dx + dy) / 100.0)
    return 0.0


class IdTracker:
    """Assigns ids to each new screen's elements; one tracker per episode."""

    def __init__(self, row_tolerance: int = 5) -> None:
        self.row_tolerance = row_tolerance
        self._previous: list[Element] = []
        self._next_id = 1

    def reset(self) -> None:
        self._previous = []
        self._next_id = 1

    def update(self, elements: Sequence[Element]) -> list[Element]:
        """Return the screen's elements in reading order with stable ids, followed by the elements
        of the previous screen that vanished (``visible=False``)."""
        current = [e.model_copy(update={"id": None, "visible": True}) for e in elements]
        current = reading_order(current, self.row_tolerance)

        pairs = []
        for i, old in enumerate(self._previous):
            for j, new in enumerate(current):
                score = _match_score(old, new)
                if score > 0:
                    pairs.append((score, i, j))
        pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
        used_old: set[int] = set()
        used_new: set[int] = set()
        for _, i, j in pairs:
            if i in used_old or j in used_new:
                continue
            used_old.add(i)
            used_new.add(j)
            current[j].id = self._previous[i].id

        for element in current:
            if element.id is None:
                element.id = self._next_id
                self._next_id += 1

        # Vanished elements are carried once: only those that were visible last time.
        vanished = [
            old.model_copy(update={"visible": False})
            for i, old in enumerate(self._previous)
            if i not in used_old and old.visible
        ]
        self._previous = current + vanished
        return current + vanished
