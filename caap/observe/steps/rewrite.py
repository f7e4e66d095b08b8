"""One pattern many settle steps share: each element a test picks is looked at on the screen's
pixels and replaced by what a rule makes of it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import rgb_pixels


def rewrite_each(image: Image.Image, elements: list[Element], wanted: Callable[[Element], bool],
                 change: Callable[[np.ndarray, Element], Element | None]) -> list[Element]:
    """The elements with each ``wanted`` one replaced by what ``change`` makes of it on the
    screenshot's pixels (None: kept); the input list is not changed, and the pixels are taken
    only where some element is wanted."""
    suspects = [i for i, e in enumerate(elements) if wanted(e)]
    if not suspects:
        return elements
    rgb = rgb_pixels(image)
    out = list(elements)
    for i in suspects:
        changed = change(rgb, out[i])
        if changed is not None:
            out[i] = changed
    return out
