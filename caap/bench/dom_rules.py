"""Per-task labelling rules for MiniWoB++ pages, where generic DOM rules would label wrongly.

The generic rules (annotate.js) already handle buttons, links, inputs, text areas, selects and
list boxes, checkboxes and radios merged with their labels, text line by line, table cells as
tabled_text, scrollbars, SVG shapes, and visibility (hidden, clipped, covered). What a generic
rule cannot know is listed here, one entry per task family, with the reason.
"""

from __future__ import annotations

from typing import Any

EMAIL_ICONS = [
    # Icons are CSS background images in the email tasks; their meaning is in the class names.
    [".email-actions .star", "important"],
    [".email-actions .trash", "delete"],
    ["#open-search", "search"],
    ["#search-cancel", "back"],
    ["#close-email", "back"],
    ["#close-reply", "back"],
    ["#close-forward", "back"],
    [".email-reply .icon", "reply"],
    [".email-forward .icon", "forward"],
    ["#send-reply", "send"],
    ["#send-forward", "send"],
]

JQUERY_MENU_ROWS = ".ui-menu-item-wrapper"
# jQuery UI's sprite glyphs (click-menu-2 names an item by one, in its instruction and beside the item);
# the submenu caret (.ui-menu-icon) is not among them.
JQUERY_ICONS = [
    [".ui-icon-disk", "save"],
    [".ui-icon-print", "print"],
    [".ui-icon-zoomin", "zoom_in"],
    [".ui-icon-zoomout", "zoom_out"],
    [".ui-icon-seek-start", "previous"],
    [".ui-icon-stop", "stop"],
    [".ui-icon-play", "play"],
    [".ui-icon-seek-end", "next"],
]

FAMILIES: dict[str, dict[str, Any]] = {
    # Inbox rows are list rows (tabled_text); the toolbar glyphs are icons.
    "email-inbox": {"icons": EMAIL_ICONS, "rows": ".email-thread"},
    # The paragraph whose text must be selected by dragging.
    "highlight-text": {"draggable": "#randomText"},
    # Accordion headers are clickable bars: one button each, not a line of text. (jQuery UI also
    # marks the <p> around the Submit button as a header; only the h3 bars are.)
    "click-collapsible": {"item_buttons": "h3.ui-accordion-header"},
    # The dialog's close control is a glyph without text; jQuery UI puts "Close" in a hidden span.
    "click-dialog": {"buttons": [[".ui-dialog-titlebar-close", "×"]]},
    # Spinner arrows are text-less anchors.
    "use-spinner": {"buttons": [[".ui-spinner-up", "▲"], [".ui-spinner-down", "▼"]]},
    # Menu entries (and autocomplete suggestions) are rows; the active one is highlighted.
    "click-menu": {"rows": JQUERY_MENU_ROWS, "skip": ".ui-menu-icon", "icons": JQUERY_ICONS},
    "use-autocomplete": {"rows": JQUERY_MENU_ROWS},
    # Sortable items are list rows; the ⇕ grip is decoration.
    "drag-items": {"rows": "#sortable li", "skip": ".ui-icon"},
    "drag-sort-numbers": {"rows": "#sortable li", "skip": ".ui-icon"},
    # The two boxes are shapes; their one-letter ids ("s", "L") are invisible.
    "drag-box": {"shapes": [["#draggableSmall", "rectangle"], ["#draggableLarge", "rectangle"]]},
    # jQuery UI draws its own grip; the textarea's native one is switched off.
    "resize-textarea": {"handles": ".ui-resizable-se"},
}

# Which family each of the 67 tasks belongs to when its name alone does not say.
ALIASES = {
    "click-collapsible-2": "click-collapsible",
    "click-dialog-2": "click-dialog",
    "click-menu-2": "click-menu",
    "drag-items-grid": "drag-items",
    "highlight-text-2": "highlight-text",
}


def rules_for(task: str, region: tuple[int, int] = (160, 210)) -> dict[str, Any]:
    family = ALIASES.get(task) or next((f for f in FAMILIES if task == f or task.startswith(f + "-")), None)
    # MiniWoB draws in-text links as <span class="alink"> (click-link, click-tab-2, click-collapsible-2):
    # they look and act like links, so they are hyperlinks on every page.
    rules: dict[str, Any] = {"region": list(region), "links": ".alink"}
    if family:
        rules.update(FAMILIES[family])
    return rules
