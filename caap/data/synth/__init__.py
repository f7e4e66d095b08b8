"""Synthetic text screens rendered by the real Chromium, labelled by the MiniWoB DOM labeller.

``strings`` makes the text, ``page`` lays it out as an HTML page of UI widgets, ``generate``
renders, captures and labels the pages into a caap dataset (``caap dataset synth``).
"""
