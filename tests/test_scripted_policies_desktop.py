"""The scripted planner on desktop tasks: it reads screen text as the CAAP prompt tells a model to
(OCR typos, labels cut short, stray glyphs), finds a field by its label, and edits a text whose
lines the screen shows one by one."""

from __future__ import annotations

from caap.testing.planner.kit import El, Prompt, find, find_like, read_as
from caap.testing.planner.policies.desktop import field_for
from caap.testing.planner.policies.desktop_qt import field_near
from caap.testing.planner.policies.desktop_tk import add_line, replace_word, text_block


def el(i: int, kind: str, box: tuple[int, int, int, int], text: str | None = None, **kw) -> El:
    return El(id=i, type=kind, x=(box[0] + box[2]) // 2, y=(box[1] + box[3]) // 2, box=box, text=text, **kw)


def test_screen_text_is_read_like_the_name_it_should_be():
    assert read_as("^ Cancel", "Cancel") == 1.0  # an icon read as a glyph before the label
    assert read_as("—Defined List Only—", "Defined List Only") == 1.0  # a frame's line read as dashes
    assert read_as("Getting S…", "Getting Started") == 0.95  # a column cut the label short
    assert read_as("Qutput directory:", "Output directory") > 0.85  # a letter misread
    assert read_as("Left", "Right") < 0.5 and read_as("Save As...", "Save") < 0.8 and read_as(None, "OK") == 0.0
    assert read_as("Female", "Male") == 0.0  # two letters more: another word, not a misreading
    assert read_as("tra Check buttons", "Check buttons") > 0.8  # a stray word beside the name
    p = Prompt("", [el(1, "button", (0, 0, 60, 20), "FSave"), el(2, "button", (70, 0, 130, 20), "^ Cancel")])
    assert find(p, "button", "Save") is None  # the exact reading finds nothing...
    assert find_like(p, "button", "Save").id == 1 and find_like(p, "button", "Cancel").id == 2  # ...a reader does


def test_a_field_is_the_one_on_its_labels_line():
    label = el(4, "text", (3, 56, 100, 70), "Search string:")
    field = el(5, "input_field", (121, 50, 480, 72), "")
    area = el(9, "text_area", (1, 72, 474, 503), "Line 1: the holiday\nLine 2")  # starts right under the label
    p = Prompt("", [label, field, area])
    assert field_near(p, "Search string").id == 5
    # No field to be seen (a file chooser's name entry): the value beside its label is in it.
    shown = Prompt("", [el(1, "text", (10, 20, 53, 34), "Name:"), el(2, "tabled_text", (74, 18, 150, 36), "untitled.txt"),
                        el(3, "tabled_text", (200, 100, 260, 114), "Name")])
    assert field_for(shown, "Name").id == 2


def test_an_editors_lines_are_its_text():
    lines = [el(1, "tabled_text", (3, 3, 113, 21), "Travel plan:"), el(2, "text", (0, 19, 209, 38), "The train leaves."),
             el(3, "text", (0, 36, 257, 55), "Pack the small suitcase tonight."),
             el(4, "button", (283, 526, 417, 555), "See Code")]
    p = Prompt('In the text, replace "tonight" with "morning".', lines)
    block = text_block(p)
    assert block.text == "Travel plan:\nThe train leaves.\nPack the small suitcase tonight." and block.id == 3
    import re

    m = re.match(r'^In the text, replace "(?P<old>[^"]+)" with "(?P<new>[^"]+)"\.$', p.task)
    actions = replace_word(p, m)
    (name, args), *rest = actions
    assert name == "click_new_point" and 0 < args["x"] < 257 and args["y"] == 45  # inside the word's line
    assert [a[0] for a in rest] == ["press_key"] * 8 + ["type_text", "done"]
    m2 = re.match(r'^Add the line "(?P<line>[^"]+)" at the end of the text\.$', 'Add the line "Bye." at the end of the text.')
    assert add_line(Prompt(m2.string, lines), m2)[0] == ("click_element", {"element_id": 3})  # the last line


def test_a_control_is_found_by_its_name_before_its_listed_type():
    """The element list may type a control wrong (a radio button listed as a check box, a list's rows
    as plain texts, a label as a tab); a reader of the list goes by the names it shows."""
    from caap.testing.planner.policies.desktop_qt import make_changes

    shown = [el(3, "tab", (46, 43, 109, 68), "Name:"), el(4, "input_field", (112, 42, 370, 67), ""),
             el(6, "checkbox", (110, 76, 166, 95), "Male", checked=False),
             el(17, "text", (113, 215, 172, 230), "Student"), el(18, "text", (117, 236, 183, 247), "Fisherman")]
    task = 'Make these changes: type "Ken" into "Name"; pick "Male"; select "Fisherman".'
    from caap.testing.planner.kit import POLICIES

    p = Prompt(task, shown)
    m = next(m for pattern, fn in POLICIES if fn is make_changes and (m := pattern.match(task)))
    actions = make_changes(p, m)
    clicked_ids = [a[1].get("element_id") for a in actions if a[0] == "click_element"]
    assert 4 in clicked_ids and 6 in clicked_ids and 18 in clicked_ids, actions
    assert ("type_text", {"string_to_type": "Ken"}) in actions


def test_a_tree_row_listed_as_another_type_is_still_the_row():
    import re

    from caap.testing.planner.policies.desktop_gtk import collapse

    rows = [el(1, "tree_item", (20, 40, 140, 56), "Charlemagne"),
            el(2, "checkbox", (30, 60, 170, 76), "–Pepin of Herstal"),  # an expander glyph read into its name
            el(3, "tree_item", (40, 80, 160, 96), "Rotrude")]
    task = 'Collapse "Pepin of Herstal" in the tree.'
    m = re.match(r'^Collapse "(?P<item>[^"]+)" in the tree\.$', task)
    actions = collapse(Prompt(task, rows), m)
    assert actions[0] == ("click_element", {"element_id": 2}) and actions[1][0] == "press_key", actions
