"""Scripted policies: the first 42 tasks (clicks, forms, lists, drags, arithmetic, tables and
shapes), written with the toolkit in ``caap.testing.planner.kit``.

What perception gives for MiniWoB's links is a line of plain text (the links are styled <span>s),
sometimes with words run together; link policies therefore click inside lines of text, at the word's
place estimated from Arial's advance widths, and try the next place when nothing happened.
"""

from __future__ import annotations

import re

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    after_submit,
    answer_field,
    click,
    click_point,
    click_word,
    clicked,
    did,
    done,
    drag_state,
    fail,
    fill,
    fill_form,
    find,
    find_all,
    find_covered,
    finish,
    hold,
    key,
    move,
    norm,
    policy,
    release,
    rest_of_previous_plan,
    same_text,
    screen_text,
    select_all,
    submit_button,
    table_value,
    task_lines,
    then_finish,
    tick,
    type_text,
)


@policy(r'^Click on the "(?P<name>.+)" button\.?$')
def click_button(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, m["name"]):
        return [done()]
    target = find(p, "button", m["name"])
    return finish(target, repr(m["name"]))


@policy(r"^Click the button\.$")
def click_test(p: Prompt, m: re.Match[str]) -> list[Action]:
    if did(p, "click_element"):
        return [done()]
    buttons = find_all(p, "button")
    return finish(find(p, "button", "Click Me!") or (buttons[0] if buttons else None))


@policy(r"^Click button ONE\.$")
def click_test_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    if did(p, "click_element"):
        return [done()]
    return finish(find_covered(p, "button", "ONE", ["TWO"]), "ONE")


@policy(r"^Click button ONE, then click button TWO\.$")
def click_button_sequence(p: Prompt, m: re.Match[str]) -> list[Action]:
    # The two buttons may cover each other: each is found by what shows of its name.
    one, two = find_covered(p, "button", "ONE", ["TWO"]), find_covered(p, "button", "TWO", ["ONE"])
    if two is not None and clicked(p, two):
        return [done()]
    if two is None:
        return [fail("no button TWO on the screen")]
    if one is not None and clicked(p, one):
        return finish(two, "TWO")
    if one is None:
        # ONE clicked already and no longer told apart (its focus ring redrew what showed of it).
        return finish(two, "TWO") if did(p, "click_element") else [fail("no button ONE on the screen")]
    return [click(one), *finish(two, "TWO")]


@policy(r'^Click on the link "(?P<word>.+)"\.$')
def click_link(p: Prompt, m: re.Match[str]) -> list[Action]:
    return click_word(p, m["word"]) or [fail(f"no link {m['word']!r} on the screen")]


@policy(r"^Click on Tab #(?P<n>\d+)\.$")
def click_tab(p: Prompt, m: re.Match[str]) -> list[Action]:
    name = f"Tab #{m['n']}"
    if after_submit(p, name):
        return [done()]
    return finish(find(p, ("hyperlink", "button", "text"), name), name)


@policy(r'^Switch between the tabs to find and click on the link "(?P<word>.+)"\.$')
def click_tab_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    # Try each place the word appears in the tab on show; then show the next tab (the first shows at the
    # start). Tabs read "Tab #N", or just "N" in the -hard variant (2 to 7 tabs).
    def is_tab(e: El | None) -> bool:
        return e is not None and re.fullmatch(r"(Tab #)?\d+", (e.text or "").strip()) is not None

    since = max((i + 1 for i, s in enumerate(p.steps) if s.name == "click_element" and is_tab(s.element)), default=0)
    actions = click_word(p, m["word"], since)
    if actions:
        return actions
    seen = {"Tab #1", "1"} | {(s.element.text or "").strip() for s in p.steps
                         if s.name == "click_element" and s.element is not None and is_tab(s.element)}
    for tab in (e for e in p.elements if is_tab(e)):
        if (tab.text or "").strip() not in seen:
            return [click(tab)]
    return [fail(f"no link {m['word']!r} in any tab")]


@policy(r"^Expand the section below and click submit\.$")
def click_collapsible(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    header = next((e for e in p.elements if e.type == "button" and norm(e.text).startswith("section")), None)
    submit = submit_button(p)
    if header is None:
        return [fail("no section header on the screen")]
    opened = any(e.type == "text" and e.box[1] >= header.box[3] - 1 and (submit is None or e.y < submit.y)
                 for e in p.elements)
    # The Submit button moves down when the section opens: click it on the next screen.
    return finish(submit) if opened else [click(header)]


@policy(r'^Expand the sections below, to find and click on the link "(?P<word>.+)"\.$')
def click_collapsible_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    headers = [e for e in p.elements if e.type == "button" and norm(e.text).startswith("section")]
    since = max((i + 1 for i, s in enumerate(p.steps) if s.element is not None and s.element.type == "button"
                 and norm(s.element.text).startswith("section")), default=0)
    actions = click_word(p, m["word"], since)
    if actions:
        return actions
    visited = {norm(s.element.text) for s in p.steps if s.name == "click_element" and s.element is not None}
    for h in headers:
        if norm(h.text) not in visited:
            return [click(h)]
    return [fail(f"no link {m['word']!r} in any section")]


@policy(r'^Close the dialog box by clicking the "x"\.$')
def click_dialog(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, "×", "x", "X", "close"):
        return [done()]
    return finish(find(p, "button", "×") or find(p, "button", "x") or find(p, "button", "close"), "close")


@policy(r'^Click the button in the dialog box labeled "(?P<label>.+)"\.$')
def click_dialog_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    names = ("×", "x", "close") if m["label"].strip().lower() == "x" else (m["label"],)
    if after_submit(p, *names):
        return [done()]
    target = next((e for n in names for e in find_all(p, "button", n)), None)
    return finish(target, m["label"])


@policy(r'^Enter "(?P<text>.*)" into the text field and press Submit\.$')
def enter_text(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    f = find(p, ("input_field", "text_area"))
    if f is None:
        return [fail("no text field on the screen")]
    return fill_form(p, [(f, m["text"], False)], submit_button(p))


@policy(r'^Type "(?P<text>.*)" in all (?P<case>upper|lower) case letters in the text input and press Submit\.$')
def enter_text_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    f = find(p, ("input_field", "text_area"))
    if f is None:
        return [fail("no text field on the screen")]
    value = m["text"].upper() if m["case"].lower() == "upper" else m["text"].lower()
    return fill_form(p, [(f, value, False)], submit_button(p))


@policy(r'^Enter the username "(?P<user>.*)" and the password "(?P<pw>.*)" into the text fields and press login\.$')
def login_user(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p, "Login", "Log in", "OK"):
        return [done()]
    cancel = find(p, "button", "Cancel")
    if cancel is not None:  # login-user-popup: a popup asks to leave; stay
        return [click(cancel)]
    fields = find_all(p, "input_field")
    if len(fields) < 2:
        return [fail("the username and password fields are not both on the screen")]
    user = _labelled(p, fields, "username") or fields[0]
    pw = _labelled(p, fields, "password") or next(f for f in fields if f is not user)
    return fill_form(p, [(user, m["user"], False), (pw, m["pw"], True)], submit_button(p, "Login", "Log in", "OK"),
                     "Login")


def _labelled(p: Prompt, fields: list[El], label: str) -> El | None:
    """The field right below or beside the text ``label``."""
    lab = find(p, "text", label)
    if lab is None:
        return None
    below = [f for f in fields if f.box[1] >= lab.y - 2]
    return min(below, key=lambda f: (f.box[1] - lab.box[1]) ** 2 + (f.box[0] - lab.box[0]) ** 2, default=None)


@policy(r'^Enter the password "(?P<pw>.*)" into both text fields and press submit\.$')
def enter_password(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    fields = find_all(p, "input_field")
    if len(fields) < 2:
        return [fail("the two password fields are not both on the screen")]
    return fill_form(p, [(fields[0], m["pw"], True), (fields[1], m["pw"], True)], submit_button(p))


@policy(r"^Focus into the textbox\.$")
def focus_text(p: Prompt, m: re.Match[str]) -> list[Action]:
    if did(p, "click_element"):
        return [done()]
    return finish(find(p, ("input_field", "text_area")), "text box")


@policy(r"^Focus into the (?P<n>\d+)(?:st|nd|rd|th) input textbox\.$")
def focus_text_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    if did(p, "click_element"):
        return [done()]
    fields = sorted(find_all(p, ("input_field", "text_area")), key=lambda e: (e.y, e.x))
    n = int(m["n"])
    return finish(fields[n - 1] if 0 < n <= len(fields) else None, f"text box number {n}")


WIDGETS = {"radio": ("radio",), "checkbox": ("checkbox",), "text": ("input_field",), "textarea": ("text_area",),
           "button": ("button",)}


@policy(r'^Click on a "(?P<kind>radio|checkbox|text|textarea|button)" widget\.$')
def click_widget(p: Prompt, m: re.Match[str]) -> list[Action]:
    if did(p, "click_element"):
        return [done()]
    return finish(find(p, WIDGETS[m["kind"].lower()]), f"{m['kind']} widget")


@policy(r"^Select (?P<item>.+) from the list and click Submit\.$")
def choose_list(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    item = m["item"].strip()
    box = find(p, "dropdown")
    if box is None:
        return [fail("no list on the screen")]
    # An open list shows its options as rows below the box (as far as the captured area goes). Typing an
    # option's name and pressing enter picks it without needing to see it.
    rows = [e for e in find_all(p, "tabled_text") if e.box[1] >= box.box[1]]
    last = p.steps[-1] if p.steps else None
    if not rows:
        if same_text(box.text, item):
            return finish(submit_button(p))
        return [click(box), type_text(item), key("enter"), *then_finish(submit_button(p))]
    if last is not None and last.name == "type_text" and same_text(last.args.get("string_to_type"), item):
        return [key("enter")]
    if did(p, "type_text"):  # typing picked another option (one that starts the same way): click the row
        target = find(p, "tabled_text", item)
        if target is not None and not clicked(p, target):
            return [click(target)]
    return [type_text(item), key("enter")]


SYNONYMS = [
    # Words a reader would call similar (what a language model knows; these cover the task's vocabulary).
    ["big", "large", "huge", "enormous", "gigantic"], ["small", "tiny", "little", "mini", "petite"],
    ["red", "scarlet", "crimson", "vermillion"], ["happy", "cheerful", "joyful", "gleeful", "delighted"],
    ["sad", "unhappy", "sorrowful", "miserable", "tragic"], ["angry", "mad", "furious", "irritated"],
    ["evil", "wicked", "immoral", "sinful", "corrupt", "depraved"], ["wrong", "incorrect", "mistaken", "erroneous"],
    ["real", "genuine", "actual"], ["strange", "odd", "peculiar", "unusual", "weird"],
    ["stop", "cease", "halt", "end", "finish"],
    ["scared", "terrified", "panicked", "fearful", "frightened", "afraid"],
    ["quiet", "calm", "peaceful", "serene", "mild"], ["old", "aged", "archaic"], ["love", "like", "adore", "favor"],
    ["kill", "murder", "assassinate"], ["keep", "retain", "preserve", "sustain", "maintain"],
    ["hide", "conceal", "camouflage"], ["hate", "despise", "loathe", "detest", "dislike"],
    ["funny", "humorous", "amusing", "comical", "laughable"], ["fat", "fleshy", "plump", "chubby"],
    ["stupid", "dumb", "dull", "unwise"], ["delicious", "savory", "delectable", "appetizing"],
    ["cut", "slice", "carve", "chop"], ["brave", "courageous", "fearless"], ["begin", "start", "initiate", "launch"],
    ["answer", "reply", "response"], ["television", "televisions", "tv", "tvs"], ["house", "home", "houses", "homes"],
    ["fire", "flame", "fires", "flames"], ["pig", "pork", "swine"], ["rabbit", "rabbits", "bunny", "bunnies"],
    ["car", "cars", "automobile", "automobiles", "vehicle", "vehicles"], ["water"],
]


def similar(a: str, b: str) -> bool:
    a, b = norm(a), norm(b)
    return a == b or any(a in group and b in group for group in SYNONYMS)


def _names(spec: str) -> list[str]:
    spec = spec.strip()
    return [] if spec.lower() == "nothing" else [n.strip() for n in spec.split(",") if n.strip()]


@policy(r"^Select words similar to (?P<words>.+) and click Submit\.$")
def click_checkboxes_soft(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    words = _names(m["words"])
    return tick(p, lambda e: any(similar(e.text or "", w) for w in words))


@policy(r"^Select (?!words similar to )(?P<names>(?:(?! from the ).)+) and click Submit\.$")
def select_and_submit(p: Prompt, m: re.Match[str]) -> list[Action]:
    """click-checkboxes (and -large, -transfer) and click-option share this task text."""
    if after_submit(p):
        return [done()]
    names = _names(m["names"])
    radios = find_all(p, "radio")
    if radios and not find_all(p, "checkbox"):
        target = find(p, "radio", names[0]) if len(names) == 1 else None
        if target is None:
            return [fail(f"no option {m['names']!r} on the screen")]
        return ([] if target.checked else [click(target)]) + finish(submit_button(p))
    boxes = find_all(p, "checkbox")
    if not boxes:
        return [fail("no checkboxes or options on the screen")]
    exact = {(e.text or "").strip() for e in boxes}

    def want(e: El) -> bool:
        t = (e.text or "").strip()
        return t in names or any(norm(t) == norm(n) and n not in exact for n in names)

    return tick(p, want)


# The world's countries and territories, as a language model knows them: for an item the suggestions on
# show do not include.
_COUNTRIES = (
    "Afghanistan|Aland Islands|Albania|Algeria|American Samoa|Andorra|Angola|Anguilla|Antarctica|"
    "Antigua and Barbuda|Argentina|Armenia|Aruba|Australia|Austria|Azerbaijan|Bahamas|Bahrain|Bangladesh|"
    "Barbados|Belarus|Belgium|Belize|Benin|Bermuda|Bhutan|Bolivia|Bonaire|Bosnia and Herzegovina|Botswana|"
    "Bouvet Island|Brazil|Brunei Darussalam|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|"
    "Cayman Islands|Central African Republic|Chad|Chile|China|Christmas Island|Cocos Islands|Colombia|Comoros|"
    "Congo|Congo|Cook Islands|Costa Rica|Croatia|Cuba|Cyprus|Czech Republic|Denmark|Djibouti|Dominica|"
    "Dominican Republic|Ecuador|Egypt|El Salvador|Equatorial Guinea|Eritrea|Estonia|Ethiopia|Falkland Islands|"
    "Faroe Islands|Fiji|Finland|France|French Guiana|French Polynesia|Gabon|Gambia|Georgia|Germany|Ghana|"
    "Gibraltar|Greece|Greenland|Grenada|Guadeloupe|Guam|Guatemala|Guernsey|Guinea|Guinea-Bissau|Guyana|Haiti|"
    "Heard Island and McDonald Islands|Vatican City State|Honduras|Hong Kong|Hungary|Iceland|India|Indonesia|"
    "Iran|Iraq|Ireland|Isle of Man|Israel|Italy|Jamaica|Japan|Jersey|Jordan|Kazakhstan|Kenya|Kiribati|Korea|"
    "Kuwait|Kyrgyzstan|Latvia|Lebanon|Lesotho|Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Macao|Macedonia|"
    "Madagascar|Malawi|Malaysia|Maldives|Mali|Malta|Marshall Islands|Martinique|Mauritania|Mauritius|Mayotte|"
    "Mexico|Micronesia|Moldova|Monaco|Mongolia|Montenegro|Montserrat|Morocco|Mozambique|Myanmar|Namibia|Nauru|"
    "Nepal|Netherlands|New Caledonia|New Zealand|Nicaragua|Niger|Nigeria|Niue|Norfolk Island|"
    "Northern Mariana Islands|Norway|Oman|Pakistan|Palau|Panama|Papua New Guinea|Paraguay|Peru|Philippines|"
    "Pitcairn|Poland|Portugal|Puerto Rico|Qatar|Reunion|Romania|Russian Federation|Rwanda|Saint Helena|"
    "Saint Lucia|Saint Martin|Samoa|San Marino|Sao Tome and Principe|Saudi Arabia|Senegal|Serbia|Seychelles|"
    "Sierra Leone|Singapore|Sint Maarten|Slovakia|Slovenia|Solomon Islands|Somalia|South Africa|South Sudan|"
    "Spain|Sri Lanka|Sudan|Suriname|Svalbard and Jan Mayen|Swaziland|Sweden|Switzerland|Syrian Arab Republic|"
    "Taiwan|Tajikistan|Tanzania|Thailand|Timor-Leste|Togo|Tokelau|Tonga|Trinidad and Tobago|Tunisia|Turkey|"
    "Turkmenistan|Turks and Caicos Islands|Tuvalu|Uganda|Ukraine|United Arab Emirates|United Kingdom|"
    "United States|Uruguay|Uzbekistan|Vanuatu|Venezuela|Western Sahara|Yemen|Zambia|Zimbabwe"
)
COUNTRIES = tuple(_COUNTRIES.split("|"))


@policy(r'^Enter an item that starts with "(?P<start>.+?)"(?: and ends with "(?P<end>.+?)")?\.$')
def use_autocomplete(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    start, end = m["start"], m["end"]

    def fits(s: str | None) -> bool:
        s = (s or "").strip()
        return bool(s) and s.startswith(start) and (end is None or s.endswith(end))

    f = find(p, "input_field")
    submit = submit_button(p)
    if f is None:
        return [fail("no text field on the screen")]
    value = (f.text or "").strip()
    typed = value.startswith(start.strip()) and f.focused is not False
    # The suggestions: rows below the field (a long one wraps onto a second row). Rows on show before
    # anything was typed are left over from before: type first.
    menu = sorted((e for e in p.elements if e.type == "tabled_text" and e.box[1] >= f.box[3] - 2), key=lambda e: e.y)
    picked = any(s.name == "click_element" and s.element is not None and s.element.type == "tabled_text"
                 for s in p.steps)
    if fits(value) or (not menu and picked and value.startswith(start.strip())):  # a long name shows in part
        if submit is not None:
            return finish(submit)
        # The suggestions cover the Submit button: pick the one that fits (the list closes), or wait for the
        # suggestions to catch up with what was typed.
        row = next((e for e in menu if fits(e.text)), None)
        last = p.steps[-1] if p.steps else None
        if row is not None:
            return [click(row)]
        return [("wait", {"seconds": 1.0})] if last is None or last.name != "wait" else [key("escape")]
    if not typed:
        return fill(f, start)
    for i, row in enumerate(menu):
        wrapped = i + 1 < len(menu) and menu[i + 1].box[1] - row.box[3] <= 1  # the next row goes on with this one
        joined = f"{row.text} {menu[i + 1].text}" if wrapped else ""
        if (fits(row.text) or (joined and fits(joined))) and not clicked(p, row):
            return [click(row), *then_finish(submit)]
    last = p.steps[-1] if p.steps else None
    if not menu and (last is None or last.name != "wait"):
        # The suggestions show a moment after typing stops: wait for them.
        return [("wait", {"seconds": 1.0})]
    # None on show fits (the list goes on below the captured area): type a whole name that fits.
    known = next((c for c in COUNTRIES if fits(c)), None)
    if known is not None and value != known:
        return [select_all(), type_text(known), *then_finish(submit)]
    if menu:
        return [key("down")]  # the field shows the suggestion in focus
    return [key("backspace"), type_text(start[-1:])]  # type again to bring the suggestions back


@policy(r"^Drag the smaller box so that it is completely inside the larger box\.$")
def drag_box(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    shapes = sorted(find_all(p, "shape"), key=lambda e: e.area)
    submit = submit_button(p)
    state = drag_state(p)
    if state == "holding":
        rest = rest_of_previous_plan(p)
        if rest and rest[0][0] in ("drag_mouse_move", "drag_mouse_release"):
            return rest
        big = shapes[-1] if shapes else None
        return ([move(big.x, big.y)] if big else []) + [release(), *then_finish(submit)]
    if len(shapes) < 2:
        if state == "released":  # the small box is hidden under the large one: done
            return finish(submit)
        return [fail("the two boxes are not both on the screen")]
    small, big = shapes[0], shapes[-1]
    if state == "released" and small.inside(big, margin=1):
        return finish(submit)
    dx, dy = big.x - small.x, big.y - small.y
    step = max(abs(dx), abs(dy), 1)
    return [hold(small.x, small.y), move(small.x + round(4 * dx / step), small.y + round(4 * dy / step)),
            move(big.x, big.y), release(), *then_finish(submit)]


_ORDINAL = r"(?P<n>\d+)(?:st|nd|rd|th)"


@policy(rf"^Drag (?P<name>.+?) (?P<where>to the top|to the bottom|down by one position|up by one position"
        rf"|to the {_ORDINAL} position)\.$")
def drag_items(p: Prompt, m: re.Match[str]) -> list[Action]:
    state = drag_state(p)
    if state == "released":
        return [done()]
    if state == "holding":
        rest = rest_of_previous_plan(p)
        if rest and rest[0][0] in ("drag_mouse_move", "drag_mouse_release"):
            return rest
        return [release(), done()]
    rows = sorted(find_all(p, ("tabled_text", "text", "draggable_text")), key=lambda e: e.y)
    rows = [e for e in rows if e.type == "tabled_text"] or rows
    item = find(p, ("tabled_text", "draggable_text"), m["name"])
    if item is None or item not in rows:
        return [fail(f"no item {m['name']!r} on the screen")]
    i = rows.index(item) + 1
    where = m["where"].lower()
    target = {"to the top": 1, "to the bottom": len(rows), "down by one position": i + 1,
              "up by one position": i - 1}.get(where) or int(m["n"])
    if not 1 <= target <= len(rows) or target == i:
        return [fail(f"cannot move {m['name']!r} from position {i} to {target}")]
    goal = rows[target - 1]
    sign = 1 if target > i else -1
    x = item.x
    path = [hold(x, item.y), move(x, item.y + 5 * sign)]
    for row in rows[i:target] if sign > 0 else reversed(rows[target - 1:i - 1]):
        path.append(move(x, row.y + 3 * sign))
    path.append(move(x, goal.y + 6 * sign))
    return [*path, release(), done()]


SEARCH_LABELS = {
    "genre": ("genre", "movie genre"), "name": ("director", "director name"), "year": ("year", "released date"),
}


@policy(r"^Search for (?P<genre>.+?) movies directed by (?P<name>.+?) from year (?P<year>\d+)\.$")
def movie_search(p: Prompt, m: re.Match[str]) -> list[Action]:
    """multi-layouts and multi-orderings: three labelled fields in one of several layouts, then the button."""
    names = ("Submit", "Search", "Go!")
    if after_submit(p, *names):
        return [done()]
    fields = find_all(p, "input_field")
    skip = {e.id for e in task_lines(p)}
    labels = {}
    for e in p.elements:
        if e.id in skip or e.type not in ("text", "tabled_text"):
            continue
        for what, words in SEARCH_LABELS.items():
            if norm(e.text).rstrip(":").strip() in words:
                labels[what] = e
    if len(fields) < 3 or len(labels) < 3:
        return [fail("the genre, director and year fields are not all on the screen")]

    def beside(lab: El, f: El) -> bool:  # on one line, the label to the left
        return min(lab.box[3], f.box[3]) - max(lab.box[1], f.box[1]) > 0 and lab.box[2] <= f.box[0] + 2

    # Labels sit left of their fields, or all above them, or (a layout with white labels under the fields) all
    # below: which one shows in what comes first from the top.
    if any(beside(lab, f) for lab in labels.values() for f in fields):
        def distance(lab: El, f: El) -> float:
            return abs(lab.y - f.y) * 4 + max(0, f.box[0] - lab.box[2])
    else:
        below = min(fields, key=lambda e: e.box[1]).box[1] < min(labels.values(), key=lambda e: e.box[1]).box[1]

        def distance(lab: El, f: El) -> float:
            gap = (lab.box[1] - f.box[3]) if below else (f.box[1] - lab.box[3])
            return gap if gap >= -2 else 1e6

    values = {"genre": m["genre"], "name": m["name"], "year": m["year"]}
    chosen: list[tuple[El, str, bool]] = []
    free = list(fields)
    for what, lab in sorted(labels.items(), key=lambda kv: kv[1].y):
        f = min(free, key=lambda e: distance(lab, e))
        free.remove(f)
        chosen.append((f, values[what], False))
    chosen.sort(key=lambda t: (t[0].y, t[0].x))
    submit = next((e for n in names for e in find_all(p, ("button", "text", "hyperlink"), n) if e.id not in skip), None)
    return fill_form(p, chosen, submit, "Search")


@policy(r"^Solve the math problem and type your answer into the textbox\. Press submit when done\.$")
def simple_arithmetic(p: Prompt, m: re.Match[str]) -> list[Action]:
    for e in screen_text(p):
        q = re.fullmatch(r"(-?\d+)\s*([-+x×*])\s*(-?\d+)\s*=?", (e.text or "").strip())
        if q:
            a, op, b = int(q[1]), q[2], int(q[3])
            return answer_field(p, str(a + b if op == "+" else a - b if op == "-" else a * b))
    return [fail("no math problem on the screen")]


@policy(r"^Solve for x and type your answer into the textbox\. Press Submit when done\.$")
def simple_algebra(p: Prompt, m: re.Match[str]) -> list[Action]:
    for e in screen_text(p):
        text = (e.text or "").replace(" ", "")
        q = re.fullmatch(r"x([-+])(\d+)=(-?\d+)", text)
        if q:  # x + a = c  or  x - a = c
            a, c = int(q[2]), int(q[3])
            return answer_field(p, str(c - a if q[1] == "+" else c + a))
        q = re.fullmatch(r"(-?\d+)([-+])x=(-?\d+)", text)
        if q:  # a + x = c  or  a - x = c
            a, c = int(q[1]), int(q[3])
            return answer_field(p, str(c - a if q[2] == "+" else a - c))
    return [fail("no equation on the screen")]


@policy(r"^Enter the value of (?P<key>.+?) into the text field and press Submit\.$")
def read_table(p: Prompt, m: re.Match[str]) -> list[Action]:
    value = table_value(find_all(p, ("tabled_text", "text")), m["key"])
    if value is None:
        return [fail(f"no row {m['key']!r} in the table")]
    if not value:
        return [fail(f"no value next to {m['key']!r}")]
    return answer_field(p, value)


@policy(r'^Find the (?P<n>\d+)(?:st|nd|rd|th) word in the paragraph, type that into the textbox and press "Submit"\.$')
def find_word(p: Prompt, m: re.Match[str]) -> list[Action]:
    f = find(p, ("input_field", "text_area"))
    lines = [e for e in screen_text(p) if f is None or e.y < f.box[1]]
    words = " ".join(e.text or "" for e in lines).split()
    n = int(m["n"])
    if not 0 < n <= len(words):
        return [fail(f"the paragraph has no word number {n}")]
    return answer_field(p, re.sub(r"[^A-Za-z0-9]", "", words[n - 1]))


@policy(r"^Click the button that best describes the figure below\.$")
def identify_shape(p: Prompt, m: re.Match[str]) -> list[Action]:
    if did(p, "click_element"):
        return [done()]
    buttons = find_all(p, "button")
    top = min((b.box[1] for b in buttons), default=10**6)
    figure = [e for e in p.elements if e.box[3] <= top + 2 and (e.type == "shape" or e in screen_text(p))]
    for e in figure:
        if e.type == "shape" and e.subtype in ("circle", "rectangle", "triangle"):
            return finish(find(p, "button", e.subtype.capitalize()), e.subtype)
        t = (e.text or "").strip()
        if len(t) == 1 and t.isdigit():
            return finish(find(p, "button", "Number"), "Number")
        if len(t) == 1 and t.isalpha():
            return finish(find(p, "button", "Letter"), "Letter")
    return [fail("no figure on the screen")]


@policy(r"^Enter (?P<month>\d\d)/(?P<day>\d\d)/(?P<year>\d{4}) as the date and hit submit\.$")
def enter_date(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    f = find(p, "input_field")
    if f is None:
        return [fail("no date field on the screen")]
    shown = (f.text or "").strip()
    if shown in (f"{m['year']}-{m['month']}-{m['day']}", f"{m['month']}/{m['day']}/{m['year']}"):
        return finish(submit_button(p))
    # The field is split into month, day and year: start typing in the month part (its left end).
    return [click_point(f.box[0] + 8, f.y), type_text(m["month"] + m["day"] + m["year"])]


# The tasks the policies above solve.
TASKS: tuple[str, ...] = (
    "click-button", "click-link", "click-checkboxes", "click-option", "enter-text", "login-user", "choose-list",
    "click-tab", "click-collapsible", "click-dialog", "use-autocomplete", "drag-box", "drag-items", "focus-text",
    "enter-password", "click-button-sequence", "click-test", "click-test-2", "click-widget", "enter-text-2",
    "click-checkboxes-soft", "click-checkboxes-transfer", "click-dialog-2", "click-collapsible-2", "click-tab-2",
    "focus-text-2", "enter-text-dynamic", "login-user-popup", "multi-layouts", "multi-orderings",
    "simple-arithmetic", "simple-algebra", "read-table", "find-word", "identify-shape", "enter-date",
    "click-checkboxes-large", "click-tab-2-easy", "click-tab-2-medium", "click-tab-2-hard", "click-test-transfer",
    "unicode-test",
)
