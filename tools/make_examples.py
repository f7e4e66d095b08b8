"""Regenerate the example screen in examples/ (a MiniWoB-sized 160x210 form drawn with PIL).

    python tools/make_examples.py

It stands in for a real capture until the screen and vision issues land; the element file is what
`caap observe --json` prints for such a screen.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parent.parent / "examples"


def main() -> None:
    img = Image.new("RGB", (160, 210), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, 159, 49], fill=(255, 255, 140))
    d.text((3, 4), "Select Helli from the list", fill="black")
    d.text((3, 16), "and click Submit.", fill="black")
    d.rectangle([1, 55, 151, 75], outline=(120, 120, 120), fill=(248, 248, 248))
    d.text((5, 60), "Theodora", fill="black")
    d.polygon([(140, 62), (148, 62), (144, 68)], fill="black")
    d.rectangle([1, 80, 97, 111], outline=(90, 90, 90), fill=(225, 225, 225))
    d.text((30, 90), "Submit", fill="black")
    OUT.mkdir(exist_ok=True)
    img.save(OUT / "select-list.png")
    elements = [
        {"id": None, "type": "text", "bbox": [3, 4, 150, 26], "text": "Select Helli from the list and click Submit.",
         "checked": None, "focused": None, "highlighted": False, "subtype": None, "score": 0.96},
        {"id": None, "type": "dropdown", "bbox": [1, 55, 152, 76], "text": "Theodora",
         "checked": None, "focused": False, "highlighted": None, "subtype": None, "score": 0.98},
        {"id": None, "type": "button", "bbox": [1, 80, 98, 112], "text": "Submit",
         "checked": None, "focused": False, "highlighted": None, "subtype": None, "score": 0.99},
    ]
    (OUT / "select-list.elements.json").write_text(json.dumps({"elements": elements}, indent=1) + "\n")


if __name__ == "__main__":
    main()
