"""Observe: screen pixels → element list (capture, detector, reader, ordering, stable ids)."""
