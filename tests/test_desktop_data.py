"""`caap dataset desktop`: real GTK, Qt and Tk applications on Xvfb, labelled from the
accessibility tree (AT-SPI) or from Tk itself, written as a caap dataset.

The live tests start their own Xvfb, D-Bus and AT-SPI bus (through the generator) and are skipped,
naming the Debian package, where an application or the accessibility stack is missing.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw
from typer.testing import CliRunner

from caap.bench.desktop.apps import APPS, EVALUATION_APPS, QT_EXAMPLES, RESERVED_APPS, TRAINING_APPS, App
from caap.bench.desktop.atspi import candidates as atspi_candidates
from caap.bench.desktop.labels import Candidate, finish, visible_box, wrap_texts
from caap.bench.desktop.session import XWindow, atspi_missing
from caap.bench.desktop.tk import candidates as tk_candidates
from caap.bench.desktop.tk import demo_dir
from caap.cli import app as cli_app
from caap.data.desktop import generate as gen
from caap.data.format import Dataset, open_dataset

needs_x = pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("xdotool") is None,
                             reason="needs Xvfb and xdotool (Debian packages xvfb, xdotool)")
needs_capture = pytest.mark.skipif(
    importlib.util.find_spec("mss") is None or importlib.util.find_spec("Xlib") is None,
    reason="needs mss and python-xlib (pip install 'caap[desktop]')")
_ATSPI = atspi_missing() if shutil.which("Xvfb") else "no Xvfb"
needs_atspi = pytest.mark.skipif(_ATSPI is not None, reason=f"needs the AT-SPI stack: {_ATSPI}")
needs_zenity = pytest.mark.skipif(shutil.which("zenity") is None, reason="needs zenity (Debian package zenity)")
SLIDERS = QT_EXAMPLES / "widgets/sliders/sliders"
needs_qt = pytest.mark.skipif(not SLIDERS.exists(), reason="needs Qt's examples (Debian package qtbase5-examples)")
needs_tk = pytest.mark.skipif(demo_dir() is None or importlib.util.find_spec("tkinter") is None,
                              reason="needs Tk's demos and tkinter (Debian packages tk8.6-doc, python3-tk)")


def _one_screen(tmp_path: Path, app: App, **kwargs) -> tuple[Dataset, list]:
    stats = gen.generate(tmp_path / "ds", [app], screens_per_app=1, size=(1024, 768), **kwargs)
    assert not stats.skipped, stats.skipped
    ds = open_dataset(tmp_path / "ds")
    anns = [ds.load(p) for p in ds.label_paths()]
    assert len(anns) == 1 and stats.per_app[app.name] == 1
    ann = anns[0]
    assert ann.source.kind == "desktop" and ann.source.task == app.name and ann.source.seed == 0
    assert ann.elements, "no elements labelled"
    for e in ann.elements:  # the annotation validator checks the image bounds; boxes are real too
        x1, y1, x2, y2 = e.bbox
        assert x2 - x1 >= 3 and y2 - y1 >= 3, e
    return ds, ann.elements


def _find(elements, kind: str, text: str | None = None):
    found = [e for e in elements if e.type.value == kind and (text is None or e.text == text)]
    assert found, f"no {kind} {text!r} among {[(e.type.value, e.text) for e in elements]}"
    return found[0]


@needs_atspi
@needs_zenity
@pytest.mark.display
@needs_x
@needs_capture
def test_zenity_entry_through_atspi(tmp_path):
    app = App("zenity-entry", "gtk3", ("zenity", "--entry", "--title=Rename", "--text=New name:",
                                       "--entry-text=holiday photos"), "zenity", resizable=False)
    ds, elements = _one_screen(tmp_path, app)
    ok, cancel = _find(elements, "button", "OK"), _find(elements, "button", "Cancel")
    entry = _find(elements, "input_field", "holiday photos")
    _find(elements, "text", "New name:")
    assert entry.focused is True and ok.focused is False
    # GTK puts Cancel left of OK, both below the field.
    assert cancel.bbox[2] <= ok.bbox[0] and entry.bbox[3] <= ok.bbox[1]
    assert ds.meta()["generator"]["split"] == "train"


@needs_atspi
@needs_zenity
@pytest.mark.display
@needs_x
@needs_capture
def test_a_focus_gtk_does_not_draw_is_labelled_unknown(tmp_path):
    # A fresh GTK 3 dialog focuses its default button without drawing a ring: AT-SPI says
    # focused, the pixels do not. The entry's focus shows (its border and caret): it stays.
    app = App("zenity-question", "gtk3", ("zenity", "--question", "--text=Install the update now?"), "zenity",
              resizable=False)
    _, elements = _one_screen(tmp_path, app)
    yes, no = _find(elements, "button", "Yes"), _find(elements, "button", "No")
    assert yes.focused is None and no.focused is False


@needs_atspi
@needs_qt
@pytest.mark.display
@needs_x
@needs_capture
def test_qt_example_through_atspi(tmp_path):
    app = App("qt5-widgets-sliders", "qt5", (str(SLIDERS),), "qtbase5-examples", resizable=False)
    _, elements = _one_screen(tmp_path, app)
    _find(elements, "checkbox", "Inverted appearance")
    _find(elements, "dropdown", "Horizontal slider-like widgets")
    _find(elements, "text", "Minimum value:")
    _find(elements, "text", "Controls")  # a group box's title
    slider = _find(elements, "slider")
    assert slider.bbox[2] - slider.bbox[0] > 3 * (slider.bbox[3] - slider.bbox[1])  # the horizontal one
    assert slider.value is not None and 0.0 <= slider.value <= 1.0 and slider.enabled is True
    _find(elements, "scrollbar")


def test_no_focus_is_labelled_outside_an_open_popup():
    """With a menu open, Qt reports the text view under it as focused but draws no caret: every
    control outside the popup gets focus unknown, the popup's own controls are not among them, and
    nothing is asked of the desktop (no Tab would reach the window under a menu)."""
    from caap.elements import Element
    from caap.taxonomy import ElementType

    main = XWindow(1, (0, 0, 640, 480), "Notepad", 10, False)
    menu = XWindow(2, (0, 22, 166, 186), "", 10, True)
    box = (0, 0, 640, 480)

    def label(kind: ElementType, bbox, focused, window=None):
        return (Element(type=kind, bbox=bbox, focused=focused), Candidate(kind.value, bbox, window=window))

    labelled = [
        label(ElementType.TEXT_AREA, (166, 57, 640, 480), True),            # the view, cut by the menu
        label(ElementType.BUTTON, (200, 24, 230, 50), False),
        label(ElementType.INPUT_FIELD, (10, 40, 150, 60), False, window=2),  # drawn in the popup
        label(ElementType.BUTTON, (20, 150, 60, 170), False),                # its centre on the menu
    ]
    assert gen.under_popup(labelled, [main, menu], box) == [0, 1]
    out = gen._focus_as_drawn(None, box, Image.new("RGB", (640, 480), "white"), labelled,  # type: ignore[arg-type]
                              [main, menu])
    assert [e.focused for e, _ in out] == [None, False, False, False]
    assert gen.under_popup(labelled, [main], box) == []  # no popup: nothing changes


def test_a_field_that_shows_no_focus_and_does_not_blink_is_labelled_unknown(monkeypatch):
    """A Qt window that is not the active one draws no caret: AT-SPI says its field is focused,
    nothing blinks, and nothing changes when Tab takes the focus away, so the label says unknown.
    A field framed by a focus ring (gone while the focus is away) stays focused."""
    from caap.elements import Element
    from caap.taxonomy import ElementType

    monkeypatch.setattr(gen, "BLINK_INTERVAL_S", 0.0)
    box = (0, 0, 200, 100)
    plain = Image.new("RGB", (200, 100), "white")
    ringed = plain.copy()
    ImageDraw.Draw(ringed).rectangle((8, 48, 152, 72), outline=(48, 140, 198), width=2)

    class Desktop:  # the frames a desktop shows: the capture until Tab, then ``away``
        def __init__(self, shown: Image.Image) -> None:
            self.frame, self.keys = shown, []

        def capture(self, _box):
            return self.frame if not self.keys or self.keys[-1] == "shift+Tab" else plain

        def settle(self, _box):
            return self.capture(_box)

        def xdotool(self, *args):
            self.keys.append(args[-1])

    field = Element(type=ElementType.INPUT_FIELD, bbox=(10, 50, 150, 70), focused=True)
    labelled = [(field, Candidate("input_field", field.bbox))]
    for shown, want in ((plain, None), (ringed, True)):
        desktop = Desktop(shown)
        out = gen._focus_as_drawn(desktop, box, shown, labelled, [])  # type: ignore[arg-type]
        assert out[0][0].focused is want and desktop.keys == ["Tab", "shift+Tab"]


@needs_atspi
@needs_qt
@pytest.mark.display
@needs_x
@needs_capture
def test_a_fields_focus_is_labelled_only_where_the_capture_shows_it(tmp_path):
    """Qt's completer example focuses its empty line edit. Its caret blinks: in the Windows style
    nothing else shows the focus, so the label says focused exactly where the capture caught the
    caret; Fusion also frames the focused field in its accent colour, so its label stays focused."""
    from caap.observe.steps.focus import text_caret

    for seed, style in ((0, "windows"), (1, "fusion")):
        gen.generate(tmp_path / str(seed), [APPS["qt5-tools-completer"]], screens_per_app=1, size=(1024, 768),
                     seed=seed)
        ds = open_dataset(tmp_path / str(seed))
        (ann,) = [ds.load(p) for p in ds.label_paths()]
        assert f"style {style}" in (ann.source.note or "")
        (field,) = [e for e in ann.elements if e.type.value == "input_field" and e.text == ""]
        caret = text_caret(np.asarray(Image.open(ds.image_path(ann)).convert("RGB")), field.bbox)
        if style == "windows":
            assert field.focused is (True if caret else None)
        else:
            assert field.focused is True


@needs_atspi
@pytest.mark.skipif(APPS["caap-qt5-tools"].missing() is not None, reason=str(APPS["caap-qt5-tools"].missing()))
@pytest.mark.display
@needs_x
@needs_capture
def test_qt_checkable_buttons_are_labelled_buttons_held_down(tmp_path):
    """Qt reports a checkable push or tool button as a check box; the labels say what is drawn."""
    from caap.bench.desktop.labels import QT_BUTTON_HEIGHT

    _, elements = _one_screen(tmp_path, APPS["caap-qt5-tools"])
    down = [e for e in elements if e.type.value == "button" and e.checked]
    assert down and all(e.bbox[3] - e.bbox[1] >= QT_BUTTON_HEIGHT for e in down)
    checks = [e for e in elements if e.type.value in ("checkbox", "radio")]
    assert checks and all(e.bbox[3] - e.bbox[1] < QT_BUTTON_HEIGHT for e in checks)


@needs_tk
@pytest.mark.display
@needs_x
@needs_capture
def test_tk_demo_through_winfo(tmp_path):
    _, elements = _one_screen(tmp_path, APPS["tk-button"])
    for colour in ("Peach Puff", "Light Blue", "Sea Green", "Yellow"):
        _find(elements, "button", colour)
    _find(elements, "button", "See Code")
    lines = [e for e in elements if e.type.value == "text"]
    # Each line of the wrapped message as Tk wraps it (two spaces after a full stop included).
    assert [e.text for e in lines[:5]] == [
        "If you click on any of the four buttons below, the", "background of the button area will change to the color",
        "indicated in the button. You can press Tab to move", "among the buttons, then press Space to invoke the",
        "current button."]
    # Two spaces after a full stop move a wrap: measured as Tk measures, not guessed from the words
    # (on the datasets' 1440x900 screen, where the guess put "by" on the first line).
    gen.generate(tmp_path / "entry", [APPS["tk-entry1"]], screens_per_app=1, size=(1440, 900))
    ds = open_dataset(tmp_path / "entry")
    lines = [e.text for e in ds.load(ds.label_paths()[0]).elements if e.type.value == "text"]
    assert lines[:3] == ["Three different entries are displayed below. You can add characters",
                         "by pointing, clicking and typing. The normal Motif editing characters",
                         "are supported, along with many Emacs bindings. For example,"], lines


@needs_x
@needs_tk
def test_a_tk_label_is_split_where_tk_wraps_it_unless_it_clips_its_lines():
    """The driver measures a wrapped label's lines in its own font, two spaces after a full stop
    included; a label narrower than its wrap length (a small window) clips them: unknown. Tk runs
    in a child process, as the driver does (a Tk root in the test process outlives its Xvfb)."""
    import json
    import os
    import subprocess
    import sys

    from caap.bench.display import VirtualDisplay

    script = """if True:
        import json, re, tkinter, tkinter.font
        from caap.bench.desktop.tk_driver import Driver
        root = tkinter.Tk()
        driver = Driver.__new__(Driver)
        driver.root, driver.tk = root, root.tk
        text = "One two three four.  Five six seven eight nine ten eleven twelve."
        label = tkinter.Label(root, text=text, wraplength=200, justify="left", font="TkDefaultFont")
        label.place(x=0, y=0)
        root.update()
        lines = driver.wrapped(str(label), text)
        font = tkinter.font.nametofont("TkDefaultFont")
        full = []
        for a, b in zip(lines or [], (lines or [])[1:]):
            gap = re.search(re.escape(a.split()[-1]) + r"(\\s+)" + re.escape(b.split()[0]), text).group(1)
            full.append(font.measure(a + gap + b.split()[0]))
        widths = [font.measure(line) for line in lines or []]
        label.place(x=0, y=0, width=120)
        root.update()
        print(json.dumps({"text": text, "lines": lines, "widths": widths, "full": full,
                          "clipped": driver.wrapped(str(label), text)}))
        root.destroy()
    """
    screen = VirtualDisplay(800, 600).start()
    try:
        done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "DISPLAY": screen.name},
                              capture_output=True, text=True, timeout=60, check=True)
    finally:
        screen.close()
    got = json.loads(done.stdout)
    lines = got["lines"]
    assert lines is not None and " ".join(" ".join(lines).split()) == " ".join(got["text"].split())
    assert len(lines) >= 2 and all(w <= 200 for w in got["widths"])
    assert got["full"] and all(w > 200 for w in got["full"])  # each line full: the next word would not fit
    assert got["clipped"] is None


def test_reserved_apps_never_go_into_a_training_set(tmp_path):
    assert {a.name for a in EVALUATION_APPS} == RESERVED_APPS
    assert not RESERVED_APPS & {a.name for a in TRAINING_APPS}
    assert {a.name for a in gen.select_apps(None, "eval")} == RESERVED_APPS
    with pytest.raises(gen.DesktopDataError, match="reserved for evaluation"):
        gen.select_apps(["zenity-entry", "gtk3-widget-factory"], "train")
    with pytest.raises(gen.DesktopDataError, match="only the reserved apps"):
        gen.select_apps(["qt5-gallery", "zenity-entry"], "eval")
    with pytest.raises(gen.DesktopDataError, match="reserved"):
        gen.generate(tmp_path / "x", [APPS["qt5-widgets-calculator"]], split="train")
    result = CliRunner().invoke(cli_app, ["dataset", "desktop", "--out", str(tmp_path / "cli"), "--apps",
                                          "gtk3-demo"])
    assert result.exit_code == 2
    assert "reserved for evaluation" in result.output and not (tmp_path / "cli").exists()


def test_an_evaluation_dataset_takes_no_training_screens(tmp_path):
    Dataset.create(tmp_path / "eval", "desktop-eval", {"split": "eval"})
    fake = App("fake", "tk", ("widget",), "tk8.6-doc")
    if fake.missing():
        pytest.skip(fake.missing())
    with pytest.raises(gen.DesktopDataError, match="'eval' dataset"):
        gen.generate(tmp_path / "eval", [fake], split="train")


def test_a_missing_binary_is_skipped_with_its_package(tmp_path):
    ghost = App("ghost", "gtk3", ("caap-no-such-program",), "caap-ghost-examples")
    stats = gen.generate(tmp_path / "ds", [ghost])
    assert stats.skipped == ["ghost: caap-no-such-program is missing (Debian package caap-ghost-examples)"]
    assert stats.screens == 0 and not (tmp_path / "ds").exists()
    with pytest.raises(gen.DesktopDataError, match="unknown app"):
        gen.select_apps(["no-such-app"], "train")


@needs_atspi
@pytest.mark.display
@needs_x
@needs_capture
def test_an_app_without_a_window_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "WINDOW_TIMEOUT_S", 1.5)
    mute = App("mute", "gtk3", (shutil.which("sleep") or "/bin/sleep", "30"), "coreutils")
    stats = gen.generate(tmp_path / "ds", [mute])
    assert len(stats.skipped) == 1 and stats.skipped[0].startswith("mute: no window within 2 s")
    assert stats.screens == 0


# --- labelling rules, without a display ------------------------------------------------------------
def _win(id_: int, box, override: bool = False) -> XWindow:
    return XWindow(id_, box, "", None, override)


def test_windows_above_cut_or_hide_what_lies_below():
    main, popup = _win(1, (0, 0, 400, 300)), _win(2, (100, 50, 200, 150), override=True)
    hidden = Candidate("button", (120, 60, 180, 90), window=1)
    half = Candidate("button", (150, 160, 250, 190), window=1)
    cut = Candidate("tabled_text", (150, 60, 260, 80), window=1)
    on_top = Candidate("tabled_text", (110, 60, 190, 80))  # a popup's item: the topmost window under it
    assert visible_box(hidden, [main, popup]) is None
    assert visible_box(half, [main, popup]) == (150, 160, 250, 190)
    assert visible_box(cut, [main, popup]) is None  # less than MIN_VISIBLE of it is left
    assert visible_box(on_top, [main, popup]) == (110, 60, 190, 80)
    assert visible_box(Candidate("text", (350, 250, 450, 280), window=1), [main]) == (350, 250, 400, 280)


def test_wrapped_text_is_shared_out_over_its_lines():
    from caap.bench.desktop.labels import text_width

    words = "If you click on any of the four buttons below the background will change"
    first, second = "If you click on any of the four", "buttons below the background will change"
    bands = [(0, 0, round(text_width(first)), 15), (0, 18, round(text_width(second)), 33)]
    assert wrap_texts(words, bands) == [first, second]
    assert wrap_texts("one\ntwo", bands) == ["one", "two"]
    assert wrap_texts(words, [(0, 0, 300, 15), (0, 18, 8, 33)]) == [None, None]  # no wrap fits: unknown


def test_a_toolkits_wrap_that_does_not_measure_up_to_what_it_drew_is_found_by_measuring():
    """Tk keeps a word on a line that its font's measure pushes to the next one (``look,``): the
    driver's lines then disagree with the ink by a word, and the lines are found from the bands."""
    from caap.report.draw import label_font

    font = label_font(13)
    first, second = "changes the way that the menu buttons themselves look,", "and that the central menu button is styled"
    image = Image.new("RGB", (420, 48), "white")
    draw = ImageDraw.Draw(image)
    draw.text((2, 2), first, fill="black", font=font)
    draw.text((2, 24), second, fill="black", font=font)
    shifted = ["changes the way that the menu buttons themselves", "look, and that the central menu button is styled"]
    window = [_win(1, (0, 0, 420, 48))]
    c = Candidate("text", (0, 0, 420, 48), text=f"{first} {second}", wrapped=shifted)
    assert [e.text for e, _ in finish([c], window, (0, 0, 420, 48), image)] == [first, second]
    right = Candidate("text", (0, 0, 420, 48), text=f"{first} {second}", wrapped=[first, second])
    assert [e.text for e, _ in finish([right], window, (0, 0, 420, 48), image)] == [first, second]


def test_roles_map_to_the_taxonomy_and_gtk4_boxes_move_to_the_screen():
    def node(i, parent, depth, role, name="", box=None, states=("showing", "visible"), **extra):
        return {"id": i, "parent": parent, "depth": depth, "role": role, "name": name, "states": list(states),
                "box": box, **extra}

    tree = {"toolkits": ["GTK 4.8.3"], "nodes": [
        node(0, None, 0, "application", "demo"),
        node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        node(2, 1, 2, "push button", "Run", [22, 10, 25, 24]),
        node(3, 2, 3, "label", "Run", [22, 10, 25, 24], text="Run"),
        node(4, 1, 2, "page tab", "Tab", [244, 49, 30, 30], states=("visible", "selected")),
        node(5, 4, 3, "label", "Info", [244, 49, 30, 30], text="Info"),
        node(6, 1, 2, "check box", "Bold", [20, 100, 80, 20], states=("visible", "checked", "sensitive")),
        node(7, 1, 2, "separator", "", [0, 200, 790, 1]),
    ]}
    found = atspi_candidates(tree, [_win(9, (100, 50, 900, 650))])
    by_type = {c.type: c for c in found}
    assert set(by_type) == {"button", "tab", "checkbox"}
    # GTK 4: window-relative boxes, inside a 5 px margin of an 800x600 window at (100, 50).
    assert by_type["button"].box == (127, 65, 152, 89) and by_type["button"].text == "Run"
    assert by_type["button"].grow  # GTK 4 reports content boxes: the frame is found in the pixels
    assert by_type["tab"].text == "Info" and by_type["tab"].highlighted is True
    assert by_type["checkbox"].checked is True and by_type["checkbox"].window == 9
    # A text inside a selected row is selected with it (gtk4-demo's list box: a message's row holds
    # its author, its text and its buttons), as a web page's text inside its active row is; a text in
    # a row not selected is not.
    rows = {"toolkits": ["GTK 4.8.3"], "nodes": [
        node(0, None, 0, "application", "demo"),
        node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        node(2, 1, 2, "list item", "", [0, 300, 400, 40], states=("visible", "selected", "sensitive")),
        node(3, 2, 3, "label", "GTK and friends", [10, 305, 200, 16], text="GTK and friends"),
        node(4, 2, 3, "label", "recently", [10, 322, 200, 16], text="recently"),
        node(5, 1, 2, "list item", "", [0, 340, 400, 40], states=("visible", "sensitive")),
        node(6, 5, 3, "label", "Resent by", [10, 345, 200, 16], text="Resent by"),
        node(7, 5, 3, "label", "GNOME", [10, 362, 200, 16], text="GNOME"),
    ]}
    texts = {c.text: (c.type, c.highlighted) for c in atspi_candidates(rows, [_win(9, (100, 50, 900, 650))])}
    assert texts == {"GTK and friends": ("text", True), "recently": ("text", True), "Resent by": ("text", False),
                     "GNOME": ("text", False)}
    # States beyond the paper's: insensitive is greyed, "indeterminate" is neither ticked nor clear,
    # a range's value is its place between minimum and maximum.
    assert by_type["checkbox"].enabled is True and by_type["checkbox"].indeterminate is False
    assert by_type["button"].enabled is False  # its node is not "sensitive"
    more = {"toolkits": ["GTK 3.24"], "nodes": [
        node(0, None, 0, "application", "demo"),
        node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        node(2, 1, 2, "check box", "Some", [20, 20, 80, 20], states=("visible", "indeterminate", "sensitive")),
        node(3, 1, 2, "slider", "", [20, 60, 200, 20], states=("visible", "sensitive"), value=[30.0, 10.0, 60.0]),
        node(4, 1, 2, "progress bar", "", [20, 100, 200, 8], states=("visible",), value=[1.0, 0.0, 1.0]),
    ]}
    got = {c.type: c for c in atspi_candidates(more, [_win(9, (0, 0, 790, 590))])}
    assert got["checkbox"].indeterminate is True and got["checkbox"].checked is None
    # A toggle button is a button held down while on; a push button is never down.
    toggles = {"toolkits": ["GTK 3.24"], "nodes": [
        node(0, None, 0, "application", "demo"),
        node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        node(2, 1, 2, "toggle button", "Week", [20, 20, 80, 28], states=("visible", "sensitive", "checked")),
        node(3, 1, 2, "toggle button", "Month", [100, 20, 80, 28], states=("visible", "sensitive")),
        node(4, 1, 2, "push button", "Close", [200, 20, 80, 28], states=("visible", "sensitive")),
        # GTK 4 reports a toggle button as a push button, pressed while on (gtk4-demo's infobar).
        node(5, 1, 2, "push button", "Warning", [300, 20, 80, 28], states=("visible", "sensitive", "pressed")),
    ]}
    buttons = {c.text: c for c in atspi_candidates(toggles, [_win(9, (0, 0, 790, 590))]) if c.type == "button"}
    assert {t: c.checked for t, c in buttons.items()} == {"Week": True, "Month": False, "Close": False,
                                                          "Warning": True}
    assert got["slider"].value == 0.4 and got["slider"].enabled is True
    assert got["progress_bar"].value == 1.0
    # A GTK 4 tree view shows rows AT-SPI never hears of: its cells are found in the pixels.
    tree["nodes"] += [node(8, 1, 2, "filler", "GtkTreeView", [0, 300, 400, 200]),
                      node(9, 8, 3, "push button", "GtkButton", [0, 300, 100, 24])]
    view = [c for c in atspi_candidates(tree, [_win(9, (100, 50, 900, 650))]) if c.cells]
    assert len(view) == 1 and view[0].box == (105, 379, 505, 555) and view[0].text is None



def test_a_gtk4_labels_mnemonic_mark_is_not_its_text():
    """GTK 4 hands a check button's inner label over with its mnemonic underscore (``_Spinner``);
    the underline is drawn only while Alt is held. A name with underscores of its own keeps them."""
    def node(i, parent, depth, role, name="", box=None, **extra):
        return {"id": i, "parent": parent, "depth": depth, "role": role, "name": name,
                "states": ["showing", "visible", "sensitive"], "box": box, **extra}

    tree = {"toolkits": ["GTK 4.8.3"], "nodes": [
        node(0, None, 0, "application", "demo"), node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        node(2, 1, 2, "check box", "", [20, 100, 80, 20]), node(3, 2, 3, "label", "", [40, 100, 60, 20], text="_Spinner"),
        node(4, 1, 2, "check box", "", [20, 140, 80, 20]),
        node(5, 4, 3, "label", "", [40, 140, 60, 20], text="Use AA_Pixmaps"),
        node(6, 1, 2, "check box", "_Enable grouping", [20, 180, 80, 20]),  # the mark in its own name
        node(7, 1, 2, "label", "_draft.txt", [20, 220, 80, 20], text="_draft.txt"),  # a text keeps it
    ]}
    found = atspi_candidates(tree, [_win(9, (100, 50, 900, 650))])
    assert sorted(c.text for c in found if c.type == "checkbox") == ["Enable grouping", "Spinner", "Use AA_Pixmaps"]
    assert [c.text for c in found if c.type == "text"] == ["_draft.txt"]


def test_a_gtk4_picture_button_is_boxed_on_its_frame_like_gtk3s():
    """GTK 4 reports a button's content box. A button that shows a picture (gtk4-demo's flow box of
    colour swatches) is grown to the frame drawn round it, as a text button is and as GTK 3 reports
    it; a flat one keeps its picture."""
    def node(i, parent, depth, role, name="", box=None):
        return {"id": i, "parent": parent, "depth": depth, "role": role, "name": name,
                "states": ["showing", "visible", "sensitive"], "box": box}

    tree = {"toolkits": ["GTK 4.8.3"], "nodes": [
        node(0, None, 0, "application", "demo"), node(1, 0, 1, "frame", "Flow Box", [0, 0, 170, 80]),
        node(2, 1, 2, "table", "GtkFlowBox", [0, 0, 170, 80]),
        node(3, 2, 3, "table cell", "GtkFlowBoxChild", [3, 3, 50, 34]),
        node(4, 3, 4, "push button", "GtkButton", [13, 8, 30, 24]),
        node(5, 4, 5, "filler", "GtkDrawingArea", [13, 8, 30, 24]),
    ]}
    window = [_win(9, (0, 0, 170, 80))]
    (icon,) = atspi_candidates(tree, window)
    assert icon.type == "icon" and icon.grow
    # Cut from a validation screen of gtk4-demo's flow box (a training app), 50 × 34 px frames.
    image = Image.open(Path(__file__).parent / "fixtures" / "desktop" / "gtk4-flowbox-swatches.png").convert("RGB")
    assert [e.bbox for e, _ in finish([icon], window, (0, 0, 170, 80), image)] == [(3, 3, 53, 37)]
    flat = Image.new("RGB", (170, 80), (250, 250, 250))
    ImageDraw.Draw(flat).rectangle((16, 11, 39, 28), fill=(40, 90, 200))
    assert [e.bbox for e, _ in finish([icon], window, (0, 0, 170, 80), flat)] == [(15, 10, 41, 30)]
    # A flat title-bar button (maximise) with the close button's cross beside it: the cross is a
    # line on one side only, no frame; the button keeps its picture.
    title = Image.open(Path(__file__).parent / "fixtures" / "desktop" / "gtk4-title-buttons.png").convert("RGB")
    maximise = Candidate("icon", (40, 19, 50, 35), grow=True, source="push button")
    assert [e.bbox for e, _ in finish([maximise], [_win(9, (0, 0, 100, 50))], (0, 0, 100, 50), title)] == \
        [(40, 22, 50, 32)]


def test_a_gtk4_combo_box_named_by_its_label_shows_an_unknown_choice():
    """GTK 4's combo box (gtk4-demo's size groups) takes the text of the label beside it for its
    name and draws its choice (``Red``) in a cell view whose text it keeps to itself: the label's
    text is not what it shows, so its text is unknown. A combo box whose choice is known, or whose
    name is no label's, keeps it."""
    def node(i, parent, depth, role, name="", box=None, **extra):
        return {"id": i, "parent": parent, "depth": depth, "role": role, "name": name,
                "states": ["showing", "visible", "sensitive"], "box": box, **extra}

    tree = {"toolkits": ["GTK 4.8.3"], "nodes": [
        node(0, None, 0, "application", "demo"), node(1, 0, 1, "frame", "Size Groups", [0, 0, 400, 300]),
        node(2, 1, 2, "label", "Foreground", [10, 35, 70, 30], text="Foreground"),
        node(3, 1, 2, "combo box", "Foreground", [140, 35, 128, 34]),
        node(4, 3, 3, "filler", "GtkCellView", [150, 40, 92, 24]),
        node(5, 1, 2, "label", "Dashing", [10, 80, 70, 30], text="Dashing"),
        node(6, 1, 2, "combo box", "Dashing", [140, 80, 128, 34], shown="Solid"),
        node(7, 1, 2, "combo box", "Square", [140, 125, 128, 34]),
    ]}
    found = atspi_candidates(tree, [_win(9, (0, 0, 400, 300))])
    assert [c.text for c in found if c.type == "dropdown"] == [None, "Solid", "Square"]


def test_a_qt_date_time_cell_is_labelled_unknown():
    """Qt's item views tell a date-time's value in ISO 8601 and draw it in the locale's format
    (``25 Dec 2006 11:39:00``): no reading can match, so the cell's text is unknown. A plain date,
    which may be a string the cell holds as drawn, stays."""
    def node(i, parent, depth, role, name="", box=None, **extra):
        return {"id": i, "parent": parent, "depth": depth, "role": role, "name": name,
                "states": ["showing", "visible", "sensitive"], "box": box, **extra}

    tree = {"toolkits": ["Qt 5.15.8"], "nodes": [
        node(0, None, 0, "application", "demo"), node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        node(2, 1, 2, "table", "", [0, 0, 600, 200]),
        node(3, 2, 3, "table cell", "2006-12-25T11:39:00.000", [0, 0, 200, 20]),
        node(4, 2, 3, "table cell", "2006-12-25", [0, 20, 200, 20]),
    ]}
    found = atspi_candidates(tree, [_win(9, (0, 0, 790, 590))])
    assert [c.text for c in found if c.type == "tabled_text"] == [None, "2006-12-25"]


def test_gtk3_radios_drawn_as_buttons_and_expanders_are_labelled_as_drawn():
    def node(i, parent, depth, role, name="", box=None, states=("showing", "visible", "sensitive")):
        return {"id": i, "parent": parent, "depth": depth, "role": role, "name": name, "states": list(states),
                "box": box}

    tree = {"toolkits": ["GTK 3.24"], "nodes": [
        node(0, None, 0, "application", "demo"),
        node(1, 0, 1, "frame", "Demo", [0, 0, 790, 590]),
        # A stack switcher's pages: radio buttons without their dot, 34 px high.
        node(2, 1, 2, "radio button", "Page 1", [12, 54, 120, 34], ("visible", "sensitive", "checked")),
        node(3, 1, 2, "radio button", "Page 2", [132, 54, 120, 34]),
        # A radio button with its dot, 22 px high.
        node(4, 1, 2, "radio button", "Small", [12, 100, 80, 22], ("visible", "sensitive", "checked")),
        # An open expander: its box holds the button shown below its title.
        node(5, 1, 2, "toggle button", "Guides", [12, 140, 420, 50],
             ("visible", "sensitive", "expandable", "expanded", "checked")),
        node(6, 5, 3, "push button", "Day", [12, 158, 60, 32]),
        node(7, 1, 2, "toggle button", "More", [12, 200, 420, 16], ("visible", "sensitive", "expandable")),
    ]}
    got = {c.text: c for c in atspi_candidates(tree, [_win(9, (0, 0, 790, 590))])}
    assert (got["Page 1"].type, got["Page 1"].checked) == ("button", True)
    assert (got["Page 2"].type, got["Page 2"].checked) == ("button", False)
    assert (got["Small"].type, got["Small"].checked) == ("radio", True)
    # Not a held-down button: a tree-like row that shows or hides what is below, boxed on its
    # title, so what it shows is labelled too.
    guides = got["Guides"]
    assert (guides.type, guides.expanded, guides.checked) == ("tree_item", True, None)
    assert guides.box[1] == 140 and guides.box[3] < 158 and guides.box[2] < 200
    assert got["Day"].type == "button"
    assert (got["More"].type, got["More"].expanded) == ("tree_item", False) and got["More"].box[1::2] == (200, 216)


def test_a_text_that_cannot_show_whole_in_its_box_is_not_a_label():
    from caap.bench.desktop.labels import QT_BUTTON_HEIGHT, drawn_kind, drawn_whole, text_width

    width = int(text_width("Radically new concept"))
    assert drawn_whole("Radically new concept", (0, 0, width, 14))
    assert not drawn_whole("Radically new concept", (0, 0, width // 2, 14))  # drawn "Radically ne…"
    assert drawn_whole("two\nlines of a wrapped text", (0, 0, 10, 30))  # not judged
    # Qt's checkable buttons, reported as check boxes, are told by their height.
    from PIL import Image

    blank = Image.new("RGB", (120, 40), "white")
    assert drawn_kind("checkbox", blank, (0, 0, 80, QT_BUTTON_HEIGHT), qt_checkable=True) == "button"
    assert drawn_kind("radio", blank, (0, 0, 80, QT_BUTTON_HEIGHT + 2), qt_checkable=True) == "button"
    assert drawn_kind("checkbox", blank, (0, 0, 80, QT_BUTTON_HEIGHT - 2), qt_checkable=True) == "checkbox"
    assert drawn_kind("checkbox", blank, (0, 0, 80, QT_BUTTON_HEIGHT + 2)) == "checkbox"  # not Qt's


def test_the_showcases_are_training_apps_that_say_what_they_need(tmp_path):
    from dataclasses import replace

    from caap.data.desktop.generate import _fill

    showcase = [a for a in TRAINING_APPS if a.name.startswith(("caap-gtk3-", "caap-qt5-"))]
    assert {a.name for a in showcase} == {"caap-gtk3-tree", "caap-gtk3-controls", "caap-gtk3-forms",
                                          "caap-qt5-tools", "caap-qt5-forms"}
    assert all(not a.reserved and Path(a.argv[1]).is_file() for a in showcase)
    assert {a.toolkit for a in showcase if a.name.startswith("caap-qt5-")} == {"qt5"}
    # Each episode draws the window from a seed of its own.
    argv = [_fill(APPS["caap-gtk3-tree"].argv, random.Random(k), tmp_path) for k in (1, 2)]
    assert argv[0][-2:][0] == "--seed" and argv[0][-1].isdigit() and argv[0][-1] != argv[1][-1]
    gone = replace(APPS["caap-gtk3-tree"], requires=tmp_path / "Gtk-3.0.typelib")
    assert gone.missing() == f"caap-gtk3-tree: {tmp_path / 'Gtk-3.0.typelib'} is missing (Debian package gir1.2-gtk-3.0)"
    gone = replace(APPS["caap-qt5-tools"], requires=tmp_path / "QtWidgets.abi3.so")
    assert gone.missing() == f"caap-qt5-tools: {tmp_path / 'QtWidgets.abi3.so'} is missing (Debian package python3-pyqt5)"


def test_tk_widgets_say_whether_they_are_greyed_and_where_their_range_stands():
    win = _win(5, (0, 0, 400, 300))
    dump = {"widgets": [
        {"class": "TButton", "box": [10, 10, 80, 24], "toplevel": [0, 0, 400, 300], "text": "Apply", "disabled": True},
        {"class": "TCheckbutton", "box": [10, 40, 80, 20], "toplevel": [0, 0, 400, 300], "text": "Wrap", "checked": True,
         "alternate": False, "disabled": False},
        {"class": "Scale", "box": [10, 70, 200, 40], "toplevel": [0, 0, 400, 300], "range": [75.0, 0.0, 250.0]},
        {"class": "TProgressbar", "box": [10, 120, 200, 12], "toplevel": [0, 0, 400, 300]},  # busy: no value said
        # A check button drawn without its indicator is a toggle button: down while on.
        {"class": "Checkbutton", "box": [10, 140, 60, 24], "toplevel": [0, 0, 400, 300], "text": "Bold",
         "checked": True, "indicator": False},
    ]}
    got = {c.type: c for c in tk_candidates(dump, [win]) if c.text != "Bold"}
    assert got["button"].enabled is False and got["checkbox"].enabled is True
    assert got["button"].checked is False  # a push button never stays down
    bold = [c for c in tk_candidates(dump, [win]) if c.text == "Bold"]
    assert [(c.type, c.checked) for c in bold] == [("button", True)]
    assert got["slider"].value == 0.3 and got["progress_bar"].value is None


def test_a_gtk3_tree_labels_each_row_once_as_a_tree_item():
    def cell(i, parent, name, y, states=()):
        return {"id": i, "parent": parent, "depth": 4, "role": "table cell", "name": name,
                "states": ["showing", "visible", *states], "box": [46, y, 178 if not name else 186, 21],
                **({"text": name} if name else {})}

    tree = {"toolkits": ["gtk 3.24.38"], "nodes": [
        {"id": 0, "parent": None, "depth": 0, "role": "application", "name": "demo", "states": [], "box": None},
        {"id": 1, "parent": 0, "depth": 1, "role": "frame", "name": "Demo", "states": ["showing"], "box": [0, 0, 400, 300]},
        {"id": 2, "parent": 1, "depth": 2, "role": "tree table", "name": "", "states": ["showing"], "box": [6, 52, 220, 240]},
        cell(3, 2, "", 53), cell(4, 3, "Assistant", 53),  # GTK 3 nests each row's cells in a row cell
        cell(5, 2, "", 76, ("expandable",)), cell(6, 5, "Benchmark", 76, ("expandable", "selected")),
        {**cell(7, 5, "  ", 76), "box": [-2147483648, -2147483648, 34, 21]},  # a cell drawn nowhere
    ]}
    found = atspi_candidates(tree, [_win(1, (0, 0, 400, 300))])
    assert [(c.type, c.text, c.expanded, c.highlighted) for c in found] == [
        ("tree_item", "Assistant", None, False), ("tree_item", "Benchmark", False, True)]


def test_a_gtk3_tree_row_deeper_than_every_expandable_one_is_a_tree_item():
    """GTK 3 reports each level of a tree column a step further right, all ending at the column's
    right edge: a leaf two levels down starts where no expandable row does, and is a tree row all
    the same, not a cell of another column (which showed as a box on its name's last letters)."""
    def cell(i, name, x, y, w, states=()):
        return {"id": i, "parent": 2, "depth": 3, "role": "table cell", "name": name,
                "states": ["showing", "visible", *states], "box": [x, y, w, 21], "text": name}

    tree = {"toolkits": ["gtk 3.24.38"], "nodes": [
        {"id": 0, "parent": None, "depth": 0, "role": "application", "name": "demo", "states": [], "box": None},
        {"id": 1, "parent": 0, "depth": 1, "role": "frame", "name": "Demo", "states": ["showing"], "box": [0, 0, 400, 300]},
        {"id": 2, "parent": 1, "depth": 2, "role": "tree table", "name": "", "states": ["showing"], "box": [0, 6, 223, 290]},
        cell(3, "Brushes", 40, 76, 94, ("expanded", "expandable")), cell(4, "Linus", 162, 76, 59),
        cell(5, "Layers", 58, 99, 76, ("expanded", "expandable")), cell(6, "Ken", 162, 99, 59),
        cell(7, "Amara", 76, 122, 58), cell(8, "Lars", 162, 122, 59),  # two levels down, a leaf
    ]}
    found = atspi_candidates(tree, [_win(1, (0, 0, 400, 300))])
    kinds = {c.text: c.type for c in found}
    assert kinds == {"Brushes": "tree_item", "Layers": "tree_item", "Amara": "tree_item",
                     "Linus": "tabled_text", "Ken": "tabled_text", "Lars": "tabled_text"}, kinds


def test_a_window_without_labels_keeps_its_screen_out():
    from caap.elements import Element

    main, popup = _win(1, (0, 0, 400, 300)), _win(2, (100, 50, 300, 250), override=True)
    in_main = (Element(type="button", bbox=(10, 10, 60, 30), text="OK"), Candidate("button", (10, 10, 60, 30)))
    in_popup = (Element(type="tabled_text", bbox=(120, 60, 280, 80), text="A"), Candidate("tabled_text", (0, 0, 1, 1)))
    assert gen._bare_window([in_main, in_popup], [main, popup], (0, 0, 400, 300)) is None
    assert gen._bare_window([in_main], [main, popup], (0, 0, 400, 300)) == popup  # a popup nobody reported
    assert gen._bare_window([in_popup], [main, popup], (0, 0, 400, 300)) == main
    # A window hidden under another is not asked to show anything.
    assert gen._bare_window([in_popup], [main, _win(3, (0, 0, 400, 300))], (0, 0, 400, 300)) is None


def _table_image():
    """A 3-cell table row on white: grey grid lines, words in the first two cells, the third empty."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (300, 60), "white")
    draw = ImageDraw.Draw(image)
    for x in (10, 110, 210, 290):
        draw.line([(x, 10), (x, 40)], fill=(160, 160, 160))
    for y in (10, 40):
        draw.line([(10, y), (290, y)], fill=(160, 160, 160))
    draw.text((20, 19), "Lunch", fill="black")  # left-aligned
    draw.text((170, 19), "-14", fill=(200, 0, 0))  # right-aligned, red
    return image


def test_table_cells_are_boxed_on_their_text_not_the_whole_cell():
    from caap.bench.desktop.labels import finish

    image = _table_image()
    cells = [Candidate("tabled_text", (10, 10, 111, 41), text="Lunch"),
             Candidate("tabled_text", (110, 10, 211, 41), text="-14"),
             Candidate("tabled_text", (210, 10, 291, 41), text="EUR"),  # reported, but nothing is drawn
             Candidate("tabled_text", (210, 10, 291, 41))]  # an empty cell: the cell itself
    boxes = {(e.text, e.bbox) for e, _ in finish(cells, [_win(1, (0, 0, 300, 60))], (0, 0, 300, 60), image)}
    by_text = {t: b for t, b in boxes}
    x1, y1, x2, y2 = by_text["Lunch"]
    assert 18 <= x1 <= 20 and x2 <= 52 and y1 >= 17 and y2 <= 32, by_text  # the word, within a pixel
    x1, _, x2, _ = by_text["-14"]
    assert 168 <= x1 <= 170 and x2 <= 190, by_text  # not the grid line at 110 nor the one at 210
    assert "EUR" not in by_text and by_text[None] == (210, 10, 291, 41)
    # A cell whose text is not known (cut by its view, so nulled) is boxed on what shows of it.
    cut = [Candidate("tabled_text", (10, 10, 111, 41))]
    (shown,) = [e.bbox for e, _ in finish(cut, [_win(1, (0, 0, 300, 60))], (0, 0, 300, 60), image)]
    assert shown == by_text["Lunch"]
    # A format character in a name (GTK's file chooser marks its times left-to-right) is not drawn.
    marked = [Candidate("tabled_text", (10, 10, 111, 41), text="\u200eLunch")]
    assert [e.text for e, _ in finish(marked, [_win(1, (0, 0, 300, 60))], (0, 0, 300, 60), image)] == ["Lunch"]
    # Characters drawn as plainer ones are labelled as those: GTK's ratio sign in a time is the
    # colon it looks like, a text view's line separator a line break.
    from caap.bench.desktop.labels import _element

    assert _element(Candidate("tabled_text", (0, 0, 60, 20), text="\u200e12\u223653"), (0, 0, 60, 20)).text == "12:53"
    area = _element(Candidate("text_area", (0, 0, 200, 60), text="123 Main Street\u2028Market Town"), (0, 0, 200, 60))
    assert area.text == "123 Main Street\nMarket Town"


def _tree_image():
    """Two tree rows 200 px wide: an expander triangle and a word; the second row selected (blue).
    The words in a desktop's 13 px UI font (about 50 px each), which the labeller measures texts in."""
    from PIL import Image, ImageDraw

    from caap.report.draw import label_font

    font = label_font(13)
    image = Image.new("RGB", (240, 80), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([(0, 30), (239, 49)], fill=(40, 90, 200))
    draw.polygon([(14, 64), (14, 74), (20, 69)], fill=(90, 90, 90))
    draw.text((28, 61), "Cursors", fill="black", font=font)  # GTK 3 reports this row's cell from x 46
    draw.polygon([(14, 14), (14, 24), (20, 19)], fill=(90, 90, 90))
    draw.text((28, 11), "Widgets", fill="black", font=font)
    draw.text((44, 31), "Buttons", fill="white", font=font)
    return image


def test_tree_rows_are_boxed_on_what_they_draw_not_the_whole_row():
    from caap.bench.desktop.labels import finish

    rows = [Candidate("tree_item", (0, 10, 200, 29), text="Widgets", expanded=True),
            Candidate("tree_item", (0, 30, 200, 49), text="Buttons", highlighted=True),
            Candidate("tree_item", (0, 50, 200, 59), text="Hidden"),  # scrolled away: nothing drawn
            Candidate("tree_item", (46, 60, 200, 79), text="Cursors")]
    out = {e.text: e.bbox for e, _ in finish(rows, [_win(1, (0, 0, 240, 80))], (0, 0, 240, 80), _tree_image())}
    x1, y1, x2, y2 = out["Widgets"]
    assert 12 <= x1 <= 14 and 76 <= x2 <= 84 and y1 >= 12 and y2 <= 28, out  # expander to the word's end
    x1, _, x2, _ = out["Buttons"]
    assert 42 <= x1 <= 44 and x2 <= 98, out  # the word, on the selection's colour
    assert "Hidden" not in out
    # Its cut letters and the expander before them, as the generated tree items are boxed.
    assert 12 <= out["Cursors"][0] <= 14 and out["Cursors"][2] >= 64, out


def test_a_rows_expander_is_boxed_with_it_and_far_ink_is_not():
    """caap-gtk3-tree: GTK 3 reports a row's cell from its first letter, and draws the expander
    10 px further left. The row is boxed from the arrow, as generated tree items are; ink 20 px off,
    or a word, is no expander."""
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import finish
    from caap.report.draw import label_font

    font = label_font(13)
    image = Image.new("RGB", (240, 60), "white")
    draw = ImageDraw.Draw(image)
    draw.polygon([(8, 4), (8, 14), (14, 9)], fill=(90, 90, 90))
    draw.text((24, 2), "Projects", fill="black", font=font)
    draw.polygon([(4, 24), (4, 34), (10, 29)], fill=(90, 90, 90))  # too far from its word
    draw.text((34, 22), "Brushes", fill="black", font=font)
    draw.text((2, 42), "Name:", fill="black", font=font)  # a word before it, close
    draw.text((50, 42), "Layers", fill="black", font=font)
    rows = [Candidate("tree_item", (24, 0, 200, 19), text="Projects"),
            Candidate("tree_item", (34, 20, 200, 39), text="Brushes"),
            Candidate("tree_item", (50, 40, 200, 59), text="Layers")]
    out = {e.text: e.bbox for e, _ in finish(rows, [_win(1, (0, 0, 240, 60))], (0, 0, 240, 60), image)}
    assert 6 <= out["Projects"][0] <= 8, out
    assert 33 <= out["Brushes"][0] <= 35 and 49 <= out["Layers"][0] <= 51, out


def test_a_toggle_cell_and_the_name_beside_it_are_one_check_box():
    """GTK 3 draws a tree's check box in a toggle cell of its own beside the row's name; Qt, the web
    and the generated pages box the two as one check box named by the label. The toggle cell takes
    the name beside it; a name farther off, or a check box of a form, stays apart."""
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import finish
    from caap.report.draw import label_font

    font = label_font(13)
    image = Image.new("RGB", (300, 60), "white")
    draw = ImageDraw.Draw(image)
    for y in (3, 33):
        draw.rectangle([(141, y), (155, y + 14)], outline=(120, 120, 120))
    draw.text((164, 3), "Mei", fill="black", font=font)
    draw.text((240, 33), "Linus", fill="black", font=font)  # another column, far off
    toggle = Candidate("checkbox", (138, 0, 158, 21), checked=True, source="table cell")
    far = Candidate("checkbox", (138, 30, 158, 51), checked=False, source="table cell")
    names = [Candidate("tabled_text", (160, 0, 230, 21), text="Mei"),
             Candidate("tabled_text", (236, 30, 300, 51), text="Linus")]
    out = [e for e, _ in finish([toggle, far, *names], [_win(1, (0, 0, 300, 60))], (0, 0, 300, 60), image)]
    checks = [(e.text, e.checked, e.bbox) for e in out if e.type.value == "checkbox"]
    assert [(t, c) for t, c, _ in checks] == [("Mei", True), (None, False)], checks
    x1, y1, x2, y2 = checks[0][2]
    assert 140 <= x1 <= 142 and 186 <= x2 <= 200 and y1 <= 4 and y2 >= 17, checks
    assert [e.text for e in out if e.type.value == "tabled_text"] == ["Linus"]
    form = Candidate("checkbox", (138, 0, 158, 21), checked=True, source="check box")
    out = [e for e, _ in finish([form, names[0]], [_win(1, (0, 0, 300, 60))], (0, 0, 300, 60), image)]
    assert sorted(e.type.value for e in out) == ["checkbox", "tabled_text"]


def test_a_check_button_stretched_by_its_layout_is_boxed_on_what_it_draws():
    """caap-gtk3-forms: GTK gives a radio button its grid column's width (787 px) and draws the
    circle and word at its left. The label spans what is drawn; Tk's boxes, and buttons, keep theirs."""
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import finish
    from caap.report.draw import label_font

    image = Image.new("RGB", (400, 30), "white")
    draw = ImageDraw.Draw(image)
    draw.ellipse([(6, 8), (20, 22)], outline=(90, 90, 90))
    draw.text((26, 7), "Day", fill="black", font=label_font(13))
    kinds = [("radio", "radio button"), ("radio", "Radiobutton"), ("button", "push button")]
    for kind, source in kinds:
        out = [e for e, _ in finish([Candidate(kind, (2, 4, 398, 26), text="Day", source=source)],
                                    [_win(1, (0, 0, 400, 30))], (0, 0, 400, 30), image)]
        x1, y1, x2, y2 = out[0].bbox
        if source == "radio button":
            assert 2 <= x1 <= 4 and 50 <= x2 <= 60 and (y1, y2) == (4, 26), out
        else:
            assert (x1, x2) == (2, 398), (source, out)


def test_check_boxes_drawn_round_are_labelled_radio_buttons():
    """GTK 4 reports its grouped check buttons (radio buttons) as check boxes: a check box whose
    control is round is labelled a radio button; a rounded square stays a check box."""
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import finish

    image = Image.new("RGB", (200, 60), (36, 36, 36))
    draw = ImageDraw.Draw(image)
    draw.ellipse([6, 6, 21, 21], fill=(53, 132, 228))
    draw.ellipse([11, 11, 16, 16], fill="white")
    draw.text((28, 8), "radiobutton", fill="white")
    draw.rounded_rectangle([6, 36, 21, 51], radius=4, fill=(53, 132, 228))
    draw.text((28, 38), "checkbutton", fill="white")
    boxes = [Candidate("checkbox", (4, 4, 100, 24), text="radiobutton", checked=True),
             Candidate("checkbox", (4, 34, 100, 54), text="checkbutton", checked=False)]
    out = [e for e, _ in finish(boxes, [_win(1, (0, 0, 200, 60))], (0, 0, 200, 60), image)]
    assert [(e.type.value, e.text, e.checked) for e in out] == [
        ("radio", "radiobutton", True), ("checkbox", "checkbutton", False)]


def test_an_empty_grey_cell_is_no_icon_but_a_swatch_is():
    """A table cell with no text is labelled an icon (a picture or a colour swatch to pick), except
    where it shows one colour only: Qt's spreadsheet fills its unused rows grey."""
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import finish

    image = Image.new("RGB", (200, 80), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 10, 90, 39], fill=(192, 192, 192))  # an empty cell, grey
    draw.rectangle([110, 10, 190, 39], fill=(192, 192, 192))  # a cell with a picture on its fill
    draw.ellipse([140, 15, 160, 34], fill=(200, 30, 30))
    cells = [Candidate("icon", (10, 10, 91, 40), source="table cell"),
             Candidate("icon", (110, 10, 191, 40), source="table cell"),
             Candidate("icon", (10, 50, 31, 71), source="push button")]
    draw.rectangle([10, 50, 30, 70], fill=(53, 132, 228))  # a swatch button: one colour, kept
    out = [e for e, _ in finish(cells, [_win(1, (0, 0, 200, 80))], (0, 0, 200, 80), image)]
    assert [e.bbox for e in out] == [(110, 10, 191, 40), (10, 50, 31, 71)]


def _scrollbars_image():
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (300, 200), (45, 45, 45))  # a dark GTK 4 list
    draw = ImageDraw.Draw(image)
    draw.rectangle([20, 10, 25, 189], fill=(60, 60, 60))      # a trough ...
    draw.rectangle([21, 40, 24, 90], fill=(160, 160, 160))    # ... with its slider
    draw.rectangle([60, 10, 67, 189], fill=(235, 235, 235))   # a trough the slider fills along ...
    draw.rectangle([62, 12, 65, 187], fill=(130, 130, 130))   # ... but not across
    draw.line([100, 100, 106, 100], fill=(27, 27, 27))        # a grid line crossing a hidden bar
    draw.text((140, 60), "n...", fill=(230, 230, 230))          # text running under another
    return image


def test_scrollbars_with_nothing_drawn_are_not_labelled():
    from caap.bench.desktop.labels import finish, scrollbar_drawn

    image = _scrollbars_image()
    boxes = {"slider": (20, 10, 26, 190), "full slider": (60, 10, 68, 190), "hidden": (100, 10, 106, 190),
             "hidden under text": (150, 10, 155, 190), "hidden across": (10, 194, 290, 199)}
    assert {k: scrollbar_drawn(image, b) for k, b in boxes.items()} == {
        "slider": True, "full slider": True, "hidden": False, "hidden under text": False, "hidden across": False}
    cands = [Candidate("scrollbar", b, source="scroll bar") for b in boxes.values()]
    out = [e for e, _ in finish(cands, [_win(1, (0, 0, 300, 200))], (0, 0, 300, 200), image)]
    assert [e.bbox for e in out] == [boxes["slider"], boxes["full slider"]]


def test_a_gtk4_sliders_box_grows_from_its_trough_to_its_knob():
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import grow_to_knob

    image = Image.new("RGB", (300, 120), (53, 53, 53))
    draw = ImageDraw.Draw(image)
    draw.rectangle([20, 48, 279, 51], fill=(30, 30, 30))          # the trough GTK 4 reports (with 3 px margin)
    draw.ellipse([100, 40, 119, 59], outline=(20, 20, 20))         # the knob, a ring on the trough
    draw.text((20, 20), "Volume of the music player", fill=(230, 230, 230))  # a label above, wider than a knob
    draw.rectangle([200, 80, 203, 110], fill=(30, 30, 30))       # an upright trough ...
    draw.ellipse([192, 90, 211, 109], outline=(20, 20, 20))       # ... and its knob
    assert grow_to_knob(image, (20, 45, 280, 55)) == (20, 40, 280, 60)
    assert grow_to_knob(image, (197, 80, 207, 111)) == (192, 80, 212, 111)


def test_refit_tool_gives_old_datasets_the_labellers_cell_boxes(tmp_path):
    import sys

    spec = importlib.util.spec_from_file_location("refit_cells", Path(__file__).parents[1] / "tools" / "refit_cells.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    from caap.data.format import Annotation, Source
    from caap.elements import Element

    ds = Dataset.create(tmp_path / "d", "old-desktop")
    image = _table_image()
    ann = Annotation(image="images/app/a-0.png", width=300, height=60, source=Source(kind="desktop", task="app"),
                     elements=[Element(type="tabled_text", bbox=(10, 10, 111, 41), text="Lunch"),
                               Element(type="tabled_text", bbox=(210, 10, 291, 41), text="EUR"),
                               Element(type="button", bbox=(110, 10, 211, 41), text="-14")])
    ds.add("app", "a-0", image, ann)
    tree = Annotation(image="images/app/t-0.png", width=240, height=80, source=Source(kind="desktop", task="app"),
                      elements=[Element(type="tree_item", bbox=(0, 10, 200, 29), text="Widgets", expanded=True)])
    ds.add("app", "t-0", _tree_image(), tree)

    argv, sys.argv = sys.argv, ["refit_cells.py", str(tmp_path / "d")]  # the tool runs as a script
    try:
        assert tool.main() == 0
        [(_, new), (_, new_tree)] = list(open_dataset(tmp_path / "d"))
        assert [(e.type.value, e.text) for e in new.elements] == [("tabled_text", "Lunch"), ("button", "-14")]
        assert new.elements[0].bbox[2] <= 52 and new.elements[1].bbox == (110, 10, 211, 41)
        assert new_tree.elements[0].bbox[0] >= 12 and new_tree.elements[0].bbox[2] <= 84
        assert (tmp_path / "d" / tool.BACKUP / "app" / "a-0.json").is_file()
        assert tool.main() == 0  # a second run derives the same labels from the toolkit's boxes
        assert [a for _, a in open_dataset(tmp_path / "d")] == [new, new_tree]
        sys.argv = ["refit_cells.py", str(tmp_path / "missing")]
        assert tool.main() == 2  # one error line, nothing written
        assert not (tmp_path / "missing").exists()
    finally:
        sys.argv = argv


def test_a_text_the_toolkit_elided_is_told_by_its_trailing_dots():
    from PIL import Image, ImageDraw

    from caap.bench.desktop.labels import ends_in_ellipsis
    from caap.report.draw import label_font

    def drawn(text: str, branch_lines: bool = False) -> tuple[Image.Image, tuple[int, int, int, int]]:
        image = Image.new("RGB", (260, 24), "white")
        draw = ImageDraw.Draw(image)
        if branch_lines:  # a Qt tree's dotted branch lines left of the row
            for y in range(2, 22, 2):
                draw.point((3, y), fill="grey")
            for x in range(5, 12, 2):
                draw.point((x, 12), fill="grey")
        draw.text((16, 4), text, fill="black", font=label_font(13))
        return image, (0, 2, 200, 22)

    for text in ("Using Co…", "Happy New Y...", "How to edit a form in Qt…"):
        assert ends_in_ellipsis(*drawn(text)), text
    assert ends_in_ellipsis(*drawn("Hist…", branch_lines=True))
    for text in ("Using Containers", "Version 2.5", "Done.", "Ratio 3:2", "a.b", "Wait!", "Hist", "etc. .", "Hist···", "Hist˙˙˙"):
        assert not ends_in_ellipsis(*drawn(text)), text
    assert not ends_in_ellipsis(Image.new("RGB", (40, 20), "white"), (0, 0, 40, 20))
