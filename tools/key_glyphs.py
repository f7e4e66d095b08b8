"""How well the observer reads calculator keys that hold one glyph: keys drawn here (two toolkits'
key faces, the system's fonts at the sizes keys use, every digit and operator), read by the whole
observer's text steps, and scored per reading: the reader's, PP-OCR's and the one the observer keeps.

    python tools/key_glyphs.py [--sizes 9-14] [--out results/observer/key-glyphs.json]

The keys are drawn, not captured from any application, so no reserved screen is looked at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from PIL import Image, ImageDraw, ImageFont
from rich.console import Console
from rich.table import Table

CHARS = "0123456789+-×÷=±.%*/"
FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
         "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")
FACES = {  # a key's face (top, bottom colour of its gradient) and its frame's colour
    "flat": ((246, 245, 244), (246, 245, 244), (205, 199, 194)),
    "gradient": ((252, 252, 252), (226, 226, 226), (160, 160, 160)),
}
KEY = 46  # px: a key's side
COLUMNS = 6


Box = tuple[int, int, int, int]


def draw_pad(chars: str, font: ImageFont.FreeTypeFont, face: str) -> tuple[Image.Image, list[Box]]:
    """A keypad of ``chars`` on ``face`` keys and the box of each key."""
    top, bottom, frame = FACES[face]
    rows = (len(chars) + COLUMNS - 1) // COLUMNS
    image = Image.new("RGB", (COLUMNS * (KEY + 6) + 12, rows * (KEY + 6) + 12), (239, 239, 239))
    draw = ImageDraw.Draw(image)
    boxes = []
    for n, char in enumerate(chars):
        x, y = 8 + (n % COLUMNS) * (KEY + 6), 8 + (n // COLUMNS) * (KEY + 6)
        for row in range(KEY):
            t = row / (KEY - 1)
            draw.line([(x, y + row), (x + KEY - 1, y + row)],
                      fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)))
        draw.rectangle([x, y, x + KEY - 1, y + KEY - 1], outline=frame)
        draw.text((x + KEY / 2, y + KEY / 2), char, fill=(30, 30, 30), font=font, anchor="mm")
        boxes.append((x, y, x + KEY, y + KEY))
    return image, boxes


def main(sizes: Annotated[str, typer.Option(help="font sizes in px, A-B")] = "9-14",
         out: Annotated[Path | None, typer.Option(help="write the scores here as JSON")] = None) -> None:
    from caap.config import ObserveConfig
    from caap.elements import Element
    from caap.observe.pipeline import Look
    from caap.observe.steps.reading import read_elements
    from caap.observe.steps.texts import reread_doubtful_texts
    from caap.observe.vision import DEFAULT_DETECTOR, VisionObserver
    from caap.taxonomy import ElementType

    observer = VisionObserver.from_config(ObserveConfig(detector=DEFAULT_DETECTOR))
    parts = observer.parts
    assert parts.reader is not None and parts.ocr is not None
    lo, hi = (int(v) for v in sizes.split("-"))
    counts = {"reader": 0, "ppocr": 0, "kept": 0}
    wrong: dict[str, dict[str, int]] = {k: {} for k in counts}
    total = 0
    for path in FONTS:
        if not Path(path).is_file():
            continue
        for size in range(lo, hi + 1):
            font = ImageFont.truetype(path, size)
            for face in FACES:
                image, boxes = draw_pad(CHARS, font, face)
                look = Look(image=image, parts=parts)
                detected = [Element(type=ElementType.BUTTON, bbox=b, score=1.0, id=n + 1)
                            for n, b in enumerate(boxes)]
                elements = read_elements(look, detected)
                ocr = parts.ocr.read(image, boxes, ["button"] * len(boxes))
                kept = reread_doubtful_texts(look, elements)
                for n, char in enumerate(CHARS):
                    total += 1
                    for name, text in (("reader", elements[n].text), ("ppocr", ocr[n].text), ("kept", kept[n].text)):
                        if (text or "").strip() == char:
                            counts[name] += 1
                        else:
                            wrong[name][char] = wrong[name].get(char, 0) + 1
    table = Table(title=f"keys holding one glyph read right ({total} keys, sizes {sizes} px)")
    for col in ("reading", "right", "share", "most missed"):
        table.add_column(col)
    for name, right in counts.items():
        missed = ", ".join(f"{c} {k}" for c, k in sorted(wrong[name].items(), key=lambda x: -x[1])[:6])
        table.add_row(name, str(right), f"{right / max(total, 1):.3f}", missed)
    Console().print(table)
    if out is not None:
        out.write_text(json.dumps({"keys": total, "sizes": sizes, "right": counts, "wrong": wrong}, indent=1) + "\n")


if __name__ == "__main__":
    typer.run(main)
