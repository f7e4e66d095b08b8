"""Policies for the desktop benchmark's sentence shapes first met in gtk tasks (the shared ones are
in ``desktop_tasks``): a page to open before the rest of a task, tabs, switches and toggle buttons,
a menu bar's entries, drop-downs named by what they show, tree rows to expand or collapse, spin
boxes and sliders by their labels, a wizard's page, and a file chooser's typed location.

Like every policy they read only the prompt. Where the element list does not say what an action
did (a tree row's expanded state, a slider's value), the history does: each step is taken once."""

from __future__ import annotations

import re
from dataclasses import replace

from caap.testing.planner import kit
from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    after_submit,
    click,
    click_point,
    clicked,
    did,
    done,
    fail,
    key,
    norm,
    policy,
    same_text,
    select_all,
    type_text,
    wait,
)
from caap.testing.planner.kit import (
    find_all_like as find_all,
)
from caap.testing.planner.kit import (
    find_like as find,
)
from caap.testing.planner.policies.desktop import LABEL_TYPES, NAMED, field_for, put, seek, typed

TAB_TYPES = ("tab", "radio", "button", "tabled_text")  # a stack switcher's pages read as radios or buttons
TREE_ROWS = ("tree_item", "tabled_text")
MENU_ENTRIES = ("tabled_text", "text", "button", "hyperlink", "checkbox", "radio")
OPTIONS = ("tabled_text", "text", "button", "tree_item", "radio", "checkbox")
MAX_CLICKS = 2  # clicks on one switch before its state counts as unreadable


# (desktop_tasks has its own press, which looks for other types; it is not imported here, so that
# the policies register in the order the policy package lists their modules.)
def press(p: Prompt, name: str) -> list[Action]:
    """Click the button ``name`` and finish; once it was clicked, finish."""
    if after_submit(p, name, like=True):
        return [done()]
    button = _button(p, name) or find(p, ("text", "hyperlink"), name)
    if button is None:
        return [fail(f'no "{name}" button on the screen')]
    return [click(button), done()]


def _plan(p: Prompt, skip: object) -> list[Action]:
    """The first registered policy but ``skip`` whose pattern matches ``p.task``."""
    for pattern, fn in kit.POLICIES:
        if fn is skip:
            continue
        m = pattern.match(p.task)
        if m:
            return fn(p, m)
    return [fail(f"no policy for {p.task!r}")]


def _clicks_on(p: Prompt, e: El) -> int:
    return sum(1 for s in p.steps if s.name == "click_element" and s.element is not None
               and s.element.id == e.id and s.element.type == e.type)


def _same_row(p: Prompt, label: El, types: tuple[str, ...] | str) -> El | None:
    """The control of ``types`` on ``label``'s line, the nearest one beside it."""
    row = [e for e in find_all(p, types) if e.box[1] <= label.y <= e.box[3] and e.id != label.id]
    return min(row, key=lambda e: min(abs(e.box[0] - label.box[2]), abs(label.box[0] - e.box[2])), default=None)


def _label(p: Prompt, text: str) -> El | None:
    """The label reading ``text``: a text first, else whatever element shows it (its listed type may
    be wrong; a reader of the list goes by the name)."""
    return (next((e for e in find_all(p, LABEL_TYPES) if norm(e.text).rstrip(":") == norm(text).rstrip(":")), None)
            or find(p, NAMED, text))


# --- a page first ---------------------------------------------------------------------------------


@policy(r'^On the "(?P<page>[^"]+)" page, (?P<rest>.+)$')
def on_page(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Open the page (a stack switcher's button or a tab) unless it shows, then the rest of the task
    as a sentence of its own."""
    tab = find(p, TAB_TYPES, m["page"])
    shown = tab is not None and bool(tab.checked or (tab.type == "tab" and tab.highlighted))
    if not shown and not clicked(p, text=m["page"], types=TAB_TYPES, like=True):
        if tab is None:
            return [fail(f'no "{m["page"]}" page on the screen')]
        return [click(tab)]
    rest = m["rest"].strip()
    return _plan(replace(p, task=rest[:1].upper() + rest[1:]), on_page)


# --- tabs, switches -------------------------------------------------------------------------------


@policy(r'^Open the "(?P<tab>[^"]+)" tab\.$')
def open_tab(p: Prompt, m: re.Match[str]) -> list[Action]:
    tab = find(p, TAB_TYPES, m["tab"])
    if clicked(p, text=m["tab"], types=TAB_TYPES, like=True) or (tab is not None and (tab.checked or (
            tab.type == "tab" and tab.highlighted))):
        return [done()]
    if tab is None:
        return [fail(f'no "{m["tab"]}" tab on the screen')]
    return [click(tab), done()]


def _switch(p: Prompt, label: str) -> El | None:
    """A check box, switch or toggle button by its text, else the one on its label's line."""
    own = find(p, ("checkbox", "button"), label)
    if own is not None:
        return own
    lab = _label(p, label)
    return _same_row(p, lab, "checkbox") if lab is not None else None


_TURN = re.compile(r'(?P<state>on|off) "(?P<label>[^"]+)"', re.I)


@policy(r'^Turn (?:on|off) "[^"]+"(?:,? and turn (?:on|off) "[^"]+")*\.$')
def turn(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Each switch to its state: a click where the element list shows it otherwise; where it shows no
    state (a toggle button), one click when it is to be turned on."""
    actions: list[Action] = []
    for t in _TURN.finditer(m.group(0)):
        want = t["state"].lower() == "on"
        box = _switch(p, t["label"])
        if box is None:
            return [fail(f'no "{t["label"]}" switch on the screen')]
        clicks = _clicks_on(p, box)
        if not clicks and box.text is not None:  # the same control under another id
            clicks = sum(1 for s in p.steps if s.name == "click_element" and s.element is not None
                         and s.element.type == box.type and same_text(s.element.text, box.text, like=True))
        if box.checked is None:
            if want and not clicks:
                actions.append(click(box))
        elif bool(box.checked) != want and clicks < MAX_CLICKS:
            actions.append(click(box))
    return [*actions, done()]


# --- menus, drop-downs ----------------------------------------------------------------------------


@policy(r'^Choose "(?P<path>[^"]+)" from the menu bar\.$')
def menu_bar(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Click each entry of ``A > B > C`` in turn, each once its menu has opened."""
    path = [s.strip() for s in m["path"].split(">")]
    at = next((i for i, name in enumerate(path) if not clicked(p, text=name, types=MENU_ENTRIES, like=True)), len(path))
    if at == len(path):
        return [done()]
    entry = find(p, MENU_ENTRIES, path[at])
    if entry is None:
        if at and not did(p, "wait"):
            return [wait(0.5)]  # the menu is still opening
        return [fail(f'no "{path[at]}" in the menu')]
    return [click(entry), done()] if at == len(path) - 1 else [click(entry)]


@policy(r'^Choose "(?P<option>[^"]+)" from the "(?P<combo>[^"]+)" drop-down\.$')
def drop_down(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Open the drop-down (named by what it shows, or by its label), then click the option in the
    list it opens."""
    opened = clicked(p, text=m["combo"], types=("dropdown",), like=True)
    combo = find(p, "dropdown", m["combo"])
    if combo is None:
        lab = _label(p, m["combo"])
        combo = field_for(p, m["combo"]) if lab is not None else None
        opened = opened or (combo is not None and clicked(p, combo))
    if not opened:
        if combo is None:
            return [fail(f'no "{m["combo"]}" drop-down on the screen')]
        return [click(combo)]
    if clicked(p, text=m["option"], types=OPTIONS, like=True):
        return [done()]
    options = [e for e in find_all(p, OPTIONS, m["option"]) if e.type != "dropdown"]
    if not options:
        return [fail(f'no "{m["option"]}" in the drop-down')]
    return [click(options[-1]), done()]


# --- trees ----------------------------------------------------------------------------------------


def _toggle_row(p: Prompt, name: str, keys: str) -> list[Action] | None:
    """Select the row ``name`` and press ``keys`` on it, once; None once that is done."""
    row = find(p, TREE_ROWS, name) or find(p, NAMED, name)  # a row listed as another type is still the row
    pressed = any(s.name == "press_key" and norm(str(s.args.get("key"))) == keys for s in p.steps)
    if pressed:
        return None
    if row is None:
        return seek(p, name)
    if not (row.highlighted or clicked(p, row) or clicked(p, text=name, types=TREE_ROWS, like=True)):
        return [click(row), key(keys)]
    return [key(keys)]


@policy(r'^Expand "(?P<parent>[^"]+)" in the tree, then select "(?P<child>[^"]+)"\.$')
def expand_select(p: Prompt, m: re.Match[str]) -> list[Action]:
    if clicked(p, text=m["child"], types=TREE_ROWS, like=True):
        return [done()]
    opening = _toggle_row(p, m["parent"], "shift+right")
    if opening is not None:
        return opening
    child = find(p, TREE_ROWS, m["child"])
    if child is None:
        return seek(p, m["child"])
    return [click(child), done()]


@policy(r'^Collapse "(?P<item>[^"]+)" in the tree\.$')
def collapse(p: Prompt, m: re.Match[str]) -> list[Action]:
    closing = _toggle_row(p, m["item"], "shift+left")
    if closing is None:
        return [done()]
    return [*closing, done()] if closing[-1][0] == "press_key" else closing


# --- values ---------------------------------------------------------------------------------------


@policy(r'^Set the "(?P<label>[^"]+)" spin box to "(?P<value>[^"]+)"\.$')
def spin_box(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Type the value over the spin box's text and press Enter, which makes the box read it. The
    click goes to the text's left end: a GTK 4 spin box has its - and + buttons inside its box."""
    if typed(p, m["value"]):
        return [done()]
    field = field_for(p, m["label"])
    if field is None:
        return [fail(f'no "{m["label"]}" spin box on the screen')]
    into = [] if did(p, "click_new_point") else [click_point(field.box[0] + 8, field.y)]
    return [*into, select_all(), type_text(m["value"]), key("enter"), done()]


@policy(r'^Move the "(?P<label>[^"]+)" slider to its (?P<end>minimum|maximum)\.$')
def slider_end(p: Prompt, m: re.Match[str]) -> list[Action]:
    """The slider beside the label, clicked for the keyboard, then Home or End (once)."""
    keys = "home" if m["end"].lower() == "minimum" else "end"
    if any(s.name == "press_key" and norm(str(s.args.get("key"))) == keys for s in p.steps):
        return [done()]
    lab = _label(p, m["label"])
    slider = _same_row(p, lab, "slider") if lab is not None else None
    if slider is None:
        return [fail(f'no "{m["label"]}" slider on the screen')]
    return [*([] if clicked(p, slider) else [click(slider)]), key(keys), done()]


@policy(r'^Type "(?P<value>[^"]*)" into the "(?P<field>[^"]+)" field and go on with "(?P<button>[^"]+)"\.$')
def type_and_go_on(p: Prompt, m: re.Match[str]) -> list[Action]:
    """A wizard's page: its field filled, then its button to the next page (pressed once)."""
    if any(s.name == "click_element" and s.element is not None and s.element.type == "button"
           and (same_text(s.element.text, m["button"], like=True)
                or norm(s.element.text).endswith(" " + norm(m["button"])))
           for s in p.steps):
        return [done()]
    field = field_for(p, m["field"])
    if field is None:
        return [fail(f'no field "{m["field"]}" on the screen')]
    return put(p, field, m["value"]) + press(p, m["button"])


# --- dialogs, file choosers -----------------------------------------------------------------------


def _button(p: Prompt, name: str) -> El | None:
    """A button by its text; GTK 4 may read a mnemonic's label with it ("_Open Open")."""
    return find(p, "button", name) or next(
        (e for e in find_all(p, "button") if norm(e.text).endswith(" " + norm(name))), None)


@policy(r'^Open the file "(?P<path>[^"]+)" by typing its location, then press "(?P<button>[^"]+)"\.$')
def type_location(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Control+L opens a file chooser's location field; the path typed there, the button answers."""
    if after_submit(p, m["button"], like=True):
        return [done()]
    actions: list[Action] = []
    if not typed(p, m["path"]):
        if not did(p, "press_key"):
            actions.append(key("ctrl+l"))
        actions.append(type_text(m["path"]))
    return actions + press(p, m["button"])
