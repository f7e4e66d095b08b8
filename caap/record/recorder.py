"""The live recording session: input listeners, a background capture loop, observation, writing.

Threads and what each owns:

- pynput's mouse and keyboard listeners turn callbacks into raw events (pointer already in
  captured-image pixels) paired with the latest captured frame, and queue them — nothing slow runs
  there, so input is never held up;
- the capture thread owns the screen (one mss instance, which must stay on one thread): a frame a
  few times a second plus one right after each input event, only the latest kept; it also waits
  for the screen to settle after each action, stopping early when the next action begins;
- the session loop (the caller's thread) feeds the events to the :class:`Merger` in order and
  turns finished gestures into jobs;
- the writer thread observes each job's before/after frames, saves the PNGs, binds the steps to
  elements (:class:`Annotator`) and rewrites the demonstration file after every gesture.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from caap.act.secrets import Secrets, blacked_out, box_of, unmasked
from caap.decide.demos import Demonstration, DemoStep, save_demo
from caap.elements import Element
from caap.observe.capture.live import CaptureTarget, LiveScreen, SettleOptions
from caap.observe.capture.screen import ScreenError, changed_outside
from caap.observe.tracking import IdTracker
from caap.record.events import (
    Annotator,
    Gesture,
    Key,
    Merger,
    MouseButton,
    MouseMove,
    RawEvent,
    Wheel,
    element_at,
    key_name,
)

CAPTURE_HZ = 5.0
HOVER_CHANGE_PX = 16  # as the agent loop's change threshold: less is a caret or anti-aliasing
HOVER_STEP_PX = 3  # pointer moves closer than this to the last one are the same resting place
RECORD_SETTLE = SettleOptions(min_wait_s=0.05, interval_s=0.08, timeout_s=2.0)


class RecordError(RuntimeError):
    pass


def assets_dir(out: Path) -> Path:
    """Screenshots live beside the demonstration: ``demo.json`` → ``demo.assets/``."""
    return out.with_name(out.stem + ".assets")


class _NextAction(Exception):
    """Raised inside a settle wait once the next action has begun."""


class _PublishingScreen(LiveScreen):
    """A LiveScreen whose every frame (settle's included) becomes the latest frame, and whose settle
    wait can be cut short."""

    def __init__(self, target: CaptureTarget, settle: SettleOptions) -> None:
        super().__init__(target, settle=settle)
        self.latest: Image.Image | None = None
        self.interrupt: Callable[[], bool] | None = None

    def capture(self) -> Image.Image:
        if self.interrupt is not None and self.interrupt():
            raise _NextAction
        image = super().capture()
        self.latest = image
        return image


@dataclass
class _Job:
    gesture: Gesture
    before: Image.Image
    after: Image.Image | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def set_after(self, frame: Image.Image) -> None:
        with self.lock:  # the first of "screen settled" and "next action began" wins
            if self.after is None:
                self.after = frame
        self.ready.set()


@dataclass
class RecordOptions:
    task: str
    out: Path
    target: CaptureTarget
    stop_hotkey: str
    capture_hz: float = CAPTURE_HZ
    settle: SettleOptions = RECORD_SETTLE
    secrets: Secrets = field(default_factory=Secrets)  # typed values stored as {NAME}, hidden in screenshots


class Recorder:
    """One recording. ``observer`` (anything with ``observe(image) -> list[Element]``) or None to
    store points only. ``on_steps(first_index, steps)`` is told about every gesture written."""

    def __init__(self, options: RecordOptions, observer: Any | None = None,
                 on_steps: Callable[[int, list[DemoStep]], None] | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.options = options
        self.observer = observer
        self.on_steps = on_steps or (lambda i, s: None)
        self.on_error = on_error or (lambda m: None)
        self.screen = _PublishingScreen(options.target, options.settle)
        self.demo = Demonstration(task=options.task, steps=[], source="human", complete=False)
        self._events: queue.Queue[tuple[RawEvent, Image.Image | None]] = queue.Queue()
        self._settle: queue.Queue[_Job | None] = queue.Queue()
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._wake = threading.Event()
        self._capture_done = threading.Event()
        self._first_frame = threading.Event()
        self._capture_error: BaseException | None = None
        self._writer_error: BaseException | None = None
        self._waiting: list[_Job] = []  # jobs whose after-screenshot is not decided yet
        self._t0 = time.monotonic()
        self._held: set[str] = set()  # mouse buttons pressed inside the captured area
        self._size: tuple[int, int] = (0, 0)
        self._last_hover: tuple[int, int] | None = None

    # --- capture thread -------------------------------------------------------------------------------
    def _capture_loop(self) -> None:
        interval = 1.0 / self.options.capture_hz
        try:
            first = self.screen.capture()
            self._size = first.size
            self.demo.screen = {"width": first.width, "height": first.height}
        except BaseException as exc:  # reported by start(); nothing else can run without a screen
            self._capture_error = exc
            self._first_frame.set()
            return
        self._first_frame.set()
        try:
            while True:
                try:
                    job = self._settle.get_nowait()
                except queue.Empty:
                    job = None
                    if self._capture_done.is_set():
                        break
                if job is not None:
                    self._settle_job(job)
                    continue
                self._wake.wait(interval)
                self._wake.clear()
                self.screen.capture()
        except BaseException as exc:
            self._capture_error = exc
            self.on_error(f"screen capture stopped: {exc}")
            for job in self._waiting:  # never leave the writer waiting for a frame that cannot come
                job.set_after(job.before)
        finally:
            self.screen.close()

    def _settle_job(self, job: _Job) -> None:
        if job.after is not None:
            return
        self.screen.interrupt = lambda: job.after is not None
        try:
            frame = self.screen.settle(self.screen.latest or job.before)
        except _NextAction:
            return  # the session already gave the job the next action's before-frame
        finally:
            self.screen.interrupt = None
        job.set_after(frame)

    # --- listeners (pynput threads: enqueue and return) ------------------------------------------------
    def _now(self) -> float:
        return time.monotonic() - self._t0

    def _to_image(self, ox: float, oy: float) -> tuple[int, int, bool]:
        x, y = self.screen.mapping.to_image(ox, oy)  # the one OS → image conversion
        w, h = self._size
        return x, y, 0 <= x < w and 0 <= y < h

    def _put(self, event: RawEvent) -> None:
        self._events.put((event, self.screen.latest))
        self._wake.set()  # also capture right after the input, for the next event's before

    def _on_move(self, ox: float, oy: float) -> None:
        if "left" in self._held:  # a held button's path (a drag)
            x, y, _ = self._to_image(ox, oy)
            w, h = self._size
            self._events.put((MouseMove(self._now(), min(max(x, 0), w - 1), min(max(y, 0), h - 1)), None))
            return
        x, y, inside = self._to_image(ox, oy)
        last = self._last_hover
        if inside and not self._held and (last is None or abs(x - last[0]) + abs(y - last[1]) >= HOVER_STEP_PX):
            # Where the pointer may come to rest, with the frame before it got there: a menu that
            # opens on hover is an action of its own (point_element).
            self._last_hover = (x, y)
            self._events.put((MouseMove(self._now(), x, y), self.screen.latest))

    def _on_click(self, ox: float, oy: float, button: Any, pressed: bool) -> None:
        name = getattr(button, "name", str(button))
        if name not in ("left", "right", "middle"):
            return
        x, y, inside = self._to_image(ox, oy)
        if pressed:
            if not inside:
                return  # outside the captured area: not part of the demonstration
            self._held.add(name)
        else:
            if name not in self._held:
                return
            self._held.discard(name)
            w, h = self._size
            x, y = min(max(x, 0), w - 1), min(max(y, 0), h - 1)  # a drag may end past the edge
        self._put(MouseButton(self._now(), x, y, name, pressed))  # type: ignore[arg-type]

    def _on_scroll(self, ox: float, oy: float, dx: int, dy: int) -> None:
        x, y, inside = self._to_image(ox, oy)
        if inside:
            self._put(Wheel(self._now(), x, y, int(dx), int(dy)))

    def _on_key(self, key: Any, pressed: bool) -> None:
        event = key_event(key, pressed, self._now())
        if event is not None:
            self._put(event)

    # --- writer thread ----------------------------------------------------------------------------------
    def _writer(self) -> None:
        annotate = Annotator(self.options.secrets)
        cache: tuple[Image.Image | None, list[Element]] = (None, [])
        assets = assets_dir(self.options.out)
        rel = self.options.out.parent

        def observe(frame: Image.Image) -> list[Element]:
            nonlocal cache
            assert self.observer is not None  # only called where an observer is set
            if cache[0] is not frame:  # one step's after is often the next one's before
                cache = (frame, list(self.observer.observe(frame).elements))
            return cache[1]

        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.ready.wait()
            assert job.after is not None
            if job.gesture.hover and not self._hover_changed(job, observe):
                job.before = job.after = None  # type: ignore[assignment]
                continue
            index = len(self.demo.steps) + 1
            files = {which: assets / f"{index:04d}-{which}.png" for which in ("before", "after")}
            paths = {which: path.relative_to(rel).as_posix() for which, path in files.items()}
            before = after = None
            if self.observer is not None:
                try:
                    tracker = IdTracker()  # ids 1..n in reading order on the before screen, as the agent numbers
                    before = [e.model_copy() for e in tracker.update(observe(job.before))]
                    after = [e.model_copy() for e in tracker.update(observe(job.after))]
                except Exception as exc:  # a broken observation must not lose the demonstration
                    self.on_error(f"observation failed for step {index}: {exc}")
                    before = after = None
            secrets = self.options.secrets
            shown = {"before": secrets.hide_in(before), "after": secrets.hide_in(after)}
            steps = annotate(job.gesture, before, after, paths)
            try:
                for which, frame in (("before", job.before), ("after", job.after)):
                    typed_into = (box_of(e) for e in annotate.secret_fields)
                    masks = shown[which] + unmasked(typed_into, before if which == "before" else after)
                    blacked_out(frame, masks).save(files[which], compress_level=1)
            except OSError as exc:
                self._writer_error = exc
                self.on_error(f"cannot write screenshots to {assets}: {exc}")
                return
            self.demo.steps.extend(steps)
            try:
                save_demo(self.demo, self.options.out)
            except OSError as exc:
                self._writer_error = exc
                self.on_error(f"cannot write {self.options.out}: {exc}")
                return
            job.before = job.after = None  # type: ignore[assignment]  # frames are on disk now
            self.on_steps(index, steps)

    # --- the session ------------------------------------------------------------------------------------
    def _hover_changed(self, job: _Job, observe: Callable[[Image.Image], list[Element]]) -> bool:
        """Whether the pointer coming to rest changed the screen beyond the element under it (a
        submenu, a tooltip): a button's own hover tint is no step of the demonstration."""
        assert job.after is not None  # the writer waits for it before asking
        point = job.gesture.steps[0].point
        boxes = []
        if self.observer is not None and point is not None:
            try:
                under = element_at(observe(job.before), point)
            except Exception:  # a broken observer is reported by the step's own observation
                under = None
            if under is not None:
                boxes.append(under.bbox)
        return changed_outside(job.before, job.after, boxes) > HOVER_CHANGE_PX

    def _dispatch(self, gestures: list[Gesture], frames: dict[float, Image.Image], began: float | None = None,
                  frame: Image.Image | None = None) -> None:
        """Queue finished gestures. ``began`` is the time of an event that started a new action
        (``frame`` its before-frame): that ends the wait for the after-screenshot of every earlier
        action, because its before-frame shows the screen just before the new input."""
        earlier = began is not None and frame is not None
        if earlier:
            assert frame is not None
            for job in self._waiting:
                job.set_after(frame)
        for g in gestures:
            before = frames.pop(g.t, None) or frame or self.screen.latest
            assert before is not None
            job = _Job(g, before)
            if earlier and g.t != began:
                job.set_after(frame)  # type: ignore[arg-type]
            else:
                self._settle.put(job)
            self._jobs.put(job)
            self._waiting.append(job)
        self._waiting = [j for j in self._waiting if j.after is None]

    def start(self) -> None:
        """Open the screen and the listeners; raises RecordError when either is impossible."""
        self._capture = threading.Thread(target=self._capture_loop, name="caap-record-capture", daemon=True)
        self._capture.start()
        self._first_frame.wait(30)
        if self._capture_error is not None:
            if isinstance(self._capture_error, ScreenError):
                raise RecordError(str(self._capture_error)) from None
            raise self._capture_error
        try:  # only once the screen works, so a failed start leaves no empty demonstration behind
            assets_dir(self.options.out).mkdir(parents=True, exist_ok=True)
            save_demo(self.demo, self.options.out)  # fails now, not after the first step, when unwritable
        except OSError as exc:
            raise RecordError(f"cannot write {self.options.out}: {exc}") from None
        try:
            from pynput import keyboard, mouse
        except ImportError as exc:
            raise RecordError(f"recording needs pynput and a display: pip install 'caap[screen]' ({exc})") from None
        self._mouse = mouse.Listener(on_move=self._on_move, on_click=self._on_click, on_scroll=self._on_scroll)
        self._keyboard = keyboard.Listener(on_press=lambda k: self._on_key(k, True),
                                           on_release=lambda k: self._on_key(k, False))
        for listener in (self._mouse, self._keyboard):
            listener.start()
            listener.wait()  # hooked into the input system: from here on nothing is missed
        self._writer_thread = threading.Thread(target=self._writer, name="caap-record-writer", daemon=True)
        self._writer_thread.start()

    def run(self, stop: threading.Event) -> Demonstration:
        """Record until ``stop`` is set (the hotkey) or Ctrl-C; returns the finished demonstration."""
        merger = Merger(self.options.stop_hotkey)
        frames: dict[float, Image.Image] = {}  # before-frames of the gesture in progress only

        def handle(event: RawEvent, frame: Image.Image | None) -> None:
            before_t = merger.pending_t
            gestures = merger.feed(event)
            now_t = merger.pending_t
            began = (now_t is not None and now_t == event.t and now_t != before_t) or any(
                g.t == event.t for g in gestures)
            if began and frame is not None:
                frames[event.t] = frame
            if began and merger.hovering:  # a pointer moving is no action yet: earlier ones still settle
                began = False
            self._dispatch(gestures, frames, event.t if began else None, frame)
            for t in [t for t in frames if t != merger.pending_t]:
                del frames[t]

        try:
            while not stop.is_set() and self._capture_error is None and self._writer_error is None:
                try:
                    event, frame = self._events.get(timeout=0.05)
                except queue.Empty:
                    self._dispatch(merger.tick(self._now()), frames)
                    continue
                handle(event, frame)
        except KeyboardInterrupt:
            pass  # Ctrl-C ends the recording like the hotkey does
        finally:
            for listener in (self._mouse, self._keyboard):
                listener.stop()
        while True:  # what the listeners queued before they stopped still counts
            try:
                handle(*self._events.get_nowait())
            except queue.Empty:
                break
        self._dispatch(merger.finish(), frames)
        self._jobs.put(None)
        self._writer_thread.join()
        self._capture_done.set()
        self._wake.set()
        self._capture.join(timeout=10)
        if self._writer_error is not None:
            raise RecordError(str(self._writer_error))
        self.demo.complete = True
        save_demo(self.demo, self.options.out)
        return self.demo


_ENTER_KEYSYMS = (0xFF0D, 0xFF0A, 0xFF8D)  # X11 Return, Linefeed, KP_Enter
_TAB_KEYSYM = 0xFF09


def key_event(key: Any, pressed: bool, t: float) -> Key | None:
    """A pynput key → the merger's Key (None for keys that have no name or character)."""
    from pynput import keyboard

    if isinstance(key, keyboard.Key):
        char = key.value.char if key is keyboard.Key.space else None
        return Key(t, key_name(key.name), pressed, char)
    char = getattr(key, "char", None)
    # Typed line breaks and tabs (xdotool types "\n" as the Linefeed keysym) are the Enter and Tab keys.
    vk = getattr(key, "vk", None)
    if char in ("\n", "\r") or vk in _ENTER_KEYSYMS:
        return Key(t, "enter", pressed, None)
    if char == "\t" or vk == _TAB_KEYSYM:
        return Key(t, "tab", pressed, None)
    if not char:
        return None
    if len(char) == 1 and ord(char) < 32:
        char = chr(ord(char) + 96)  # some backends report Ctrl+A as "\x01"
    return Key(t, char.lower() if len(char) == 1 else char, pressed, char)
