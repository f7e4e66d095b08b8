"""Centred labels stacked in a column, told from a column of tabs.

A plain label boxed with room above and below looks to the detector like a tab: gtk4-widget-factory's
"Text Styles" column (Title 1 ... Caption, one label per font size) comes back as a column of tabs,
each box twice as tall as its words. A real column of tabs (a notebook's tabs on its left, a
sidebar) shares both edges: every tab is as wide as the column. Centred labels of different
lengths share only their middle. ``centred_label_stacks`` finds columns of at least three tab boxes
one under the other, centred on one line, whose widths differ, and makes each a text fitted to its
words.
"""

from __future__ import annotations

from PIL import Image

from caap.elements import Element
from caap.observe.primitives import fit_to_ink, rgb_pixels
from caap.taxonomy import ElementType

CENTRE_PX = 4       # px the middles of a column's boxes may differ by
GAP_PX = 8          # px at most between one box's bottom and the next one's top (overlap: 2 px)
MIN_STACK = 3       # boxes in a column
WIDTH_SPREAD = 8    # px: widths differing more than this are labels of their own length, not tabs


def _middle(element: Element) -> float:
    return (element.bbox[0] + element.bbox[2]) / 2


def _stacks(elements: list[Element]) -> list[list[int]]:
    tabs = sorted((i for i, e in enumerate(elements) if e.type is ElementType.TAB), key=lambda i: elements[i].bbox[1])
    stacks: list[list[int]] = []
    used: set[int] = set()
    for i in tabs:
        if i in used:
            continue
        stack = [i]
        for j in tabs:
            above, below = elements[stack[-1]], elements[j]
            if j not in used and j not in stack and abs(_middle(above) - _middle(below)) <= CENTRE_PX \
                    and -2 <= below.bbox[1] - above.bbox[3] <= GAP_PX:
                stack.append(j)
        if len(stack) >= MIN_STACK:
            used.update(stack)
            stacks.append(stack)
    return stacks


def centred_label_stacks(image: Image.Image, elements: list[Element]) -> list[Element]:
    """The elements with every column of centred labels the detector took for tabs made texts
    fitted to their ink (see the module's docstring)."""
    stacks = _stacks(elements)
    if not stacks:
        return elements
    rgb = rgb_pixels(image)
    out = list(elements)
    for stack in stacks:
        widths = [elements[i].bbox[2] - elements[i].bbox[0] for i in stack]
        if max(widths) - min(widths) <= WIDTH_SPREAD:
            continue  # one width: a column of tabs
        for i in stack:
            fitted = fit_to_ink(rgb, elements[i].bbox)
            if fitted is not None:
                out[i] = elements[i].model_copy(update={"bbox": fitted, "type": ElementType.TEXT})
    return out
