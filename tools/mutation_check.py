"""Does the test suite catch a broken caap? Each mutation below breaks one rule the agent depends on
(a one-line change to the source), runs the tests that cover it, and restores the file; a mutation the
tests still pass on is a hole in the suite.

    .venv/bin/python tools/mutation_check.py                 # every mutation (about 2 minutes on 2 cores)
    .venv/bin/python tools/mutation_check.py --only nms,parser

Prints one line per mutation (caught, or SURVIVED) and exits 1 if any survived. The working tree is
restored after each mutation, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    file: str
    before: str
    after: str
    tests: tuple[str, ...]


MUTATIONS = (
    Mutation("nms", "the detector's duplicate merge keeps every box (no suppression)",
             "caap/observe/steps/boxes.py", "if not kept or overlap[i, kept].max() < threshold:", "if True:",
             ("tests/observe/detect/test_detector.py", "tests/observe/steps/test_snap.py")),
    Mutation("ctc-repeats", "the reader's greedy CTC decoding no longer collapses repeated frames",
             "caap/observe/read/ctc.py", "if label != BLANK and label != previous:", "if label != BLANK:",
             ("tests/observe/read/test_reader.py", "tests/observe/read/test_charlm.py")),
    Mutation("parser", "the answer parser no longer takes the paper's 'Action: functions.NAME' form",
             "caap/decide/parser.py", r"(?P<prefix>functions?\.)?(?P<name>[A-Za-z_][\w]*)\s*\)?",
             r"(?P<prefix>functions?\.)(?P<name>[A-Z]\w*)\s*\)?", ("tests/test_parser.py",)),
    Mutation("centre", "an element's centre is off by one pixel (every click lands beside its target)",
             "caap/geometry.py", "return ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)",
             "return ((box[0] + box[2]) // 2 + 1, (box[1] + box[3]) // 2)",
             ("tests/test_elements.py", "tests/test_actions.py", "tests/test_report.py")),
    Mutation("memo-key", "the reading memo keys a crop by its size alone, not its pixels",
             "caap/observe/memo.py", "digest.update(np.ascontiguousarray(part).tobytes())", "pass",
             ("tests/observe/test_memo.py",)),
    Mutation("refused", "an action denied by the confirmation gate counts as done",
             "caap/records.py", "REFUSED = frozenset({Outcome.DENIED, Outcome.ERROR})",
             "REFUSED = frozenset({Outcome.ERROR})", ("tests/test_memory.py", "tests/test_agent.py")),
    Mutation("let-go", "an episode that ends mid-drag leaves the mouse button held",
             "caap/agent/loop.py", "        if self._button_held:\n            self._button_held = False\n",
             "        if False:\n            self._button_held = False\n", ("tests/test_agent.py",)),
    Mutation("plan-drop", "a batch goes on after an action changed the screen beyond its element",
             "caap/agent/loop.py", "            if drop:\n                break\n", "", ("tests/test_agent.py",)),
    Mutation("mark", "the registry draws a right click as a left click on the run report",
             "caap/act/actions.py", 'mark="right_click",', 'mark="click",', ("tests/test_report.py",)),
    Mutation("old-trace", "an earlier caap's outcome text with its dropped plan no longer reads back",
             "caap/records.py", "            m = _DROPPED.match(data[\"outcome\"])", "            m = None",
             ("tests/test_report.py",)),
    Mutation("key-shape", "a calculator key's operator is no longer told by its shape",
             "caap/observe/steps/texts.py", "if symbol and max(glyph.height, glyph.width) >= SHAPE_MIN_PX:",
             "if False:", ("tests/observe/steps/test_rules.py",)),
    Mutation("name-length", "the planner takes a name two letters longer for a misreading (Female for Male)",
             "caap/testing/planner/kit.py", "if abs(len(a) - len(b)) > max(1, len(b) // 4)", "if False",
             ("tests/test_scripted_policies_desktop.py",)),
    Mutation("beam-top", "the CTC beam search follows every class of a frame (no top-k bound)",
             "caap/observe/read/ctc.py", "if top is not None and len(candidates) > top:", "if False:",
             ("tests/observe/read/test_charlm.py",)),
    Mutation("focus-floor", "the state head's focus threshold ignores its precision floor",
             "caap/train/states.py", "if floor is not None:", "if False:",
             ("tests/observe/read/test_states.py",)),
    Mutation("one-focus", "where two controls show the same focus sign, the first is read focused",
             "caap/observe/steps/focus.py", "        if _one_place(shown, elements):", "        if shown:",
             ("tests/observe/steps/test_focus.py",)),
    Mutation("caret-phase", "the desktop labeller keeps a field's focus where the capture caught its caret off",
             "caap/data/desktop/generate.py", "        if ink_shown < ink_other:", "        if ink_shown > ink_other:",
             ("tests/test_desktop_data.py",)),
    Mutation("arrow-side", "a disclosure triangle points down when it points right (open and closed swapped)",
             "caap/observe/steps/disclosure.py", 'consider(x, y, w, h, direction == "down")',
             'consider(x, y, w, h, direction == "right")', ("tests/observe/steps/test_disclosure.py",)),
    Mutation("square-face", "a row on any face of its own reads selected, square table headers too",
             "caap/observe/steps/selection.py", "if sum(not _same(c, face) for c in corners) < ROUND_CORNERS:",
             "if False:", ("tests/observe/steps/test_selection.py",)),
    Mutation("flat-dither", "a flat light face reads as a held-down button's dither",
             "caap/observe/steps/dither.py", "& (diagonal <= SAME)", "| (diagonal <= SAME)",
             ("tests/observe/steps/test_dither.py",)),
    Mutation("toggle-apart", "the desktop labeller leaves GTK 3's toggle cell apart from the name beside it",
             "caap/bench/desktop/labels.py", "        if not beside:\n            continue\n",
             "        if True:\n            continue\n", ("tests/test_desktop_data.py",)),
    Mutation("check-centre", "a check box boxed with its label is clicked on its name, not its control",
             "caap/elements.py", "        if x2 - x1 >= CONTROL_WIDTHS * (y2 - y1):", "        if False:",
             ("tests/test_elements.py",)),
    Mutation("dots-anywhere", "the desktop labeller takes any three trailing specks for an ellipsis",
             "caap/bench/desktop/labels.py",
             "    if any(w > side or h > side or abs(y + h - baseline) > 1 for _, y, w, h in dots):",
             "    if any(w > side or h > side for _, y, w, h in dots):", ("tests/test_desktop_data.py",)),
    Mutation("mnemonic-any-line", "a line under a letter counts as a mnemonic underline without the blank row "
             "between them", "caap/observe/steps/mnemonics.py",
             "        if gap < 1 or ink[gap, around].any() or (line_bottom < h and ink[line_bottom, around].any()):",
             "        if gap < 1 or (line_bottom < h and ink[line_bottom, around].any()):",
             ("tests/observe/steps/test_mnemonics.py",)),
    Mutation("focus-under-popup", "the desktop labeller keeps the focus of controls under an open menu",
             "caap/data/desktop/generate.py", "    popups = [w for w in windows if w.override_redirect]",
             "    popups: list[XWindow] = []", ("tests/test_desktop_data.py",)),
    Mutation("tinted-ring-focus", "any button with an accent ring takes the focus (Fusion's default button too)",
             "caap/observe/steps/focus.py", "    return focus_ring(rgb, box, grey_face=not held, reach=RING_REACH)",
             "    return focus_ring(rgb, box, reach=RING_REACH)", ("tests/observe/steps/test_focus.py",)),
    Mutation("held-ring-needs-grey", "a held-down toggle's accent ring asked for an untinted face too",
             "caap/observe/steps/focus.py", "    return focus_ring(rgb, box, grey_face=not held, reach=RING_REACH)",
             "    return focus_ring(rgb, box, grey_face=True, reach=RING_REACH)",
             ("tests/observe/steps/test_focus.py",)),
    Mutation("shaded-any-surround", "a button's shaded face held down by the window's threshold on white too",
             "caap/observe/steps/pressed.py",
             "darker_than = ON_WHITE_DARKER if int(got[1].min()) >= WHITE else BUTTON_DARKER",
             "darker_than = BUTTON_DARKER",
             ("tests/observe/steps/test_pressed.py",)),
    Mutation("shaded-tab-as-button", "a tab as shaded as a held-down button made a held-down button",
             "caap/observe/steps/pressed.py", "        if e.type != ElementType.BUTTON or e.checked:",
             "        if e.type not in (ElementType.BUTTON, ElementType.TAB) or e.checked:",
             ("tests/observe/steps/test_pressed.py",)),
    Mutation("tab-bar-ring-corners", "a focus ring's side beside a box taken for a tab's bar",
             "caap/observe/steps/tabs.py", "    return (start, end) if ends <= CORNER_STRAY else None",
             "    return (start, end)", ("tests/observe/steps/test_tabs.py",)),
    Mutation("tab-bar-any-thickness", "a one-pixel underline taken for a tab's bar",
             "caap/observe/steps/tabs.py", "    if not BAR_THICK[0] <= len(lines) <= BAR_THICK[1]:",
             "    if not 1 <= len(lines) <= BAR_THICK[1]:", ("tests/observe/steps/test_tabs.py",)),
    Mutation("tab-bar-reach-too-short", "a bar ten pixels from a side tab's word not followed through",
             "caap/observe/steps/tabs.py", "range(x2 - inset_w, x2 + BAR_REACH + thick)",
             "range(x2 - inset_w, x2 + BAR_REACH)", ("tests/observe/steps/test_tabs.py",)),
    Mutation("tab-bar-strip-kept", "the head's selection of a tab beside the barred one kept",
             "caap/observe/steps/tabs.py", "            out[j] = element.model_copy(update={\"highlighted\": False})",
             "            pass", ("tests/observe/steps/test_tabs.py",)),
    Mutation("tab-bar-text-kept-short", "a side tab's word left as short as the word",
             "caap/observe/steps/tabs.py", "            update[\"bbox\"] = (x1, start, x2, end)",
             "            pass", ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-open-below", "a notebook's current tab, open into its page, taken for a linked button",
             "caap/observe/steps/tabs.py",
             "            if held is None or any(i not in framed for k, i in enumerate(row) if k not in held):",
             "            if held is None:", ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-window-ignored", "a face as grey as the window taken for a held-down page",
             "caap/observe/steps/tabs.py", "(not bands or levels[dark[0]] > darkest_allowed)", "(not bands)",
             ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-boxes-not-grown", "linked buttons boxed on their words never seen to touch",
             "caap/observe/steps/tabs.py", "FACE_REACH = 60 ", "FACE_REACH = 0 ",
             ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-buttons-retyped", "a held-down toggle typed a button made a tab",
             "caap/observe/steps/tabs.py", "            if out[i].type is ElementType.TAB:\n",
             "            if True:\n", ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-toggles-as-pages", "a row with two faces held down read as a stack switcher",
             "caap/observe/steps/tabs.py", "        if len(held) > 1:", "        if len(held) > 99:",
             ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-one-pass", "rows read once, unframed faces with the framed",
             "caap/observe/steps/tabs.py", "    for pool in (framed, set(spans)):", "    for pool in (set(spans),):",
             ("tests/observe/steps/test_tabs.py",)),
    Mutation("linked-held-need-frames", "a held-down face asked for a frame of its own",
             "caap/observe/steps/tabs.py", "    for pool in (framed, set(spans)):", "    for pool in (framed,):",
             ("tests/observe/steps/test_tabs.py",)),
    Mutation("split-areas-any-overlap", "text views of unlike heights that overlap taken for one",
             "caap/observe/steps/boxes.py",
             "    rows = abs(ay1 - by1) <= SPLIT_EDGE_PX and abs(ay2 - by2) <= SPLIT_EDGE_PX",
             "    rows = True", ("tests/observe/steps/test_rules.py",)),
    Mutation("ring-needs-four-sides", "a face at the screen's edge never measured",
             "caap/observe/steps/pressed.py", "if len(sides) < MIN_RING_SIDES:", "if len(sides) < 4:",
             ("tests/observe/steps/test_pressed.py",)),
    Mutation("pill-with-a-word", "a pill with a word on it taken for a switch",
             "caap/observe/steps/switches.py", "if e.type in PILL_TYPES and len((e.text or \"\").strip()) <= 1]",
             "if e.type in PILL_TYPES]", ("tests/observe/steps/test_switch_pills.py",)),
    Mutation("caret-whole-column", "a caret where lines touch needs its whole column unbroken",
             "caap/observe/steps/focus.py", "for a, b in true_runs(band_ink[:, c]):",
             "for a, b in true_runs(band_ink[:, c], gap=99):", ("tests/observe/steps/test_focus.py",)),
    Mutation("icon-before-any-prefix", "whatever PP-OCR reads before the shared name counts as an icon's ink",
             "caap/observe/steps/texts.py",
             "            and (_icon_ink(before_theirs) if before_theirs else _foreign(before_mine)):",
             "            and True:", ("tests/observe/test_text_choice.py",)),
    Mutation("spaces-between-digits", "the reader's space splits a number PP-OCR read whole",
             "caap/observe/steps/texts.py",
             "    gaps = theirs | {k for k in _gaps(reader_text) if not (chars[k - 1].isdigit() "
             "and chars[k].isdigit())}",
             "    gaps = theirs | _gaps(reader_text)", ("tests/observe/test_text_choice.py",)),
    Mutation("keypad-glyph-any-width", "a button's word is read in its ink's box as a keypad's glyph is",
             "caap/observe/steps/field_ink.py", "width <= KEYPAD_WIDTH * height",
             "width <= 99 * height", ("tests/observe/steps/test_rules.py",)),
    Mutation("steady-field-focus", "the desktop labeller keeps the focus of a field that shows none and does not "
             "blink", "caap/data/desktop/generate.py", "    for i in steady:\n", "    for i in steady[:0]:\n",
             ("tests/test_desktop_data.py",)),
    Mutation("value-label-elsewhere", "the number a slider shows beside it counts as a change elsewhere (the plan "
             "is dropped after each key)", "caap/agent/loop.py",
             "(t.bbox, *(v.bbox for v in value_labels(t, elements)))", "(t.bbox,)", ("tests/test_agent.py",)),
    Mutation("nested-bars-kept", "a bar boxed again inside itself stays as two bars", "caap/observe/steps/boxes.py",
             "drop = {id(e) for e in bars\n", "drop = {id(e) for e in bars[:0]\n",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("pressed-without-flat-neighbour", "an icon on a shaded face is held down whatever its row looks like",
             "caap/observe/steps/pressed.py", "for j in flat):", "for j in [*flat, i]):",
             ("tests/observe/steps/test_pressed.py",)),
    Mutation("a-as-e-left-to-chooser", "the reader's e for PP-OCR's a is left to the chooser",
             "caap/observe/steps/texts.py", '(a_read_as_e(mine, theirs) or periods', '(False or periods',
             ("tests/observe/test_text_choice.py",)),
    Mutation("framed-side-by-share", "a frame's side counted by its share of ink, not one run",
             "caap/observe/steps/framed_icons.py", "    return max((b - a + 1 for a, b in true_runs(line)), default=0)",
             "    return float(np.asarray(line).sum())", ("tests/test_desktop_boxes.py",)),
    Mutation("tree-column-by-left-edge", "a tree column's rows found by their left edge alone",
             "caap/bench/desktop/atspi.py", "(named and box[0] >= left - 2 and abs(box[2] - right) <= 2)",
             "(named and False)", ("tests/test_desktop_data.py",)),
    Mutation("toolkit-wrap-unchecked", "a toolkit's word wrap kept though it does not measure up to its lines",
             "caap/bench/desktop/labels.py", "if len(shown) == len(bands) and lines_fit(shown, bands):",
             "if len(shown) == len(bands):", ("tests/test_desktop_data.py",)),
    Mutation("caret-one-line-only", "a text view's caret looked for as if it held one line",
             "caap/observe/steps/focus.py", "for top, bottom in lines if len(lines) > 1 else",
             "for top, bottom in [] if len(lines) > 1 else", ("tests/observe/steps/test_focus.py",)),
    Mutation("two-focused-stand", "two controls read focused both keep it though the focus shows on one",
             "caap/observe/steps/focus.py", "        if len(shown) != 1:\n            return elements\n",
             "        if True:\n            return elements\n", ("tests/observe/steps/test_focus.py",)),
    Mutation("i-bar-when-cut", "a stem whose dot the box cut off is taken for an I",
             "caap/observe/steps/letter_shapes.py", 'c == "i" and not line.cut:', 'c == "i":',
             ("tests/observe/steps/test_letter_shapes.py",)),
    Mutation("size-anywhere", "a letter's case set by its height inside words too",
             "caap/observe/steps/letter_shapes.py", "and (k == 0 or text[k - 1].isspace()):", ":",
             ("tests/observe/steps/test_letter_shapes.py",)),
    Mutation("size-without-gaps", "a letter's case set by its height though an icon's glyph shifts the pairing",
             "caap/observe/steps/letter_shapes.py", "and _word_gaps(line) == len(text.split()) - 1", "",
             ("tests/observe/steps/test_letter_shapes.py",)),
    Mutation("periods-left-to-chooser", "three periods read as an ellipsis left as the reader read them",
             "caap/observe/steps/texts.py", "or periods_read_as_ellipsis(mine, theirs)):", "or False):",
             ("tests/observe/test_text_choice.py",)),
    Mutation("mnemonic-frame-colour", "a mnemonic line looked for against the most common colour (a frame's)",
             "caap/observe/steps/mnemonics.py", "difference, face_colour, frame_lines",
             "difference, background_colour as face_colour, frame_lines",
             ("tests/observe/steps/test_mnemonics.py",)),
    Mutation("picture-read-with-label", "an icon view's label read with the picture above it",
             "caap/observe/steps/field_ink.py", "        if text_top is not None:\n",
             "        if False:\n", ("tests/observe/steps/test_rules.py",)),
    Mutation("frame-ends-over-ink", "a control boxed round what it draws grown along a shared frame line",
             "caap/observe/steps/frames.py", "if inside.any() or not drawn.any():", "if not drawn.any():",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("cut-word-left-out", "a word a long line's box cuts is no longer followed past the box",
             "caap/observe/steps/snap.py", "        if cut:\n            start = max(cut)\n",
             "        if False:\n            start = max(cut)\n", ("tests/observe/steps/test_snap.py",)),
    Mutation("bar-as-word", "a bar or a panel's edge beside a label is chained into it as a missed word",
             "caap/observe/steps/snap.py", "if not inked.size or inked[-1] - inked[0] + 1 < WORD_ROWS * height:",
             "if not inked.size:", ("tests/observe/steps/test_snap.py",)),
    Mutation("frame-line-as-word", "a group box's frame line running on from its title is chained into it",
             "caap/observe/steps/snap.py", "        if _rule_like(rows[:, w.start:w.end]):", "        if False:",
             ("tests/observe/steps/test_snap.py",)),
    Mutation("across-field-edge", "a label's box grows across a field's side into the field's value",
             "caap/observe/steps/snap.py", "and not apart(sp[:2], m[:2])]", "]", ("tests/observe/steps/test_snap.py",)),
    Mutation("line-grows-once", "a long line's box grows by one reach only, not word by word to its end",
             "caap/observe/steps/snap.py", "GROW_ROUNDS = 12", "GROW_ROUNDS = 0",
             ("tests/observe/steps/test_snap.py",)),
    Mutation("greyed-mnemonic-kept", "the mnemonic line under a greyed label is no longer looked for",
             "caap/observe/steps/mnemonics.py", "strength > min(INK, FAINT * int(strength.max()))",
             "strength > INK", ("tests/observe/steps/test_mnemonics.py",)),
    Mutation("greyed-fragments", "a greyed label with a few pixels dark enough for ink is read as those fragments",
             "caap/observe/ocr/ppocr.py", "if faint_ink.any() and ink.sum() < t.faint_share * faint_ink.sum():",
             "if faint_ink.any() and not ink.any():", ("tests/observe/ocr/test_ppocr.py",)),
    Mutation("icon-outline-read", "a leading icon ends at its last coloured column, its dark outline read as a letter",
             "caap/observe/steps/field_ink.py", "while end + 1 < inked.size and inked[end + 1]:", "while False:",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("greyed-label-as-key", "a greyed button's few ink-dark pixels are read as a keypad key's glyphs",
             "caap/observe/steps/field_ink.py",
             "if faint is not None and not _key_sized(faint, crop.shape):",
             "if False:", ("tests/observe/steps/test_mnemonics.py",)),
    Mutation("greyed-digit-blanked", "a greyed digit read at the faint threshold is blanked as a speck",
             "caap/observe/ocr/ppocr.py", "            if read_faint == \"only\":", "            if read_faint:",
             ("tests/observe/ocr/test_ppocr.py",)),
    Mutation("gtk4-picture-button-flat", "a GTK 4 button that shows a picture is no longer grown to its frame",
             "caap/bench/desktop/atspi.py", '(kind == "icon" and node.role in BUTTON_ROLES)', "False",
             ("tests/test_desktop_data.py",)),
    Mutation("picture-frame-one-side", "a GTK 4 picture button grows wherever one side finds a line",
             "caap/bench/desktop/labels.py", "whole_frame=c.type == ElementType.ICON.value", "whole_frame=False",
             ("tests/test_desktop_data.py",)),
    Mutation("control-no-taller", "a square or ring as tall as the letters after it passes for a control (a capital O)",
             "caap/observe/steps/indicators.py",
             "if baseline is None or side_h < TALLER * (baseline - int(text_rows[0]) + 1):", "if baseline is None:",
             ("tests/observe/steps/test_indicators.py",)),
    Mutation("control-any-colours", "an icon of many colours passes for a control (a folder's, a file's)",
             "caap/observe/steps/indicators.py",
             "if not _few_colours(rgb[control[1]:control[3], control[0]:control[2]]):", "if False:",
             ("tests/observe/steps/test_indicators.py",)),
    Mutation("control-ring-hands", "any ring passes for a radio button's, whatever is inside it (a clock's hands)",
             "caap/observe/steps/indicators.py", "    if not inside.any():\n        return True",
             "    if True:\n        return True", ("tests/observe/steps/test_indicators.py",)),
    Mutation("control-focus-frame", "a dotted focus frame's rows are taken for ink, hiding the control inside it",
             "caap/observe/steps/indicators.py", "    ink[_frame_rows(ink)] = False\n", "",
             ("tests/observe/steps/test_indicators.py",)),
    Mutation("gtk4-toggle-up", "a GTK 4 toggle button, a push button pressed while on, is labelled up",
             "caap/bench/desktop/atspi.py",
             'c.checked = "pressed" in states or '
             '(node.role in ("toggle button", "radio button") and "checked" in states)',
             'c.checked = node.role in ("toggle button", "radio button") and '
             '("checked" in states or "pressed" in states)',
             ("tests/test_desktop_data.py",)),
    Mutation("row-text-unselected", "a text inside a selected row is labelled not selected",
             "caap/bench/desktop/atspi.py",
             'c.highlighted = any(a.role in ROW_ROLES and "selected" in a.states for a in tree.ancestors(node))',
             "c.highlighted = False", ("tests/test_desktop_data.py",)),
    Mutation("ring-no-reach", "a focus ring a few pixels off the control's box not looked for",
             "caap/observe/steps/focus.py", "    return focus_ring(rgb, box, reach=RING_REACH)",
             "    return focus_ring(rgb, box)", ("tests/observe/steps/test_focus.py",)),
    Mutation("ring-one-side", "one coloured line along a box moves the box onto a ring",
             "caap/observe/steps/figures.py", "RING_SIDES = 3 ", "RING_SIDES = 1 ",
             ("tests/observe/steps/test_focus.py",)),
    Mutation("head-focus-never-yields", "the head's lone focus reading stands with nothing drawn on it",
             "caap/observe/steps/focus.py", "    if read and _shows_focus(rgb, elements[read[0]]):",
             "    if read:",
             ("tests/observe/steps/test_focus.py",)),
    Mutation("caret-border-at-screen-edge", "a box at the screen's edge keeps a border there, hiding a caret",
             "caap/observe/steps/focus.py", "if v > 0 else 0 for v in box[:2])",
             "if True else 0 for v in box[:2])",
             ("tests/observe/steps/test_focus.py",)),
    Mutation("text-area-not-grown", "a text view boxed in part keeps its box",
             "caap/observe/steps/text_areas.py", "        if new != box:", "        if False:",
             ("tests/test_desktop_boxes.py",)),
    Mutation("text-area-grown-on-window", "a text area box on the window itself grows to the window",
             "caap/observe/steps/text_areas.py", "GROW_EDGES = 3 ", "GROW_EDGES = 5 ",
             ("tests/test_desktop_boxes.py",)),
    Mutation("text-area-grown-round-controls", "a panel holding a button taken for a text view",
             "caap/observe/steps/text_areas.py", "        if any(e.type not in GROW_HOLDS for e in inside):",
             "        if False:", ("tests/test_desktop_boxes.py",)),
    Mutation("text-area-halves-kept", "both parts of one text view kept after growing",
             "caap/observe/steps/text_areas.py", "    return [e for k, e in enumerate(out) if k not in drop]",
             "    return out", ("tests/test_desktop_boxes.py",)),
    Mutation("comma-read-as-period", "a comma's tail under the baseline not looked at",
             "caap/observe/steps/letter_shapes.py", '    return "," if rows[-1] > line.baseline else None',
             "    return None", ("tests/observe/steps/test_rules.py",)),
    Mutation("tiny-i-as-l", "an i in 5 px capitals left as read (an l)",
             "caap/observe/steps/letter_shapes.py", "        if ratio <= TINY_DOT or (rows[0] >= 1 and ratio <= 1.0):",
             "        if False:", ("tests/observe/steps/test_rules.py",)),
    Mutation("stacked-read-whole", "a button under another read in its whole box",
             "caap/observe/steps/field_ink.py", "        if (over := stacked_under(rgb_pixels(image),",
             "        if False and (over := stacked_under(rgb_pixels(image),", ("tests/observe/steps/test_rules.py",)),
    Mutation("figure-one-letter-only", "a figure read as two letters left a text",
             "caap/observe/steps/figures.py", "FIGURE_READING = 3 ", "FIGURE_READING = 1 ",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("bench-screens-set", "the benchmark's workers get the kind of screens as set (desktop for MiniWoB)",
             "caap/cli/bench.py", 'data["observe"] = cfg.observe.model_dump(mode="json", exclude_unset=True)',
             'data["observe"] = cfg.observe.model_dump(mode="json")', ("tests/test_bench.py",)),
    Mutation("blank-text-left-blank", "a small text read as nothing is not read again with room round it",
             "caap/observe/steps/texts.py", "if i in blank or may_be_letter(",
             "if False or may_be_letter(",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("glyph-rival-ignored", "a glyph is named by its best pattern, however close another subtype's",
             "caap/observe/glyphs.py", "1.0 - score <= RIVAL_ERROR * (1.0 - max(rival, 0.0))", "True",
             ("tests/observe/test_glyphs.py",)),
    Mutation("glyph-no-margin", "glyph patterns cut to the ink alone (a plain square has no pattern)",
             "caap/observe/glyphs.py", "cut = grey[rows[0] - 1:rows[-1] + 2, cols[0] - 1:cols[-1] + 2]",
             "cut = grey[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]", ("tests/observe/test_glyphs.py",)),
    Mutation("glyph-islands-gradient", "glyph islands from a 3 x 3 gradient (a glyph joins the line above)",
             "caap/observe/glyphs.py", "edges[:-1, :] |= np.abs(np.diff(g, axis=0)) > INK",
             "edges[:-1, :] |= np.abs(np.diff(g, axis=0)) > INK\n"
             "    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))",
             ("tests/observe/test_glyphs.py",)),
    Mutation("glyph-text-keeps-it", "a text starting with a glyph keeps it in its box",
             "caap/observe/steps/glyph_icons.py", "out[i] = e.model_copy(update={\"bbox\": (g[2] + 1, y1, x2, y2)})",
             "pass", ("tests/observe/test_glyphs.py",)),
    Mutation("glyph-not-named", "a read icon over a glyph keeps the reader's subtype",
             "caap/observe/steps/glyph_icons.py", "if i is not None and out[i].subtype != f.subtype:",
             "if False:", ("tests/observe/test_glyphs.py",)),
    Mutation("typed-no-cores", "a typed value is confirmed on the field as it is only, not on its darkest ink",
             "caap/observe/steps/typed.py",
             "cores = ocr.read(value_cores(look.image, [elements[i] for i, _ in wanted]), boxes, kinds)",
             "cores = plain", ("tests/agent/test_typed.py",)),
    Mutation("typed-believed", "a field takes the value typed into it whatever the readers read",
             "caap/observe/steps/typed.py", "    return reading.strip() == value.strip()", "    return True",
             ("tests/agent/test_typed.py",)),
    Mutation("typed-not-told", "the loop does not tell the observer what it typed",
             "caap/agent/loop.py", "observation = self.observer.observe(frame, typed=self._typed.typed())",
             "observation = self.observer.observe(frame, typed=())", ("tests/test_agent.py",)),
    Mutation("typed-stale-focus", "keys after a click elsewhere go to the field focused before it",
             "caap/agent/typed.py", "if self._field is None and not self._blurred and", "if self._field is None and",
             ("tests/agent/test_typed.py",)),
    Mutation("comma-tail-ignored", "a comma's faint tail under the baseline is not looked at",
             "caap/observe/steps/letter_shapes.py", "int(line.under[a:b + 1].max()) >= TAIL", "False",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("links-narrow-gap-kept", "two links a 2 px space apart stay one box",
             "caap/observe/steps/snap.py", "if b - a >= NARROW_GAP_PX and not across[", "if False and not across[",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("links-descender-cut", "a link is cut where its underline skips round a descender",
             "caap/observe/steps/snap.py", "if b - a >= NARROW_GAP_PX and not across[", "if b - a >= 1 or not across[",
             ("tests/observe/steps/test_rules.py",)),
    Mutation("tiny-no-end-pairs", "tiny letters that touch leave the name's is read as l",
             "caap/observe/steps/letter_shapes.py",
             "pairs = aligned[0] if aligned is not None else _end_pairs(text, line.thin)",
             "pairs = aligned[0] if aligned is not None else {}", ("tests/observe/steps/test_rules.py",)),
    Mutation("menu-2-guess", "click-menu-2's icon variant clicks any named icon",
             "caap/testing/planner/policies/menus.py", "e.subtype == shown.subtype and e.id != shown.id",
             "e.id != shown.id", ("tests/test_scripted_policies_menus.py",)),
)


def run(m: Mutation, python: str) -> tuple[bool, float, str]:
    """(caught, seconds, the last line pytest printed) for one mutation; the file is restored after."""
    path = ROOT / m.file
    source = path.read_text(encoding="utf-8")
    missing = [t for t in m.tests if not (ROOT / t).is_file()]
    if missing:
        raise SystemExit(f"{m.name}: no such test file {', '.join(missing)} (the tests moved?)")
    if source.count(m.before) != 1:
        raise SystemExit(f"{m.name}: the text to mutate is not found exactly once in {m.file} (the code moved?)")
    start = time.monotonic()
    try:
        path.write_text(source.replace(m.before, m.after), encoding="utf-8")
        done = subprocess.run([python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *m.tests],
                              cwd=ROOT, capture_output=True, text=True)
    finally:
        path.write_text(source, encoding="utf-8")
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    return done.returncode != 0, time.monotonic() - start, lines[-1] if lines else done.stderr.strip()[-200:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated mutation names: " +
                        ", ".join(m.name for m in MUTATIONS))
    args = parser.parse_args()
    wanted = {n for n in args.only.split(",") if n}
    unknown = wanted - {m.name for m in MUTATIONS}
    if unknown:
        raise SystemExit(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    survived = []
    for m in MUTATIONS:
        if wanted and m.name not in wanted:
            continue
        caught, seconds, last = run(m, sys.executable)
        print(f"{m.name:12s} {'caught  ' if caught else 'SURVIVED'} {seconds:5.0f} s  {m.what}  [{last}]", flush=True)
        if not caught:
            survived.append(m.name)
    if survived:
        print(f"survived: {', '.join(survived)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
