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
    click_point,
    done,
    fail,
    key,
    norm,
    policy,
    text_width,
    type_text,
)
from caap.testing.planner.kit import (
    find_all_like as find_all,
)
from caap.testing.planner.policies.desktop import typed


def text_block(p: Prompt) -> El | None:
    """Lines of text set one under the other at one left edge, as one multi-line text (an editor
    whose panel the screen does not show as a text area): the longest such run of two lines or more."""
    lines = sorted(find_all(p, ("text", "tabled_text")), key=lambda e: (e.box[1], e.box[0]))
    runs: list[list[El]] = []
    for e in lines:
        run = next((r for r in runs if abs(r[-1].box[0] - e.box[0]) <= 6
                    and -(r[-1].box[3] - r[-1].box[1]) // 2 <= e.box[1] - r[-1].box[3] <= r[-1].box[3] - r[-1].box[1]),
                   None)
        if run is None:
            runs.append([e])
        else:
            run.append(e)
    best = max((r for r in runs if len(r) >= 2), key=len, default=None)
    if best is None:
        return None
    box = (min(e.box[0] for e in best), min(e.box[1] for e in best), max(e.box[2] for e in best),
           max(e.box[3] for e in best))
    # Its id is its last line's: a click there and the keys that follow stay in that line.
    return El(id=best[-1].id, type="text", x=(box[0] + box[2]) // 2, y=(box[1] + box[3]) // 2, box=box,
              text="\n".join(e.text or "" for e in best))


def largest_area(p: Prompt) -> El | None:
    return max(find_all(p, "text_area"), key=lambda e: e.area, default=None)


def the_text(p: Prompt) -> El | None:
    """The (largest) editable multi-line text on the screen, or its lines where the screen shows no
    text area (``text_block``)."""
    return largest_area(p) or text_block(p)


@policy(r'^In the text, replace "(?P<old>[^"]+)" with "(?P<new>[^"]+)"\.$')
def replace_word(p: Prompt, m: re.Match[str]) -> list[Action]:
    if typed(p, m["new"]):
        return [done()]
    area = largest_area(p)
    if area is not None:  # the whole text is one element: walk to the word from the text's start
        at = (area.text or "").find(m["old"])
        if at < 0:
            return [fail(f'no "{m["old"]}" in the text')]
        return [click(area), key("ctrl+home"), *[key("right")] * at, *[key("shift+right")] * len(m["old"]),
                type_text(m["new"]), done()]
    # Lines of their own: click inside the word (its middle, where its characters take it in the
    # line as a font sets them: off by a character or two at most), go to the word's start
    # (Control+Left), then select it from there.
    select = [key("ctrl+left"), *[key("shift+right")] * len(m["old"]), type_text(m["new"]), done()]
    if p.steps and p.steps[-1].name == "click_new_point":  # the click went in (the caret may now show in the word)
        return select
    line = next((e for e in find_all(p, ("text", "tabled_text")) if m["old"] in (e.text or "")), None)
    if line is None:
        return [fail(f'no "{m["old"]}" in the text')]
    text = line.text or ""
    start = text.index(m["old"])
    middle = text_width(text[:start] + m["old"][: len(m["old"]) // 2]) / max(text_width(text), 1e-6)
    x = round(line.box[0] + middle * (line.box[2] - line.box[0]))
    return [click_point(x, line.y), *select]


@policy(r'^Add the line "(?P<line>[^"]+)" at the end of the text\.$')
def add_line(p: Prompt, m: re.Match[str]) -> list[Action]:
    if typed(p, m["line"]):
        return [done()]
    # The new line was opened (the typing after it may have been held back): type it there.
    opened = any(s.name == "press_key" and norm(str(s.args.get("key"))) == "enter" for s in p.steps)
    if opened:
        return [type_text(m["line"]), done()]
    area = the_text(p)
    if area is None:
        return [fail("no text on the screen")]
    return [click(area), key("ctrl+end"), key("enter"), type_text(m["line"]), done()]
