"""The observer's steps, in the order they run: the one table of the pipeline.

Each entry names a step (a verb for what it does), its stage, a one-line purpose, the function over
the screen (``caap.observe.pipeline.Look``) and the element list, and the models it needs. The
functions here are thin: each calls the rule of its module with the screen's shared arrays
(``look.page_ink``, ``look.page_difference``). ``caap observe --list-steps`` prints this table;
``[observe] disable`` and ``--disable-step`` switch entries off by name. A rule earns its place by
an A/B on validation screens (``caap eval reader --disable-step NAME``); the numbers live in the
model cards' HISTORY files, not here.
"""

from __future__ import annotations

from caap.elements import Element
from caap.observe.glyphs import Found
from caap.observe.pipeline import Look, Step
from caap.observe.primitives import rgb_pixels
from caap.observe.steps import reading, texts
from caap.observe.steps.boxes import (
    drop_spanning_rows,
    merge_duplicates,
    merge_nested_bars,
    merge_overlapping_words,
    merge_split_text_areas,
)
from caap.observe.steps.cells import fit_cells
from caap.observe.steps.covered import covered_buttons
from caap.observe.steps.disclosure import disclosure_triangles
from caap.observe.steps.dither import dithered_faces
from caap.observe.steps.field_ink import blank_placeholders
from caap.observe.steps.figures import (
    bars_as_letters,
    control_kinds,
    control_states,
    focus_rings,
    lone_glyphs,
    small_figures,
    solid_figures,
    thin_bars,
)
from caap.observe.steps.focus import drawn_focus, empty_caret_fields
from caap.observe.steps.framed_icons import framed_icons
from caap.observe.steps.frames import grow_framed_icons, grow_to_frame_ends
from caap.observe.steps.glyph_icons import add_glyph_icons, name_glyph_icons
from caap.observe.steps.grips import resize_grips
from caap.observe.steps.indicators import labelled_controls
from caap.observe.steps.label_stacks import centred_label_stacks
from caap.observe.steps.letter_shapes import letter_shapes
from caap.observe.steps.levels import read_levels
from caap.observe.steps.missed_text import missed_lines
from caap.observe.steps.mnemonics import without_mnemonic_underlines
from caap.observe.steps.pressed import pressed_faces, shaded_buttons
from caap.observe.steps.scrollbars import arrow_scrollbars, trough_scrollbars
from caap.observe.steps.segments import drawn_lines
from caap.observe.steps.selection import rounded_faces
from caap.observe.steps.separators import split_at_separators
from caap.observe.steps.shape_fit import fit_icons, fit_small_shapes
from caap.observe.steps.snap import add_missed_rows, add_missed_words, snap_text_boxes, split_links
from caap.observe.steps.states import read_states
from caap.observe.steps.switches import retype_pills, toggle_switches
from caap.observe.steps.table_rows import drop_table_row_fields
from caap.observe.steps.tabs import current_tabs
from caap.observe.steps.task_names import read_task_names
from caap.observe.steps.text_areas import framed_text_areas, grown_text_areas
from caap.observe.steps.typed import read_typed_values


def _detect(look: Look, elements: list[Element]) -> list[Element]:
    assert look.parts.detector is not None  # the step needs the detector
    return look.parts.detector.detect(look.image)


def _missed_lines(look: Look, elements: list[Element]) -> list[Element]:
    assert look.parts.ocr is not None  # the step needs PP-OCR
    return missed_lines(look.image, elements, look.parts.ocr)


def _glyphs(look: Look) -> list[Found]:
    """The glyphs of the reader's bank drawn on the screen, looked for once (on the kinds of screen the
    bank was cut from)."""
    if look.glyphs is None:
        bank = look.parts.reader.glyphs if look.parts.reader is not None else None
        look.glyphs = bank.find(look.image) if bank is not None and look.parts.screens in bank.screens else []
    return look.glyphs


def _erase_mnemonic_underlines(look: Look, elements: list[Element]) -> list[Element]:
    if look.parts.screens == "desktop":
        look.replace_image(without_mnemonic_underlines(look.image, elements))
    return elements


READER = ("reader",)
STEPS: tuple[Step, ...] = (
    # detect: the network's boxes and the clean-up of its output
    Step("detect_elements", "detect", "the detector's boxes and classes, the screen at its own resolution",
         _detect, ("detector",)),
    Step("merge_duplicate_boxes", "detect", "keep the most confident of boxes that cover one thing, whatever "
         "class each has", lambda look, els: merge_duplicates(els)),
    Step("merge_nested_bars", "detect", "keep the outer of two slider, progress bar or scrollbar boxes one "
         "inside the other", lambda look, els: merge_nested_bars(els)),
    Step("merge_split_text_areas", "detect", "one box for a text view boxed in two overlapping halves",
         lambda look, els: merge_split_text_areas(els)),
    Step("drop_spanning_rows", "detect", "drop a row box that spans two rows the detector also found",
         lambda look, els: drop_spanning_rows(els)),
    Step("drop_table_row_fields", "detect", "drop a field box on a table row: its frame lines run on round "
         "another cell's text", lambda look, els: drop_table_row_fields(look.image, els)),
    # fit: the detector's boxes fitted to the pixels
    Step("fit_small_shapes", "fit", "fit each small shape box to its figure",
         lambda look, els: fit_small_shapes(look.image, els)),
    Step("grow_framed_icons", "fit", "box an icon that sits alone in a drawn button frame as the frame",
         lambda look, els: grow_framed_icons(look.image, els)),
    Step("grow_to_frame_ends", "fit", "grow a control boxed blank in a frame running past its box to the frame "
         "(Qt's tool box)",
         lambda look, els: grow_to_frame_ends(look.image, els)),
    Step("grow_text_areas", "fit", "desktop: grow a text view boxed in part to the panel of its colour it stands on",
         lambda look, els: els if look.parts.screens != "desktop" else grown_text_areas(look.image, els)),
    Step("fit_icons", "fit", "fit each small icon box to what differs from the colour round it",
         lambda look, els: fit_icons(look.image, els)),
    Step("snap_text_boxes", "fit", "move one-line text boxes' left and right sides to the words they cover",
         lambda look, els: snap_text_boxes(look.image, els)),
    Step("fit_cells", "fit", "fit a table cell boxed whole (its text set right or centred) to its text",
         lambda look, els: fit_cells(look.image, els)),
    Step("split_links", "fit", "cut a link box holding two links where their underline breaks",
         lambda look, els: split_links(look.image, els)),
    Step("split_at_separators", "fit", "cut a text box holding texts joined by middle dots into them",
         lambda look, els: split_at_separators(look.image, els)),
    Step("add_missed_words", "fit", "add the words of found lines of text that no box holds (short inline links)",
         lambda look, els: add_missed_words(look.image, els)),
    Step("merge_overlapping_words", "fit", "merge text or link boxes of one line that run into each other",
         lambda look, els: merge_overlapping_words(els)),
    Step("add_missed_rows", "fit", "add a list's rows that no box holds, one row pitch after another",
         lambda look, els: add_missed_rows(look.image, els)),
    Step("retype_centred_label_stacks", "fit", "make a column of centred labels taken for tabs texts fitted "
         "to their ink", lambda look, els: centred_label_stacks(look.image, els)),
    # propose: what the detector misses, from the pixels (only with a reader: these boxes must be read)
    Step("add_lone_glyphs", "propose", "add a text for every large glyph standing alone that no box holds",
         lambda look, els: lone_glyphs(look.image, els, look.page_ink), READER),
    Step("add_small_figures", "propose", "add a shape for every small filled figure (a dot, a marker) no box holds",
         lambda look, els: small_figures(look.image, els, look.page_ink), READER),
    Step("add_thin_bars", "propose", "add a progress bar for every long thin bar no box holds",
         lambda look, els: thin_bars(look.image, els, look.page_difference), READER),
    Step("add_arrow_scrollbars", "propose", "add a scrollbar for every two arrow buttons with a trough between",
         lambda look, els: arrow_scrollbars(look.image, els, look.page_ink), READER),
    Step("add_trough_scrollbars", "propose", "add a scrollbar for every trough with a slider in it",
         lambda look, els: trough_scrollbars(look.image, els, look.page_difference), READER),
    Step("add_framed_icons", "propose", "add an icon for every small framed glyph (a dock's title buttons)",
         lambda look, els: framed_icons(look.image, els, look.page_ink), READER),
    Step("add_drawn_lines", "propose", "add a shape for every slanted line drawn between two points",
         lambda look, els: drawn_lines(look.image, els, look.page_ink), READER),
    Step("add_toggle_switches", "propose", "add a checkbox for every switch-shaped pill no box holds",
         lambda look, els: toggle_switches(look.image, els, look.page_difference), READER),
    Step("add_glyph_icons", "propose", "add an icon for each glyph of the reader's glyph bank no icon box holds; "
         "a text it starts or ends cedes it", lambda look, els: add_glyph_icons(els, _glyphs(look)), READER),
    Step("add_missed_lines", "propose", "add a text for every line PP-OCR's text detector finds where no box "
         "stands", _missed_lines, ("reader", "ocr")),
    Step("add_text_areas", "propose", "add a text area for every panel that text lines stand on",
         lambda look, els: framed_text_areas(look.image, els), READER),
    # read: the reader, PP-OCR where it is unsure, the text chooser
    Step("erase_foreign_ink", "read", "paint over what shows through a field besides its value (a second "
         "text, the caret, trailing controls)", reading.erase_foreign_ink, READER),
    Step("erase_mnemonic_underlines", "read", "desktop: paint over the line a toolkit draws under the letter "
         "Alt presses (Qt's F of Find read E)", _erase_mnemonic_underlines, READER),
    Step("narrow_reading_boxes", "read", "read a row or button from after the icon before its text, a keypad's "
         "key in its glyphs' box (desktop)",
         reading.narrow_reading_boxes, READER),
    Step("read_elements", "read", "read every box in one batch: type, text, states",
         reading.read_elements, READER),
    Step("reread_doubtful_texts", "read", "PP-OCR reads the texts the reader is unsure of; the chooser "
         "picks where they differ", texts.reread_doubtful_texts, ("reader", "ocr")),
    Step("read_lone_letters", "read", "a small icon both readers read as one letter, or a text read as nothing "
         "PP-OCR reads as one, is that letter",
         texts.read_lone_letters, ("reader", "ocr")),
    Step("empty_placeholder_fields", "read", "a field that shows only its placeholder has no text",
         lambda look, els: blank_placeholders(look.image, els), READER),
    Step("read_typed_values", "read", "a field read otherwise than the value the agent typed into it takes that "
         "value where PP-OCR reads exactly it", read_typed_values, ("reader", "ocr")),
    # settle: corrections on the pixels around what was read
    Step("name_glyph_icons", "settle", "an icon drawn as a glyph of the reader's glyph bank (a menu's disk or "
         "magnifier) takes the bank's name", lambda look, els: name_glyph_icons(els, _glyphs(look)), READER),
    Step("read_letter_shapes", "settle", "look-alike letters set as drawn: i or I by the dot, c o s v w x z by "
         "their height", lambda look, els: letter_shapes(look.image, els), READER),
    Step("read_task_names", "settle", "a name of the task that no element reads is read by the one element "
         "near it whose frames fit it", read_task_names, READER),
    Step("trim_trailing_chevrons", "settle", "take a submenu's chevron off the end of a row's text",
         texts.trim_trailing_chevrons, READER),
    Step("trim_drawn_marks", "settle", "on desktop windows, take icons and frame lines off the "
         "texts beside them", texts.trim_drawn_marks, READER),
    Step("retype_solid_figures", "settle", "a text of up to three letters or a shape that is a filled figure "
         "becomes a shape of its kind", lambda look, els: solid_figures(look.image, els), READER),
    Step("retype_bars_as_letters", "settle", "a lone glyph read as the digit one whose ink is a plain bar is "
         "the letter l", lambda look, els: bars_as_letters(look.image, els), READER),
    Step("retype_controls_by_outline", "settle", "a round control is a radio button, a square one a checkbox",
         lambda look, els: control_kinds(look.image, els), READER),
    Step("retype_labelled_controls", "settle", "a text, row or field whose box starts with a check box's or radio "
         "button's control is that control", lambda look, els: labelled_controls(look.image, els), READER),
    Step("retype_switch_pills", "settle", "a text, button or icon box fitted to a switch's pill, read as one glyph "
         "at most, is a checkbox", lambda look, els: retype_pills(look.image, els, look.page_difference), READER),
    Step("read_states", "settle", "the state head reads each control's states (ticked, focused, selected, "
         "open, greyed...) from its pixels", read_states, READER),
    Step("read_shaded_buttons", "settle", "desktop: a button on a plain grey face well darker "
         "than its surround is held down",
         lambda look, els: els if look.parts.screens != "desktop" else shaded_buttons(look.screen, els),
         READER),
    Step("read_drawn_focus", "settle", "desktop: the one control showing a dotted ring, a caret or an accent ring "
         "has the focus",
         lambda look, els: els if look.parts.screens != "desktop" else drawn_focus(look.screen, els),
         READER),
    Step("empty_caret_fields", "settle", "desktop: a field whose one glyph read is a caret standing alone is "
         "empty", lambda look, els: els if look.parts.screens != "desktop" else empty_caret_fields(look.screen, els),
         READER),
    Step("read_dithered_faces", "settle", "desktop: a button, check box or icon with a dithered face (Windows "
         "style) is held down", lambda look, els: els if look.parts.screens != "desktop"
         else dithered_faces(look.screen, els), READER),
    Step("read_pressed_faces", "settle", "desktop: an icon on a shaded face among flat ones is held down, a flat "
         "one is not", lambda look, els: els if look.parts.screens != "desktop" else pressed_faces(look.screen, els),
         READER),
    Step("read_levels", "settle", "a slider's or progress bar's value from where its thumb or fill stands",
         lambda look, els: read_levels(rgb_pixels(look.image), els), READER),  # a state: read with the rest
    Step("unhighlight_plain_rows", "settle", "a row on the page's own colour is not highlighted",
         reading.unhighlight_plain_rows, READER),
    Step("read_selection_faces", "settle", "desktop: a row standing on a rounded face of its own (GTK 4's "
         "selection) is highlighted",
         lambda look, els: els if look.parts.screens != "desktop" else rounded_faces(look.screen, els), READER),
    Step("read_current_tabs", "settle", "desktop: a tab barred on one side or held down in a linked row is "
         "current; linked toggles held down",
         lambda look, els: els if look.parts.screens != "desktop" else current_tabs(look.screen, els), READER),
    Step("read_disclosure_triangles", "settle", "desktop: a row is open or closed as its triangle (▾ ▸) or "
         "box (⊟ ⊞) says; a titled one is a row",
         lambda look, els: els if look.parts.screens != "desktop" else disclosure_triangles(look.image, els),
         READER),
    Step("read_control_marks", "settle", "without a state head: a checkbox or radio is ticked where its control "
         "shows a mark",
         lambda look, els: els if look.states_read else control_states(look.image, els), READER),
    Step("read_focus_rings", "settle", "without a state head: a field, drop-down or button ringed in colour round "
         "a plain face is focused",
         lambda look, els: els if look.states_read else focus_rings(look.image, els), READER),
    Step("add_resize_grips", "settle", "a field with a resize grip is a text area; add a handle over the grip",
         lambda look, els: resize_grips(look.image, els), READER),
    Step("add_covered_buttons", "settle", "web pages: box what shows of a button another lies on as a nameless "
         "button", lambda look, els: els if look.parts.screens != "web" else covered_buttons(look.image, els,
                                                                                            look.parts.ocr),
         READER),
)

STEP_NAMES: tuple[str, ...] = tuple(s.name for s in STEPS)
# Steps whose rule weighs an element against the rest of the screen (the page's colour, the one
# focus of a window, the current one of a strip of tabs, a shaded icon among flat ones): a partial
# look (caap.observe.partial) runs them once over the whole screen, not on its cut-outs.
WHOLE_SCREEN_STEPS: tuple[str, ...] = ("read_drawn_focus", "read_pressed_faces", "unhighlight_plain_rows",
                                       "read_current_tabs")
# The steps behind ``[observe] snap_text_boxes = false`` and ``caap eval --no-snap``: the fit stage.
FIT_STEPS: tuple[str, ...] = tuple(s.name for s in STEPS if s.stage == "fit")
# The read stage's PP-OCR steps: the observe contract's ``timings_ms.ocr``.
OCR_READ_STEPS: tuple[str, ...] = ("reread_doubtful_texts", "read_lone_letters", "read_typed_values")
