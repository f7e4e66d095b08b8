"""A tiny GUI for tests: screens drawn to real pixels, changed by real clicks at pixel positions.

The app is a state machine: each state is a list of elements; a click whose pixel falls inside an
element's box moves to the state the transition table names. It stands in for the live screen,
whose real implementation (capture + OS input) is tested on Xvfb elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from caap.act.executor import RecordingExecutor
from caap.elements import Element
from caap.geometry import contains
from caap.observe.capture.screen import Screen
from caap.observe.observation import Observation, Typed


def el(t: str, box: Sequence[int], text: str | None = None, **kw) -> Element:
    return Element(type=t, bbox=list(box), text=text, **kw)


class ScriptedApp(Screen):
    def __init__(self, states: dict[str, list[Element]], transitions: dict[tuple[str, str], str], start: str,
                 size: tuple[int, int] = (160, 210)) -> None:
        self.states = states
        self.transitions = transitions
        self.state = start
        self.size = size
        self.captures = 0
        self.visited = [start]

    def render(self) -> Image.Image:
        img = Image.new("RGB", self.size, "white")
        draw = ImageDraw.Draw(img)
        for e in self.states[self.state]:
            draw.rectangle([e.bbox[0], e.bbox[1], e.bbox[2] - 1, e.bbox[3] - 1], outline="black", fill=(230, 230, 240))
            if e.text:
                draw.text((e.bbox[0] + 3, e.bbox[1] + 2), e.text, fill="black")
            if e.checked:  # a tick drawn inside the box: ticking changes the element and nothing else
                draw.line([e.bbox[0] + 2, e.bbox[3] - 3, e.bbox[2] - 3, e.bbox[1] + 2], fill="black", width=2)
        return img

    def capture(self) -> Image.Image:
        self.captures += 1
        return self.render()

    def click_at(self, x: int, y: int) -> None:
        for e in self.states[self.state]:
            if contains(e.bbox, x, y):
                nxt = self.transitions.get((self.state, e.text or e.type))
                if nxt:
                    self.state = nxt
                    self.visited.append(nxt)
                return


class AppObserver:
    """A perfect observer for the app: the elements of the state on screen."""

    def __init__(self, app: ScriptedApp) -> None:
        self.app = app
        self.typed: list[Typed] = []
        self.names: tuple[str, ...] = ()

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation:
        self.typed = list(typed)  # what the loop last said it had typed, for tests to check
        self.names = tuple(names)
        return Observation([e.model_copy() for e in self.app.states[self.app.state]])


class AppExecutor(RecordingExecutor):
    """Records the OS primitives and delivers clicks to the app."""

    def __init__(self, app: ScriptedApp) -> None:
        super().__init__()
        self.app = app

    def click(self, x, y, *, button="left", count=1, modifiers=()):
        super().click(x, y, button=button, count=count, modifiers=modifiers)
        self.app.click_at(x, y)


def dropdown_app() -> ScriptedApp:
    """'Select Helli from the list and click Submit.' in three screens (and a blank one after)."""
    dd = [1, 55, 152, 76]
    submit = el("button", [1, 80, 98, 112], "Submit", focused=False)
    options = [el("tabled_text", [1, 77 + 16 * i, 152, 92 + 16 * i], t) for i, t in enumerate(["Selie", "Helli", "Gena"])]
    states = {
        "closed": [el("dropdown", dd, "Theodora", focused=False), submit],
        "open": [el("dropdown", dd, "Theodora", focused=True), *options],
        "chosen": [el("dropdown", dd, "Helli", focused=False), submit],
        "wrong": [el("dropdown", dd, "Selie", focused=False), submit],
        "submitted": [],
    }
    transitions = {
        ("closed", "Theodora"): "open", ("open", "Helli"): "chosen", ("open", "Selie"): "wrong",
        ("chosen", "Submit"): "submitted", ("wrong", "Submit"): "submitted",
    }
    return ScriptedApp(states, transitions, "closed")


def checkbox_app() -> ScriptedApp:
    """'Tick A and B, then click Submit.': a tick changes only its own box; Submit clears the page."""
    def boxes(a: bool, b: bool) -> list[Element]:
        return [el("checkbox", [10, 20, 30, 40], "A", checked=a), el("checkbox", [10, 50, 30, 70], "B", checked=b),
                el("button", [10, 100, 90, 130], "Submit")]
    states = {"none": boxes(False, False), "a": boxes(True, False), "ab": boxes(True, True), "submitted": []}
    transitions = {("none", "A"): "a", ("a", "B"): "ab", ("ab", "Submit"): "submitted"}
    return ScriptedApp(states, transitions, "none")
