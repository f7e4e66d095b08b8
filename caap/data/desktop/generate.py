"""Screens of real desktop applications, labelled from what their toolkits say, as a caap dataset.

For each app and episode seed: start the app on a private Xvfb desktop (with the accessibility
bus) in a theme and window size drawn from the seed, capture its windows with mss, label them
(AT-SPI for GTK and Qt, Tk's own introspection for Tk), then make a few random but harmless
interactions with xdotool (switch tabs, open menus and drop-downs, tick boxes, type into fields,
expand tree rows, scroll), capturing and labelling after each. Near-duplicate screens of an app
are dropped; episodes already in the dataset are skipped, so an interrupted run resumes.

The apps reserved for evaluation (``apps.RESERVED_APPS``) go only into a dataset made with
``split="eval"``, and such a dataset holds nothing else.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image

from caap.bench.desktop import atspi, tk
from caap.bench.desktop.apps import APPS, EVALUATION_APPS, FIELDS, TOOLKIT_THEMES, TRAINING_APPS, App
from caap.bench.desktop.labels import Candidate, capture_box, finish
from caap.bench.desktop.session import DesktopError, DesktopSession, XWindow, atspi_missing
from caap.data.dedup import dhash, near_duplicate
from caap.data.format import Annotation, Dataset, DatasetError, Source
from caap.elements import Element
from caap.geometry import Box
from caap.taxonomy import ElementType

SPLITS = ("train", "eval")
WINDOW_TIMEOUT_S = 20.0
TREE_TIMEOUT_S = 8.0  # for the app to show up on the accessibility bus after its window
STEPS_PER_EPISODE = (3, 6)  # random interactions after the first screen
NEAR_DUPLICATE_BITS = 2
MAX_EPISODES_PER_SCREEN = 3  # give up on an app after this many episodes per screen wanted
# Clicking these would end the app or the dialog (or print): the explorer leaves them alone.
ENDING_WORDS = ("quit", "exit", "close", "cancel", "ok", "dismiss", "delete", "remove", "minimi", "maximi",
                "restore", "yes", "no", "done", "finish", "print", "log out", "kill", "abort", "stop", "discard")
WORDS = ("hello", "Rosa", "1991", "notes.txt", "Ada", "42", "kd x7", "Mauris neque", "lima", "2024-03-14")


class DesktopDataError(ValueError):
    """A request the generator refuses (an unknown app, a reserved app in a training set)."""


@dataclass
class DesktopStats:
    episodes: int = 0
    screens: int = 0
    elements: int = 0
    duplicates: int = 0
    unlabelled: int = 0
    seconds: float = 0.0
    per_app: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # one line per app that could not run


def select_apps(names: Sequence[str] | None, split: str) -> list[App]:
    """The apps to run: the named ones (checked against the split) or all of the split's."""
    if split not in SPLITS:
        raise DesktopDataError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if not names:
        return list(EVALUATION_APPS if split == "eval" else TRAINING_APPS)
    unknown = [n for n in names if n not in APPS]
    if unknown:
        raise DesktopDataError(f"unknown app(s): {', '.join(unknown)} (see caap.bench.desktop.apps; e.g. "
                               f"{', '.join(sorted(APPS)[:4])}, ...)")
    apps = [APPS[n] for n in dict.fromkeys(names)]
    reserved = [a.name for a in apps if a.reserved]
    if split != "eval" and reserved:
        raise DesktopDataError(
            f"{', '.join(reserved)} {'is' if len(reserved) == 1 else 'are'} reserved for evaluation (DESIGN §6) and "
            "never go into a training dataset; write them with --split eval into a dataset of their own")
    others = [a.name for a in apps if not a.reserved]
    if split == "eval" and others:
        raise DesktopDataError(f"an evaluation dataset holds only the reserved apps; {', '.join(others)} "
                               f"{'is' if len(others) == 1 else 'are'} training apps (use --split train)")
    return apps


def _check_dataset_split(dataset: Dataset, split: str) -> None:
    meta = dataset.meta()
    have = (meta.get("generator") or {}).get("split")
    if have is not None and have != split:
        raise DesktopDataError(f"{dataset.root} is a {have!r} dataset; it cannot take --split {split} screens "
                               "(reserved apps and training apps never share a dataset)")
    if have is None and any((dataset.root / "labels").glob("*")):
        raise DesktopDataError(f"{dataset.root} already holds screens that are not from `caap dataset desktop`; "
                               "write desktop screens into a dataset of their own")


# --- running an app ------------------------------------------------------------------------------
class Running(Protocol):
    pid: int

    def alive(self) -> bool: ...

    def candidates(self, windows: Sequence[XWindow]) -> list[Candidate]: ...

    def close(self) -> None: ...


class _AtspiApp:
    def __init__(self, session: DesktopSession, app: App, argv: list[str], env: dict[str, str]) -> None:
        self.session, self.app = session, app
        self.proc = session.launch(argv, env)
        self.pid = self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def candidates(self, windows: Sequence[XWindow]) -> list[Candidate]:
        return atspi.candidates(self.session.walk(self.pid), windows)

    def tree_ready(self, timeout: float) -> bool:
        """Whether the app's tree shows a window on the accessibility bus within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            nodes = self.session.walk(self.pid, max_nodes=50, max_seconds=5).get("nodes", [])
            if any(n.get("depth") == 1 and n.get("box") for n in nodes):
                return True
            time.sleep(0.3)
        return False

    def close(self) -> None:
        DesktopSession.stop(self.proc)


class _TkApp:
    def __init__(self, session: DesktopSession, app: App, theme: str) -> None:
        self.demo = tk.TkDemo(session)
        self.pid = self.demo.pid
        self.demo.tcl(f"ttk::style theme use {theme}")
        if app.argv[0] != "widget":
            self.demo.ask({"cmd": "demo", "name": app.argv[0]})

    def alive(self) -> bool:
        return self.demo.proc.poll() is None

    def candidates(self, windows: Sequence[XWindow]) -> list[Candidate]:
        return tk.candidates(self.demo.ask({"cmd": "dump"}), windows)

    def close(self) -> None:
        self.demo.close()


def _fill(argv: Sequence[str], rng: random.Random, home: Path) -> list[str]:
    out = []
    for arg in argv:
        arg = arg.replace("{home}", str(home))
        if "{seed}" in arg:  # an app that draws its contents from a seed of the episode's
            arg = arg.replace("{seed}", str(rng.randrange(1_000_000)))
        for key, values in FIELDS.items():
            if "{" + key + "}" in arg:
                arg = arg.replace("{" + key + "}", rng.choice(values))
        out.append(arg)
    return out


def _start(session: DesktopSession, app: App, rng: random.Random) -> tuple[Running, str]:
    theme = rng.choice(TOOLKIT_THEMES[app.toolkit])
    if app.toolkit == "tk":
        return _TkApp(session, app, theme), f"ttk theme {theme}"
    argv = _fill(app.argv, rng, session.home)
    env: dict[str, str] = {}
    if app.toolkit in ("gtk3", "gtk4") and theme:
        env["GTK_THEME"] = theme
    if app.toolkit == "qt5":
        argv += ["-style", theme]
    return _AtspiApp(session, app, argv, env), (f"theme {theme or 'Adwaita'}" if app.toolkit != "qt5"
                                                 else f"style {theme}")


def _main_window(windows: Sequence[XWindow]) -> XWindow | None:
    regular = [w for w in windows if not w.override_redirect]
    return max(regular, key=lambda w: (w.box[2] - w.box[0]) * (w.box[3] - w.box[1]), default=None)


def _place(session: DesktopSession, app: App, rng: random.Random) -> str:
    """Move the main window near the top-left corner and give it a size drawn from ``rng`` (never
    below the size the app chose, never beyond the screen)."""
    main = _main_window(session.windows())
    if main is None:
        return ""
    w, h = main.box[2] - main.box[0], main.box[3] - main.box[1]
    x, y = rng.randint(0, 24), rng.randint(0, 24)
    grow = rng.uniform(1.0, 1.45) if app.resizable else 1.0
    nw, nh = min(session.width - x, int(w * grow)), min(session.height - y, int(h * grow))
    session.xdotool("windowmove", str(main.id), str(x), str(y))
    if (nw, nh) != (w, h):
        session.xdotool("windowsize", str(main.id), str(nw), str(nh))
    # No window manager gives the window the keyboard focus: do it, so the focused widget is drawn
    # (and reported) as an app on a desktop shows it.
    session.xdotool("windowfocus", str(main.id))
    session.xdotool("mousemove", str(session.width - 1), str(session.height - 1))  # no tooltip
    time.sleep(0.2)
    return f"{nw}x{nh}"


# --- exploring -----------------------------------------------------------------------------------
@dataclass
class _Target:
    element: Element
    name: str
    box: tuple[int, int, int, int]  # screen pixels

    @property
    def centre(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.box
        return (x1 + x2) // 2, (y1 + y2) // 2

    def words(self) -> str:
        return f"{self.name} {self.element.text or ''}".lower()


def _ends_something(t: _Target) -> bool:
    words = t.words().replace("&", "").replace("_", "").split()
    return any(w.startswith(end) for w in words for end in ENDING_WORDS)


class _Explorer:
    """Random but harmless interactions with what the labels show, through xdotool."""

    def __init__(self, session: DesktopSession, rng: random.Random) -> None:
        self.session, self.rng = session, rng

    def click(self, t: _Target, button: str = "1", repeat: int = 1) -> None:
        x, y = t.centre
        self.session.xdotool("mousemove", str(x), str(y), "click", "--repeat", str(repeat), "--delay", "80", button)

    def double_click(self, t: _Target) -> None:
        self.click(t, repeat=2)

    def type_into(self, t: _Target, word: str) -> None:
        self.click(t)
        self.session.xdotool("key", "ctrl+a")
        self.session.xdotool("type", "--delay", "20", word)

    def slide(self, t: _Target) -> None:
        x1, y1, x2, y2 = t.box
        if x2 - x1 >= y2 - y1:
            x, y = self.rng.randint(x1 + 2, max(x1 + 2, x2 - 3)), (y1 + y2) // 2
        else:
            x, y = (x1 + x2) // 2, self.rng.randint(y1 + 2, max(y1 + 2, y2 - 3))
        self.session.xdotool("mousemove", str(x), str(y), "click", "1")

    def scroll(self, t: _Target) -> None:
        x, y = t.centre
        self.session.xdotool("mousemove", str(x), str(y), "click", "--repeat", str(self.rng.randint(2, 6)),
                             "--delay", "40", self.rng.choice("55554"))

    def key(self, name: str) -> None:
        self.session.xdotool("key", name)

    def step(self, targets: list[_Target], popup: bool) -> str | None:
        """One random interaction; what it was (None: nothing to do)."""
        rng = self.rng
        if popup and rng.random() < 0.35:
            self.key("Escape")
            return "escape"
        options: list[tuple[str, Callable[[], None]]] = []
        for t in targets:
            kind = t.element.type.value
            if kind in ("button", "icon", "tabled_text", "hyperlink") and _ends_something(t):
                continue
            if kind in ("tab", "tabled_text", "tree_item", "checkbox", "radio", "hyperlink", "dropdown", "button"):
                options.append((f"click {kind} {t.element.text or t.name}", partial(self.click, t)))
            if kind == "icon" and t.name and rng.random() < 0.3:
                options.append((f"click icon {t.name}", partial(self.click, t)))
            if kind == "tree_item":
                options.append((f"double-click {t.element.text}", partial(self.double_click, t)))
            if kind in ("input_field", "text_area"):
                word = rng.choice(WORDS)
                options.append((f"type {word!r}", partial(self.type_into, t, word)))
            if kind == "slider":
                options.append(("move slider", partial(self.slide, t)))
            if kind in ("scrollbar", "text_area") or (kind in ("tabled_text", "tree_item") and rng.random() < 0.1):
                options.append(("scroll", partial(self.scroll, t)))
        if not popup:
            options.append(("key Tab", partial(self.key, "Tab")))
        if not options:
            return None
        what, do = rng.choice(options)
        do()
        return what


# --- the generation loop -------------------------------------------------------------------------
def _done(dataset: Dataset, app: App) -> tuple[set[int], int, list[int]]:
    """Episode seeds already in the dataset for ``app``, its screens, and their hashes."""
    labels = sorted((dataset.root / "labels" / app.name).glob("*.json"))
    seeds = set()
    for p in labels:
        try:
            seeds.add(int(p.stem.rsplit("-", 2)[-2]))
        except (ValueError, IndexError):
            continue
    hashes = []
    for p in sorted((dataset.root / "images" / app.name).glob("*.png")):
        with Image.open(p) as im:
            hashes.append(dhash(im.convert("RGB")))
    return seeds, len(labels), hashes


def generate(
    out: str | Path,
    apps: Sequence[App],
    *,
    split: str = "train",
    screens_per_app: int = 8,
    size: tuple[int, int] = (1440, 900),
    seed: int = 0,
    generator_info: dict[str, Any] | None = None,
    on_screen: Callable[[str, int], None] | None = None,
    on_message: Callable[[str], None] | None = None,
) -> DesktopStats:
    """Up to ``screens_per_app`` new-or-existing screens for each app, written to ``out``."""
    if any(a.reserved for a in apps) and split != "eval":
        raise DesktopDataError("reserved apps go only into --split eval datasets")
    if split == "eval" and not all(a.reserved for a in apps):
        raise DesktopDataError("an evaluation dataset holds only the reserved apps")
    say = on_message or (lambda _msg: None)
    stats = DesktopStats()
    started = time.perf_counter()
    runnable = []
    for app in apps:
        why = app.missing()
        if why:
            stats.skipped.append(why)
            say(f"skipped {why}")
        else:
            runnable.append(app)
    if not runnable:
        stats.seconds = time.perf_counter() - started
        return stats
    needs_atspi = any(a.toolkit != "tk" for a in runnable)
    if needs_atspi:
        why = atspi_missing()
        if why:
            raise DesktopError(f"no AT-SPI: {why}")
    dataset = Dataset.create(out, f"desktop-{split}", {**(generator_info or {}), "split": split})
    _check_dataset_split(dataset, split)
    with DesktopSession(*size, atspi=needs_atspi) as session:
        for app in runnable:
            _run_app(session, dataset, app, split, screens_per_app, seed, stats, on_screen, say)
    stats.seconds = time.perf_counter() - started
    return stats


def _run_app(session: DesktopSession, dataset: Dataset, app: App, split: str, wanted: int, seed: int,
             stats: DesktopStats, on_screen: Callable[[str, int], None] | None, say: Callable[[str], None]) -> None:
    done_seeds, have, hashes = _done(dataset, app)
    stats.per_app[app.name] = have
    episode = 0
    while stats.per_app[app.name] < wanted and episode < MAX_EPISODES_PER_SCREEN * wanted:
        ep_seed = seed + episode
        episode += 1
        if ep_seed in done_seeds:
            continue
        try:
            kept = _episode(session, dataset, app, split, ep_seed, wanted - stats.per_app[app.name], hashes, stats)
        except _AppFailed as exc:
            stats.skipped.append(f"{app.name}: {exc}")
            say(f"skipped {app.name}: {exc}")
            return
        stats.episodes += 1
        stats.per_app[app.name] += kept
        if on_screen:
            on_screen(app.name, kept)


def _bare_window(labelled: Sequence[tuple[Element, Candidate]], windows: Sequence[XWindow], capture: Box,
                 least: float = 0.3) -> XWindow | None:
    """A window on the screen without a single labelled element in what shows of it (a tooltip, a
    popup whose rows the toolkit does not report): its text would be taught as background, so the
    screen is not kept. Windows less than ``least`` visible are not asked."""
    ox, oy = capture[0], capture[1]
    centres = [((e.bbox[0] + e.bbox[2]) // 2 + ox, (e.bbox[1] + e.bbox[3]) // 2 + oy) for e, _ in labelled]
    for i, w in enumerate(windows):
        x1, y1, x2, y2 = w.box
        if x2 - x1 < 20 or y2 - y1 < 20:
            continue
        shows = np.ones((y2 - y1, x2 - x1), dtype=bool)
        for a in windows[i + 1:]:
            shows[max(0, a.box[1] - y1):max(0, a.box[3] - y1), max(0, a.box[0] - x1):max(0, a.box[2] - x1)] = False
        if shows.mean() < least:
            continue
        if not any(x1 <= x < x2 and y1 <= y < y2 and shows[y - y1, x - x1] for x, y in centres):
            return w
    return None


# Focus rings GTK 3 hides until the focus is moved with the keyboard: a focused control whose
# pixels change when the focus goes to the next control and comes back.
FOCUS_MARGIN = 3  # px around the box, where rings are drawn
FOCUS_CHANGED_PIXELS = 6  # pixels whose channels move by more than FOCUS_CHANGED_LEVEL
FOCUS_CHANGED_LEVEL = 24
TEXT_FIELDS = (ElementType.INPUT_FIELD, ElementType.TEXT_AREA)
# Carets blink (GTK about 1.2 s a cycle, Qt 1 s, Tk 0.9 s): a capture catches a focused field's
# caret off about half the time. Frames over more than a cycle tell a blinking caret from a steady
# sign (a ring, a selection, GTK's caret once it stops blinking) and which phase the capture caught.
BLINK_FRAMES = 7
BLINK_INTERVAL_S = 0.2
BLINK_MIN_PIXELS = 3
CARET_TYPES = (*TEXT_FIELDS, ElementType.DROPDOWN)  # what may show a caret (an editable combo box)


def _caret_off(session: DesktopSession, box: Box, before: np.ndarray,
               labelled: list[tuple[Element, Candidate]]) -> tuple[dict[int, np.ndarray], list[int]]:
    """The focused fields whose pixels blink and whose capture (``before``, int16) caught the caret
    off, each with the caret's pixels (a mask over its box), and the focused fields in which
    nothing blinks. The capture shows the caret where those pixels stand further from the field's
    background (its median colour) than in the frame that differs most from it. Only fields are
    watched: 1.4 s of frames per screen."""
    asked = [i for i, (e, _) in enumerate(labelled) if e.focused and e.type in CARET_TYPES]
    if not asked:
        return {}, []
    frames = []
    for _ in range(BLINK_FRAMES):
        time.sleep(BLINK_INTERVAL_S)
        frame = np.asarray(session.capture(box), dtype=np.int16)
        if frame.shape != before.shape:
            return {}, []
        frames.append(frame)
    off, steady = {}, []
    for i in asked:
        x1, y1, x2, y2 = labelled[i][0].bbox
        shown = before[y1:y2, x1:x2]
        if shown.size == 0:
            continue
        moved = [np.abs(f[y1:y2, x1:x2] - shown).max(axis=2) > FOCUS_CHANGED_LEVEL for f in frames]
        k = int(np.argmax([int(m.sum()) for m in moved]))
        if int(moved[k].sum()) < BLINK_MIN_PIXELS:
            steady.append(i)  # nothing blinks: whatever shows the focus (or nothing) is steady
            continue
        background = np.median(shown.reshape(-1, 3), axis=0)
        ink_shown = np.abs(shown[moved[k]] - background).sum(axis=1).mean()
        ink_other = np.abs(frames[k][y1:y2, x1:x2][moved[k]] - background).sum(axis=1).mean()
        if ink_shown < ink_other:
            off[i] = moved[k]
    return off, steady


def under_popup(labelled: Sequence[tuple[Element, Candidate]], windows: Sequence[XWindow], box: Box) -> list[int]:
    """The labelled controls outside the open popups (menus, drop-down lists, popovers: the
    override-redirect windows) while one is open; none when no popup is open. A popup takes the
    keyboard, and the window under it may stop drawing its focus (Qt hides the caret of a text view
    under an open menu) while the toolkit still reports the control it will return to as focused:
    their focus is labelled unknown."""
    popups = [w for w in windows if w.override_redirect]
    if not popups:
        return []
    ids = {w.id for w in popups}
    out = []
    for i, (e, c) in enumerate(labelled):
        if c.window is not None:
            inside = c.window in ids
        else:  # drawn in the topmost window under it: look where its centre is on the screen
            cx, cy = box[0] + (e.bbox[0] + e.bbox[2]) / 2, box[1] + (e.bbox[1] + e.bbox[3]) / 2
            inside = any(w.box[0] <= cx < w.box[2] and w.box[1] <= cy < w.box[3] for w in popups)
        if not inside:
            out.append(i)
    return out


def _focus_as_drawn(session: DesktopSession, box: Box, image: Image.Image,
                    labelled: list[tuple[Element, Candidate]],
                    windows: Sequence[XWindow]) -> list[tuple[Element, Candidate]]:
    """The labels with ``focused`` unknown (None) where the capture does not show the focus.

    - While a popup is open, no control outside it shows the focus (``under_popup``).
    - GTK 3 shows focus rings only once the focus has been moved with the keyboard (a Shift or an
      unbound key does not do it), so AT-SPI's focus is often invisible. Tab and Shift+Tab move the
      focus away and back, which shows the rings: a focused control whose pixels then change had
      no ring drawn (or did not get the focus back: unknown too).
    - A field whose caret the capture caught off (``_caret_off``) shows its focus only if its
      pixels besides the caret change while the focus is away (a ring, Tk's dark frame). A text
      view takes Tab as text, so one caught off is unknown outright.
    - A one-line field in which nothing blinks shows its focus only if its pixels change while the
      focus is away: a ring or a steady caret does, while a Qt window that is not the active one
      draws no caret at all.
    Other fields are left as they are: GTK selects a field's text when the keyboard focuses it."""
    out = list(labelled)
    for i in under_popup(out, windows, box):
        if out[i][0].focused:
            out[i] = (out[i][0].model_copy(update={"focused": None}), out[i][1])
    labelled = out
    before = np.asarray(image, dtype=np.int16)
    off, steady = _caret_off(session, box, before, labelled)
    for i in [i for i in off if out[i][0].type == ElementType.TEXT_AREA]:
        out[i] = (out[i][0].model_copy(update={"focused": None}), out[i][1])
        del off[i]
    steady = [i for i in steady if out[i][0].type != ElementType.TEXT_AREA]  # Tab would be typed into it
    asked = [i for i, (e, _) in enumerate(out) if e.focused and e.type not in TEXT_FIELDS and i not in off]
    if not asked and not off and not steady:
        return out
    session.xdotool("key", "Tab")
    time.sleep(0.3)
    away = np.asarray(session.capture(box), dtype=np.int16)
    session.xdotool("key", "shift+Tab")
    after = np.asarray(session.settle(box), dtype=np.int16)
    if after.shape != before.shape or away.shape != before.shape:
        return out
    h, w = before.shape[:2]

    def moved(frame: np.ndarray, e: Element, caret: np.ndarray | None = None) -> int:
        x1, y1, x2, y2 = e.bbox
        mx1, my1 = max(0, x1 - FOCUS_MARGIN), max(0, y1 - FOCUS_MARGIN)
        mx2, my2 = min(w, x2 + FOCUS_MARGIN), min(h, y2 + FOCUS_MARGIN)
        changed = np.abs(frame[my1:my2, mx1:mx2] - before[my1:my2, mx1:mx2]).max(axis=2) > FOCUS_CHANGED_LEVEL
        if caret is not None:  # leave out the caret's pixels and their neighbours
            padded = np.pad(caret, 1)
            near = np.zeros_like(caret)
            for dy in range(3):
                for dx in range(3):
                    near |= padded[dy:dy + caret.shape[0], dx:dx + caret.shape[1]]
            inner = changed[y1 - my1:y1 - my1 + caret.shape[0], x1 - mx1:x1 - mx1 + caret.shape[1]]
            inner &= ~near[:inner.shape[0], :inner.shape[1]]
        return int(changed.sum())

    for i in asked:
        e, c = out[i]
        if moved(after, e) > FOCUS_CHANGED_PIXELS:
            out[i] = (e.model_copy(update={"focused": None}), c)
    for i, caret in off.items():
        e, c = out[i]
        if moved(away, e, caret) <= FOCUS_CHANGED_PIXELS:  # nothing but the caret shows the focus
            out[i] = (e.model_copy(update={"focused": None}), c)
    for i in steady:
        e, c = out[i]
        if moved(away, e) <= FOCUS_CHANGED_PIXELS:  # nothing shows the focus
            out[i] = (e.model_copy(update={"focused": None}), c)
    return out


class _AppFailed(RuntimeError):
    """This app cannot be labelled here (no window, no accessibility tree); the others go on."""


def _episode(session: DesktopSession, dataset: Dataset, app: App, split: str, ep_seed: int, room: int,
             hashes: list[int], stats: DesktopStats) -> int:
    rng = random.Random(f"{app.name}:{ep_seed}")
    try:
        running, look = _start(session, app, rng)
    except DesktopError as exc:
        raise _AppFailed(str(exc)) from None
    kept = 0
    try:
        windows = session.wait_for_windows(WINDOW_TIMEOUT_S)
        if not windows:
            log = session.log_of(app.binary())
            raise _AppFailed(f"no window within {WINDOW_TIMEOUT_S:.0f} s" + (f" (it printed: {log[-300:]})" if log
                                                                               else ""))
        if isinstance(running, _AtspiApp) and not running.tree_ready(TREE_TIMEOUT_S):
            raise _AppFailed(f"it showed a window but no accessibility tree within {TREE_TIMEOUT_S:.0f} s "
                             "(is the AT-SPI bus reachable?)")
        size = _place(session, app, rng)
        steps = rng.randint(*STEPS_PER_EPISODE)
        explorer = _Explorer(session, rng)
        for step in range(steps + 1):
            if not running.alive():
                break
            windows = session.wait_for_windows(5.0, settle=0.3)
            box = capture_box(windows, session.width, session.height)
            if box is None:
                break
            image = session.settle(box)
            windows = session.windows()  # what settled
            labelled = finish(running.candidates(windows), windows, box, image)
            labelled = _focus_as_drawn(session, box, image, labelled, windows)
            if not labelled or _bare_window(labelled, windows, box):
                stats.unlabelled += 1
            else:
                h = dhash(image)
                if near_duplicate(h, hashes, NEAR_DUPLICATE_BITS):
                    stats.duplicates += 1
                else:
                    hashes.append(h)
                    elements = [e for e, _ in labelled]
                    note = f"{app.toolkit}; {look}; window {size}; {split}"
                    ann = Annotation(image="", width=image.width, height=image.height, elements=elements,
                                     source=Source(kind="desktop", task=app.name, seed=ep_seed, step=step, note=note))
                    dataset.add(app.name, f"{app.name}-{ep_seed}-{step}", image, ann)
                    kept += 1
                    stats.screens += 1
                    stats.elements += len(elements)
                    if kept >= room:
                        break
            if step == steps:
                break
            ox, oy = box[0], box[1]
            targets = [_Target(e, c.name, (e.bbox[0] + ox, e.bbox[1] + oy, e.bbox[2] + ox, e.bbox[3] + oy))
                       for e, c in labelled]
            popup = any(w.override_redirect for w in windows)
            if explorer.step(targets, popup) is None:
                break
            # Out of the way, so that no tooltip opens over what is captured next (tooltips are
            # not in the accessibility tree).
            session.xdotool("mousemove", str(session.width - 1), str(session.height - 1))
            time.sleep(0.3)
    except DatasetError:
        raise
    except DesktopError as exc:
        if not running.alive():
            return kept  # the app ended itself (an interaction closed it)
        raise _AppFailed(str(exc)) from None
    finally:
        running.close()
        _wait_closed(session)
    return kept


def _wait_closed(session: DesktopSession, timeout: float = 5.0) -> None:
    """Wait until the app's windows are gone, so the next episode starts on an empty screen."""
    deadline = time.monotonic() + timeout
    while session.windows() and time.monotonic() < deadline:
        time.sleep(0.1)
