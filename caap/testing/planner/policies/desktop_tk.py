"""Policies for the desktop benchmark's sentence shapes first met in tk tasks (the shared ones are
in ``desktop_tasks`` and ``desktop_qt``): editing a text widget from the keyboard.

A word inside a text is reached without knowing where it is drawn: the text's content is in the
element list, so the cursor goes to the start (Control+Home) and right by as many characters as
precede the word, then Shift+Right selects it and typing replaces the selection."""

from __future__ import annotations

import re

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    click,
    done,
    fail,
    key,
    policy,
    type_text,
)
from caap.testing.planner.kit import (
    find_all_like as find_all,
)
from caap.testing.planner.policies.desktop import typed


def the_text(p: Prompt) -> El | None:
    """The (largest) editable multi-line text on the screen."""
    return max(find_all(p, "text_area"), key=lambda e: e.area, default=None)


@policy(r'^In the text, replace "(?P<old>[^"]+)" with "(?P<new>[^"]+)"\.$')
def replace_word(p: Prompt, m: re.Match[str]) -> list[Action]:
    if typed(p, m["new"]):
        return [done()]
    area = the_text(p)
    if area is None:
        return [fail("no text on the screen")]
    at = (area.text or "").find(m["old"])
    if at < 0:
        return [fail(f'no "{m["old"]}" in the text')]
    return [click(area), key("ctrl+home"), *[key("right")] * at, *[key("shift+right")] * len(m["old"]),
            type_text(m["new"]), done()]


@policy(r'^Add the line "(?P<line>[^"]+)" at the end of the text\.$')
def add_line(p: Prompt, m: re.Match[str]) -> list[Action]:
    if typed(p, m["line"]):
        return [done()]
    area = the_text(p)
    if area is None:
        return [fail("no text on the screen")]
    return [click(area), key("ctrl+end"), key("enter"), type_text(m["line"]), done()]
