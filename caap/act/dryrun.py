"""Dry-run rendering: draw what the recorded OS events would have done onto the screenshot.

``RecordingExecutor`` (caap.act.executor) performs nothing and records each primitive; this module
turns that record into a picture a person can check at a glance: a numbered crosshair per click
(red left, blue right, a double ring for double clicks, a "ctrl" tag for modifiers), an outline
for a hover, the drag path as a line from press to release, an arrow for scrolling, and the typed
text or pressed keys in a label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PIL import Image, ImageDraw

LEFT, RIGHT, MOVE, KEYS, DRAG = (230, 0, 0), (0, 80, 230), (255, 140, 0), (120, 0, 160), (0, 150, 60)


def _label(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, colour: tuple[int, int, int],
           size: tuple[int, int]) -> None:
    x: float  # the label moves by the text box, which Pillow types as floats
    y: float
    x, y = xy
    box = draw.textbbox((0, 0), text)
    w, h = box[2] - box[0], box[3] - box[1]
    x = min(max(0, x), max(0, size[0] - w - 2))
    y = min(max(0, y), max(0, size[1] - h - 2))
    draw.rectangle([x - 1, y - 1, x + w + 1, y + h + 2], fill=(255, 255, 255))
    draw.text((x, y), text, fill=colour)


def draw_calls(image: Image.Image, calls: Sequence[tuple[str, dict[str, Any]]]) -> Image.Image:
    """A copy of ``image`` with the recorded primitives drawn on it, numbered in order."""
    canvas = image.convert("RGB").copy()
    draw = ImageDraw.Draw(canvas)
    pointer: tuple[int, int] | None = None
    drag: list[tuple[int, int]] = []
    for n, (name, kw) in enumerate(calls, start=1):
        if name == "click":
            x, y = kw["x"], kw["y"]
            colour = RIGHT if kw.get("button") == "right" else LEFT
            draw.line([(x - 5, y), (x + 5, y)], fill=colour)
            draw.line([(x, y - 5), (x, y + 5)], fill=colour)
            draw.ellipse([x - 3, y - 3, x + 3, y + 3], outline=colour)
            if kw.get("count", 1) > 1:
                draw.ellipse([x - 6, y - 6, x + 6, y + 6], outline=colour)
            tag = f"{n}" + ("+" + "+".join(kw["modifiers"]) if kw.get("modifiers") else "")
            _label(draw, (x + 6, y + 3), tag, colour, canvas.size)
            pointer = (x, y)
        elif name == "move":
            x, y = kw["x"], kw["y"]
            if drag:
                draw.line([drag[-1], (x, y)], fill=DRAG, width=2)
                drag.append((x, y))
            else:
                draw.ellipse([x - 4, y - 4, x + 4, y + 4], outline=MOVE)
                _label(draw, (x + 6, y + 3), f"{n} hover", MOVE, canvas.size)
            pointer = (x, y)
        elif name == "mouse_down":
            x, y = kw["x"], kw["y"]
            drag = [(x, y)]
            draw.rectangle([x - 3, y - 3, x + 3, y + 3], outline=DRAG)
            _label(draw, (x + 6, y + 3), f"{n} press", DRAG, canvas.size)
            pointer = (x, y)
        elif name == "mouse_up":
            if pointer:
                x, y = pointer
                draw.rectangle([x - 3, y - 3, x + 3, y + 3], fill=DRAG)
                _label(draw, (x + 6, y + 3), f"{n} release", DRAG, canvas.size)
            drag = []
        elif name == "scroll":
            x, y, dx, dy = kw["x"], kw["y"], kw.get("dx", 0), kw.get("dy", 0)
            end = (x + 4 * dx, y + 4 * dy)
            draw.line([(x, y), end], fill=KEYS, width=2)
            draw.ellipse([end[0] - 2, end[1] - 2, end[0] + 2, end[1] + 2], fill=KEYS)
            _label(draw, (x + 6, y + 3), f"{n} scroll {dx:+d},{dy:+d}", KEYS, canvas.size)
        elif name in ("type_text", "press_keys"):
            text = kw["text"] if name == "type_text" else "+".join(kw["keys"])
            text = text if len(text) <= 24 else text[:23] + "…"
            x, y = pointer or (2, canvas.height - 14)
            _label(draw, (x + 6, y + 10), f"{n} {'type' if name == 'type_text' else 'key'} {text!r}", KEYS, canvas.size)
        elif name == "wait":
            _label(draw, (2, 2), f"{n} wait {kw['seconds']:g}s", KEYS, canvas.size)
    return canvas
