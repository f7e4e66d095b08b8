"""Datasets: the canonical annotation format, MiniWoB++ auto-annotation, exporters, augmentation, reports."""
