"""Policies for the desktop benchmark's tasks (``caap.bench.desktop.tasks``): one per sentence shape
of their instructions. Like every policy they read only the prompt — the task, the element list and
the history — and find controls by the text a person sees; what a control holds or whether it is
ticked comes from the element list, and where the element list cannot say (how far a slider moved)
the history of what was done does."""

from __future__ import annotations

import re

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    after_submit,
    click,
    clicked,
    done,
    fail,
    holds,
    key,
    norm,
    policy,
    type_text,
)
from caap.testing.planner.kit import (
    find_all_like as find_all,
)
from caap.testing.planner.kit import (
    find_like as find,
)
from caap.testing.planner.policies.desktop import LABEL_TYPES, field_for, put, seek, steps_since_home, typed

BUTTONS = ("button",)
ROWS = ("tabled_text", "tree_item", "text")
FIELDS = ("input_field", "text_area", "dropdown")
_QUOTED = re.compile(r'"(?P<label>[^"]+)"\s+"(?P<value>[^"]*)"')


def press(p: Prompt, name: str) -> list[Action]:
    """Click the button ``name`` and finish; once it was clicked, finish."""
    if after_submit(p, name, like=True):
        return [done()]
    button = (find(p, BUTTONS, name) or find(p, ("text", "hyperlink"), name)
              or find(p, ("dropdown", "tab", "tabled_text", "icon"), name))
    if button is None:
        return [fail(f'no "{name}" button on the screen')]
    return [click(button), done()]


def only_field(p: Prompt) -> El | None:
    fields = find_all(p, ("input_field", "text_area"))
    return fields[0] if len(fields) == 1 else None


def toggle(p: Prompt, label: str, want: bool) -> list[Action] | None:
    """A click on the check box ``label`` if it is not as wanted; [] if it is; None if it is not shown."""
    box = find(p, "checkbox", label)
    if box is None:
        row = find(p, (*ROWS, *LABEL_TYPES), label)
        if row is None:
            return seek(p, label) if find(p, "scrollbar") is not None else None
        # A list's check column: the box on the row's line, left of its text.
        boxes = [b for b in find_all(p, "checkbox") if b.box[1] <= row.y <= b.box[3] and b.x < row.box[0]]
        box = max(boxes, key=lambda b: b.x, default=None)
        if box is None:
            return [] if clicked(p, row) else [click(row)]
    if box.checked is None:  # a state the screen does not show: once clicked is enough
        return [] if clicked(p, box) or clicked(p, text=label, types=("checkbox",), like=True) else [click(box)]
    return [] if bool(box.checked) == want else [click(box)]


@policy(r'^Type "(?P<value>[^"]*)" into the "(?P<field>[^"]+)" field, then press "(?P<button>[^"]+)"\.$')
def type_into(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    field = field_for(p, m["field"]) or only_field(p)
    if field is None:
        return [fail(f'no field "{m["field"]}" on the screen')]
    return put(p, field, m["value"]) + press(p, m["button"])


@policy(r'^Answer "(?P<answer>[^"]+)" to the question\.$')
def answer(p: Prompt, m: re.Match[str]) -> list[Action]:
    return press(p, m["answer"])


@policy(r'^Select "(?P<item>[^"]+)" in the list, then press "(?P<button>[^"]+)"\.$')
def select_in_list(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    row = find(p, ROWS, m["item"])
    if row is None:
        return seek(p, m["item"])
    return ([] if row.highlighted or clicked(p, row) else [click(row)]) + press(p, m["button"])


@policy(r'^Tick "(?P<on>[^"]+)" and untick "(?P<off>[^"]+)", then press "(?P<button>[^"]+)"\.$')
def tick_untick(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    actions: list[Action] = []
    for label, want in ((m["on"], True), (m["off"], False)):
        got = toggle(p, label, want)
        if got is None:
            return [fail(f'no "{label}" check box on the screen')]
        if got and got[0][0] in ("scroll", "fail"):
            return actions + got  # the rest once the list shows it
        actions += got
    return actions + press(p, m["button"])


@policy(r'^Pick "(?P<choice>[^"]+)", then press "(?P<button>[^"]+)"\.$')
def pick(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    radio = find(p, "radio", m["choice"])
    if radio is None:
        row = find(p, (*ROWS, *LABEL_TYPES), m["choice"])
        if row is None:
            return seek(p, m["choice"])
        radios = [r for r in find_all(p, "radio") if r.box[1] <= row.y <= r.box[3] and r.x < row.box[0]]
        radio = max(radios, key=lambda r: r.x, default=None) or row
    chosen = radio.checked if radio.type == "radio" else None
    return ([] if chosen or clicked(p, radio) else [click(radio)]) + press(p, m["button"])


def choose(p: Prompt, option: str, combo_label: str) -> list[Action] | None:
    """Pick ``option`` in the drop-down ``combo_label``: open it, then click the option; [] once it
    shows the option; None while a step is under way (the list has to open first)."""
    combo = field_for(p, combo_label)
    if combo is not None and combo.type == "dropdown" and norm(combo.text) == norm(option):
        return []
    listed = [e for e in find_all(p, ("tabled_text", "text", "button", "tree_item"), option)
              if combo is None or e.box[1] > combo.box[1] or e.box[3] < combo.box[1]]
    if listed and clicked(p, combo) if combo is not None else listed:
        return [click(listed[-1])]
    if combo is None:
        return [fail(f'no "{combo_label}" drop-down on the screen')]
    return [click(combo)]


@policy(r'^Fill in the form: (?P<fields>.+?); choose "(?P<option>[^"]+)" from "(?P<combo>[^"]+)"; '
        r'then press "(?P<button>[^"]+)"\.$')
def form_with_choice(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    actions: list[Action] = []
    for f in _QUOTED.finditer(m["fields"]):
        if typed(p, f["value"]):
            continue  # typed already: a list opened over the field may hide it now
        field = field_for(p, f["label"])
        if field is None:
            return [fail(f'no field "{f["label"]}" on the screen')]
        actions += put(p, field, f["value"])
    if actions:
        return actions
    picked = choose(p, m["option"], m["combo"])
    if picked:
        return picked
    return press(p, m["button"])


@policy(r'^Set the slider to (?P<n>\d+), then press "(?P<button>[^"]+)"\.$')
def slide(p: Prompt, m: re.Match[str]) -> list[Action]:
    """The slider to its minimum (Home), then one step right per unit: the history counts the steps
    already taken, since a slider's position is not in the element list."""
    if after_submit(p, m["button"], like=True):
        return [done()]
    slider = find(p, "slider")
    if slider is None:
        return [fail("no slider on the screen")]
    since_home = steps_since_home(p)
    if since_home is None:
        return [click(slider), key("home"), *[key("right")] * int(m["n"])]
    left = int(m["n"]) - since_home
    if left > 0:
        return [key("right")] * left
    return press(p, m["button"])


@policy(r'^Log in with the user name "(?P<user>[^"]+)" and the password "(?P<password>[^"]+)", '
        r'then press "(?P<button>[^"]+)"\.$')
def log_in(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["button"], like=True):
        return [done()]
    fields = find_all(p, "input_field")
    if len(fields) < 2:
        return [fail("no user name and password fields on the screen")]
    user = field_for(p, "Username") or fields[0]
    password = field_for(p, "Password") or fields[1]
    actions = put(p, user, m["user"])
    if not typed(p, m["password"]) and not holds(password, m["password"], secret=True):
        actions += [click(password), type_text(m["password"])]
    return actions + press(p, m["button"])
