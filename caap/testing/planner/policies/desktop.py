"""Policies for desktop applications driven from pixels (not MiniWoB tasks): a form whose fields
are named by the labels beside them, a check box to tick and a button to press."""

from __future__ import annotations

import re

from caap.testing.planner.kit import (
    LIKE,
    Action,
    El,
    Prompt,
    after_submit,
    click,
    clicked,
    done,
    fail,
    find,
    find_all,
    holds,
    norm,
    policy,
    read_as,
    scroll,
    select_all,
    type_text,
)

TASKS: tuple[str, ...] = ()  # none of MiniWoB's: these tasks are sentences about a desktop form

_FIELD = re.compile(r'(?P<label>[^",;]+?)\s+"(?P<value>[^"]*)"')
LABEL_TYPES = ("text", "tabled_text", "hyperlink")
# Whatever a person can see a name on. Where no element of the expected type shows the name, the
# element that shows it is the one meant: a reader of the element list goes by the name, its listed
# type only preferred (a radio button listed as a check box, a list's row as a plain text).
NAMED = ("button", "dropdown", "tab", "tabled_text", "text", "hyperlink", "icon", "checkbox", "radio", "tree_item")


def field_for(p: Prompt, label: str) -> El | None:
    """The input field a label names: on the label's row to its right, else the nearest below it."""
    labels = find_all(p, LABEL_TYPES)
    lab = next((e for e in labels if norm(e.text).rstrip(":") == norm(label)), None)
    if lab is None:  # a label read with a typo, cut short, or with a frame's line or an icon beside it
        lab = max((e for e in labels if read_as(e.text, label) >= LIKE), key=lambda e: read_as(e.text, label),
                  default=None)
    if lab is None:
        return None
    fields = find_all(p, ("input_field", "text_area", "dropdown"))
    beside = [f for f in fields if f.box[0] >= lab.box[2] - 2 and f.box[1] <= lab.y <= f.box[3]]
    if beside:
        return min(beside, key=lambda f: f.box[0] - lab.box[2])
    if not fields:  # no field to be seen: the value shown right of the label is in it
        values = [e for e in find_all(p, LABEL_TYPES) if e is not lab and e.box[0] >= lab.box[2] - 2
                  and abs(e.y - lab.y) <= max(4, (lab.box[3] - lab.box[1]) // 2)]
        if values:
            return min(values, key=lambda e: e.box[0] - lab.box[2])
    below = [f for f in fields if f.box[1] >= lab.box[3] - 2]
    return min(below, key=lambda f: (f.box[1] - lab.box[3]) ** 2 + (f.box[0] - lab.box[0]) ** 2, default=None)


def typed(p: Prompt, value: str) -> bool:
    return any(s.name == "type_text" and s.args.get("string_to_type") == value for s in p.steps)


def put(p: Prompt, field: El, value: str) -> list[Action]:
    """``value`` in ``field`` unless it holds it (or this run typed it there already)."""
    if holds(field, value) or typed(p, value):
        return []
    return [click(field), *([select_all()] if (field.text or "").strip() else []), type_text(value)]


SCROLLS = 6  # scrolls down a list before an item counts as not there
LIST_ROWS = ("tabled_text", "tree_item")


def seek(p: Prompt, what: str) -> list[Action]:
    """Scroll a list down to bring ``what`` into view (on its last row shown), or fail: a list
    scrolled out shows only some of its rows."""
    rows = find_all(p, LIST_ROWS)
    if rows and find(p, "scrollbar") is not None and sum(s.name == "scroll" for s in p.steps) < SCROLLS:
        return [scroll(rows[-1], "down")]
    return [fail(f'no "{what}" on the screen')]


def steps_since_home(p: Prompt) -> int | None:
    """How many Right presses followed the last Home (a slider's position counted from its minimum,
    which the element list does not show); None before any Home."""
    since: int | None = None
    for s in p.steps:
        if s.name == "press_key" and norm(str(s.args.get("key"))) == "home":
            since = 0
        elif s.name == "press_key" and norm(str(s.args.get("key"))) == "right" and since is not None:
            since += 1
    return since


def check_box(p: Prompt, label: str) -> El | None:
    """A check box by its text; a toolkit's small box with the label beside it may be read as two."""
    box = find(p, "checkbox", label)
    if box is not None:
        return box
    return next((e for e in find_all(p, LABEL_TYPES) if norm(e.text) == norm(label)), None)


@policy(r'^Fill in the form: (?P<fields>.+?); tick "(?P<tick>[^"]+)"; then press "(?P<button>[^"]+)"\.?$')
def desktop_form(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    actions: list[Action] = []
    used: set[int] = set()
    for f in _FIELD.finditer(m["fields"]):
        field = field_for(p, f["label"].strip())
        if field is None or field.id in used:
            return [fail(f'no field labelled "{f["label"].strip()}" on the screen')]
        used.add(field.id)
        # A value this run typed is not typed again over a misreading of it (a toolkit's sunken
        # border can cost the reader a first letter): the history says it is there.
        if not holds(field, f["value"]) and not typed(p, f["value"]):
            # Select-all first only where there is something to replace: Control+A is "line start"
            # in Tk's entries, not "select all".
            actions += [click(field), *([select_all()] if (field.text or "").strip() else []), type_text(f["value"])]
    # Once clicked, a ticked box may look different enough to be missed: the history says it is done.
    if not clicked(p, text=m["tick"], types=("checkbox", *LABEL_TYPES), like=True):
        box = check_box(p, m["tick"])
        if box is None:
            return [fail(f'no "{m["tick"]}" check box on the screen')]
        if not box.checked:
            actions.append(click(box))
    button = find(p, "button", m["button"])
    if button is None:  # after the typing the next screen may show it; with nothing left to do, give up
        return actions or [fail(f'no "{m["button"]}" button on the screen')]
    return [*actions, click(button), done()]
