"""Scripted policies: the text group (copying a text area into a field, selecting a paragraph by dragging
over it, and reordering jQuery UI sortables: a 3x3 grid and a list of numbers to sort).

Like the planner's own policies, each decides from the current screen and the history alone: a key
sequence goes on from the step the history shows it reached, and a drag that the agent cut short after a
screen change goes on from the previous answer.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    after_submit,
    click,
    copy,
    done,
    drag_state,
    fail,
    find_all,
    finish,
    hold,
    move,
    paste,
    policy,
    release,
    rest_of_previous_plan,
    select_all,
    submit_button,
    task_lines,
    text_width,
    then_finish,
)

TASKS: tuple[str, ...] = (
    "copy-paste", "copy-paste-2", "highlight-text", "highlight-text-2", "drag-items-grid", "drag-sort-numbers",
)


# --- copying --------------------------------------------------------------------------------------------


def _acted_on(step_element: El | None, e: El) -> bool:
    return step_element is not None and step_element.id == e.id and step_element.type == e.type


def copy_into(p: Prompt, src: El, dst: El, submit: El | None) -> list[Action]:
    """Copy the whole text of ``src`` into ``dst`` with the clipboard, then submit.

    The recipe (click the source, select all, copy, click the field, select all, paste) goes on from the
    last click on the source as far as the history follows it; anything else in between starts it over.
    A click that did not give its element the focus is tried again (select-all would take the page)."""
    full = [select_all(), copy(), click(dst), select_all(), paste()]
    again = [click(src), *full, *then_finish(submit)]
    start = max((i for i, s in enumerate(p.steps) if s.name == "click_element" and _acted_on(s.element, src)),
                default=None)
    if start is None:
        return again
    k = 0  # how many steps of ``full`` the history did, in order, since that click
    for s in p.steps[start + 1:]:
        if k < len(full) and s.name == full[k][0] and (full[k][0] != "click_element" or _acted_on(s.element, dst)):
            k += 1
        else:
            return again
    if k == len(full):
        return finish(submit) if (dst.text or "").strip() else again
    if k == 0 and not src.focused:
        return again
    if k >= 3 and not dst.focused:  # the clipboard holds the text already: focus the field again
        return [click(dst), select_all(), paste(), *then_finish(submit)]
    return [*full[k:], *then_finish(submit)]


def _copy_task(p: Prompt, pick: Callable[[list[El]], El | None]) -> list[Action]:
    if after_submit(p):
        return [done()]
    areas = sorted(find_all(p, "text_area"), key=lambda e: (e.box[1], e.box[0]))
    src = pick(areas)
    dst = next(iter(find_all(p, "input_field")), None)
    if src is None or dst is None:
        return [fail("the text area to copy and the text input are not both on the screen")]
    return copy_into(p, src, dst, submit_button(p))


@policy(r"^Copy the text in the textarea below, paste it into the textbox and press Submit\.$")
def copy_paste(p: Prompt, m: re.Match[str]) -> list[Action]:
    return _copy_task(p, lambda areas: areas[0] if areas else None)


@policy(r"^Copy the text from the (?P<n>\d+)(?:st|nd|rd|th) text area below and paste it into the text input, "
        r"then press Submit\.$")
def copy_paste_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    n = int(m["n"])
    return _copy_task(p, lambda areas: areas[n - 1] if 0 < n <= len(areas) else None)


# --- selecting text ---------------------------------------------------------------------------------------


def paragraphs(p: Prompt) -> list[list[El]]:
    """The lines of text below the task, grouped into paragraphs: a gap wider than the spacing of lines
    inside one paragraph starts the next."""
    skip = {e.id for e in task_lines(p)}
    lines = [e for e in p.elements if e.type == "draggable_text" and e.text]
    if not lines:  # a reader that does not tell draggable text from plain text
        lines = [e for e in p.elements if e.type == "text" and e.text and e.id not in skip]
    lines.sort(key=lambda e: (e.box[1], e.box[0]))
    out: list[list[El]] = []
    for e in lines:
        if out and e.box[1] - out[-1][-1].box[3] <= 3:
            out[-1].append(e)
        else:
            out.append([e])
    return out


def select_lines(p: Prompt, lines: list[El]) -> list[Action]:
    """Select the text of ``lines`` by dragging from the left edge of the first character to the right
    edge of the last one, then submit. The drag goes on from the previous answer when the agent cut it
    short; once released, the selection is there (the element list does not show a selection of plain
    text), so only Submit is left."""
    submit = submit_button(p, "Submit", "submit")
    if after_submit(p, "Submit", "submit"):
        return [done()]
    state = drag_state(p)
    if state == "holding":
        rest = rest_of_previous_plan(p)
        if rest and rest[0][0] in ("drag_mouse_move", "drag_mouse_release"):
            return rest
        last = lines[-1]
        return [move(last.box[2] - 1, last.y), release(), *then_finish(submit)]
    if state == "released":
        return finish(submit)
    first, last = lines[0], lines[-1]
    # One pixel inside the first and last glyphs: the selection snaps to the nearer edge of a character,
    # so it starts before the first one and ends after the last one.
    return [hold(first.box[0] + 1, first.y), move(last.box[2] - 1, last.y), release(), *then_finish(submit)]


@policy(r"^Highlight the text in the paragraph below and click submit\.$")
def highlight_text(p: Prompt, m: re.Match[str]) -> list[Action]:
    blocks = paragraphs(p)
    if not blocks:
        return [fail("no paragraph on the screen")]
    return select_lines(p, [e for block in blocks for e in block])


@policy(r"^Highlight the text in the (?P<n>\d+)(?:st|nd|rd|th) paragraph and click submit\.$")
def highlight_text_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    blocks = paragraphs(p)
    n = int(m["n"])
    if not 0 < n <= len(blocks):
        return [fail(f"there is no paragraph number {n} on the screen")]
    return select_lines(p, blocks[n - 1])


# --- sortable lists -----------------------------------------------------------------------------------------
# jQuery UI's sortable moves its placeholder only while the pointer moves over another item: the first move
# of a drag just starts it, and a later move rearranges when the pointer lands on an item from the right side.
# In a vertical list, moving up onto the upper half of an item puts the dragged one before it, and moving
# down onto the lower half puts it after it. In a grid of floated items the horizontal direction decides
# instead: moving left onto the left half of an item puts it before, moving right onto the right half after.
# So each drag is: hold the item, start the drag (a spot that is on no other item), then one move onto the
# goal from the side that puts it where it must go, and release.


def continue_drag(p: Prompt) -> list[Action] | None:
    """While the button is held: the rest of the drag the previous answer planned (or let go)."""
    if drag_state(p) != "holding":
        return None
    rest = rest_of_previous_plan(p)
    if rest and rest[0][0] in ("drag_mouse_move", "drag_mouse_release"):
        return rest
    return [release()]


def _columns(items: list[El]) -> list[int]:
    """The left text edges of the grid's columns: every item starts at one (a run of text joined across
    cells starts at its first cell's)."""
    lefts: list[int] = []
    for x in sorted(e.box[0] for e in items):
        if not lefts or x - lefts[-1] > 6:
            lefts.append(x)
    return lefts


def x_at(e: El, k: int) -> float:
    """Where character ``k`` of a line's text starts, estimated from Arial's advance widths."""
    text = e.text or ""
    return e.box[0] + (e.box[2] - e.box[0]) * text_width(text[:k]) / max(1, text_width(text))


def split_cells(items: list[El], lefts: list[int]) -> list[El]:
    """Items with one name each. A long name runs out of its cell up to the next one's, and a line reader
    then gives both names as one line of text; where such a line crosses a column's left edge, the name
    that starts there is cut off (at the space, or between letters when the reader ran them together,
    whichever Arial's advance widths put nearest that edge)."""
    out: list[El] = []
    for e in items:
        text = e.text or ""
        inside = [x for x in lefts if e.box[0] + 6 < x < e.box[2] - 2]
        if not inside or len(text) < 2 or text_width(text) <= 0:
            out.append(e)
            continue

        def at(k: int, e: El = e) -> float:
            return x_at(e, k)

        cuts: list[int] = []
        spaces = [k + 1 for k, c in enumerate(text) if c == " "]
        for x in inside:
            near = [k for k in spaces if abs(at(k) - x) <= 8]  # a space the reader put between two cells
            cuts.append(min(near or range(1, len(text)), key=lambda k: abs(at(k) - x)))
        starts = [0, *cuts]
        ends = [*cuts, len(text)]
        edges = [e.box[0], *inside, e.box[2]]
        for n, (a, b) in enumerate(zip(starts, ends, strict=True)):
            name = text[a:b].strip()
            if name:
                left, right = edges[n], max(edges[n] + 2, min(edges[n + 1], round(at(b))))
                out.append(El(id=e.id, type=e.type, x=(left + right) // 2, y=e.y, box=(left, e.box[1], right, e.box[3]),
                              text=name))
    return out


def grid(items: list[El]) -> list[list[El]]:
    """Items in rows (top to bottom), each row left to right: a row is the items whose centres lie within
    half an item's height of the first one's."""
    rows: list[list[El]] = []
    for e in sorted(items, key=lambda e: (e.y, e.x)):
        if rows and abs(e.y - rows[-1][0].y) <= 10:
            rows[-1].append(e)
        else:
            rows.append([e])
    return [sorted(r, key=lambda e: e.x) for r in rows]


GRID_PLACES = {
    "to the top left": (0, 0), "to the top center": (0, 1), "to the top right": (0, 2),
    "to the center left": (1, 0), "to the center": (1, 1), "to the center right": (1, 2),
    "to the bottom left": (2, 0), "to the bottom center": (2, 1), "to the bottom right": (2, 2),
}
GRID_STEPS = {"up by one": (-1, 0), "down by one": (1, 0), "left by one": (0, -1), "right by one": (0, 1)}


@policy(r"^Drag (?P<name>.+?) (?P<where>" + "|".join(map(re.escape, [*GRID_PLACES, *GRID_STEPS])) + r")\.$")
def drag_items_grid(p: Prompt, m: re.Match[str]) -> list[Action]:
    going = continue_drag(p)
    if going is not None:
        return going
    found = find_all(p, ("tabled_text", "draggable_text"))
    lefts = _columns(found)
    rows = grid(split_cells(found, lefts))
    cells = [e for row in rows for e in row]
    width = max((len(r) for r in rows), default=0)
    item = next((e for e in cells if (e.text or "").strip() == m["name"].strip()), None)
    if item is None or width == 0:
        return [fail(f"no item {m['name']!r} in the grid")]
    i = cells.index(item)
    where = m["where"]
    if where in GRID_PLACES:
        r, c = GRID_PLACES[where]
    else:
        dr, dc = GRID_STEPS[where]
        r, c = i // width + dr, i % width + dc
    t = r * width + c
    if not (r >= 0 and 0 <= c < width and t < len(cells)) or t == i:
        return [fail(f"cannot move {m['name']!r} from cell {i + 1} to cell {t + 1}")]
    goal = cells[t]
    # The columns' left text edges give the pitch of the grid: an item is a pitch wide less the margins
    # (6 pixels), and its text starts 3 pixels inside it.
    pitch = min((b - a for a, b in itertools.pairwise(lefts)), default=46)
    y = goal.y + 3
    if t > i:  # come from the left of the grid onto the right half of the goal: after it
        start, end = (max(1, lefts[0] - 8), y), (goal.box[0] + round(pitch * 0.6), y)
    else:  # come from the right of the grid onto the left half of the goal: before it
        start, end = (lefts[-1] + pitch - 4, y), (goal.box[0] + 2, y)
    # Hold on the name, near its start: a long name runs out of its cell.
    grab = (min(item.x, item.box[0] + pitch // 3), item.y)
    return [hold(*grab), move(*start), move(*end), release(), done()]


def fewest_moves(values: list[float]) -> tuple[int, int] | None:
    """The first move (take the item at index i, put it at index j) of a shortest sequence of such moves
    that sorts ``values`` in increasing order; None when they are sorted already."""
    start = tuple(range(len(values)))

    def is_sorted(order: tuple[int, ...]) -> bool:
        return all(values[a] <= values[b] for a, b in itertools.pairwise(order))

    if is_sorted(start):
        return None
    first: dict[tuple[int, ...], tuple[int, int]] = {start: (-1, -1)}
    frontier = [start]
    while frontier:
        nxt = []
        for order in frontier:
            for i in range(len(order)):
                rest = order[:i] + order[i + 1:]
                for j in range(len(order)):
                    if j == i:
                        continue
                    new = (*rest[:j], order[i], *rest[j:])
                    if new in first:
                        continue
                    first[new] = (i, j) if order == start else first[order]
                    if is_sorted(new):
                        return first[new]
                    nxt.append(new)
        frontier = nxt
    return None


def _number(text: str | None) -> float | None:
    try:
        return float((text or "").strip().replace("−", "-"))
    except ValueError:
        return None


@policy(r"^Sort the numbers in increasing order, starting with the lowest number at the top of the list\.$")
def drag_sort_numbers(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    going = continue_drag(p)
    if going is not None:
        return going
    submit = submit_button(p)
    rows = sorted((e for e in find_all(p, ("tabled_text", "draggable_text")) if _number(e.text) is not None),
                  key=lambda e: e.y)
    if not rows:
        return [fail("no numbers on the screen")]
    values = [v for v in (_number(e.text) for e in rows) if v is not None]
    first = fewest_moves(values) if len(rows) <= 7 else None
    if first is None and len(rows) > 7:  # too many to search: move the lowest misplaced one up
        want = sorted(range(len(values)), key=lambda k: values[k])
        j = next((k for k in range(len(values)) if values[want[k]] != values[k]), None)
        first = (want[j], j) if j is not None else None
    if first is None:
        return finish(submit)
    i, j = first
    item, goal = rows[i], rows[j]
    # Up onto the upper half of the goal puts the item before it; down onto the lower half, after it.
    end = (goal.x, goal.y - 4) if j < i else (goal.x, goal.y + 4)
    return [hold(item.x, item.y), move(item.x, item.y + (2 if j < i else -2)), move(*end), release()]
