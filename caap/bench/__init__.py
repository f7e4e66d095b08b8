"""Benchmark environments: a private X display, Chromium over the DevTools pipe, and MiniWoB++ tasks."""
