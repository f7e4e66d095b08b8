"""Reading order: rows top to bottom, then left to right within a row."""

from __future__ import annotations

from collections.abc import Sequence

from caap.elements import Element


def reading_order(elements: Sequence[Element], row_tolerance: int = 5) -> list[Element]:
    """Sort elements the way a person reads the screen.

    Two elements share a row when their vertical centres are within ``row_tolerance`` pixels of the
    row's running mean, so a checkbox and its label that sit a pixel or two apart still read left
    to right. Rows are ordered by their mean centre, elements in a row by their left edge.
    """
    rows: list[list[Element]] = []
    row_centres: list[float] = []
    for element in sorted(elements, key=lambda e: (e.centre[1], e.bbox[0])):
        cy = (element.bbox[1] + element.bbox[3]) / 2.0
        if rows and abs(cy - row_centres[-1]) <= row_tolerance:
            rows[-1].append(element)
            n = len(rows[-1])
            row_centres[-1] += (cy - row_centres[-1]) / n
        else:
            rows.append([element])
            row_centres.append(cy)
    ordered: list[Element] = []
    for row in rows:
        ordered.extend(sorted(row, key=lambda e: (e.bbox[0], e.bbox[1])))
    return ordered
