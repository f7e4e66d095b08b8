"""Seeded generators of the strings UI screens show: names, MiniWoB-style tokens, words and phrases,
numbers, dates, times, e-mail addresses, URLs, punctuation, single characters and a few CJK words.

Every character of the coverage set (all printable ASCII, the non-ASCII characters UI text often
shows, the CJK strings' characters, plus any ``extra_chars`` the caller found in real labels)
appears regularly: the "sweep" kind walks through a shuffled copy of the set a few characters at a
time, so a reader trained on the output sees each of them, however rare it is in real text.

All output is one line: no leading, trailing or repeated whitespace (the DOM labeller collapses
whitespace, so the label equals the string), at most ``max_len`` characters.
"""

from __future__ import annotations

import random
import string
import unicodedata
from collections.abc import Callable, Mapping

ASCII = "".join(chr(c) for c in range(0x21, 0x7F))  # printable ASCII without the space
NON_ASCII = "•×▲▼–—’“”…éüñß€£°©ëí"
# Chinese and Japanese only: the fallback font here (Droid Sans Fallback) has no Hangul.
CJK_STRINGS = ("中文", "日本語", "确定", "取消", "搜索", "设置", "用户名", "密码", "下一步", "東京", "保存",
               "ログイン", "検索", "はい", "いいえ", "名前", "送信")
CJK_CHARS = "".join(dict.fromkeys("".join(CJK_STRINGS)))
BASE_COVERAGE = ASCII + NON_ASCII + CJK_CHARS

FIRST_NAMES = (
    "Ada", "Adelina", "Alice", "Amy", "Ana", "Ben", "Bobbie", "Carla", "Cheryl", "Chris", "Dale", "Dana",
    "Darcy", "Deb", "Elena", "Emil", "Ezra", "Fay", "Gaby", "Glen", "Hana", "Henryetta", "Ida", "Igor",
    "Ivy", "Jacki", "Jan", "Jo", "José", "Kai", "Kath", "Kym", "Lea", "Liam", "Lou", "Lyn", "Mae", "Marja",
    "Max", "Mia", "Nan", "Ned", "Nils", "Noa", "Odo", "Ola", "Pam", "Pia", "Quinn", "Raul", "Renée", "Rosa",
    "Sal", "Shayla", "Sim", "Tess", "Tod", "Uma", "Una", "Val", "Vic", "Wes", "Xena", "Yuki", "Zoë", "Zora",
)
LAST_NAMES = (
    "Abbott", "Baker", "Brandt", "Chen", "Cruz", "Díaz", "Dunn", "Eaton", "Fisher", "Garza", "Hale", "Hsu",
    "Ibsen", "Jones", "Kaur", "Kim", "Lowe", "Lutz", "McKay", "Moss", "Müller", "Nash", "Novak", "O'Neil",
    "Ortiz", "Park", "Peña", "Quill", "Reyes", "Rossi", "Sato", "Shaw", "Strauß", "Tran", "Vance", "Wolfe",
    "Xu", "Young", "Zeller", "van Dijk", "Smith-Jones", "D'Amico",
)
LOREM = (
    "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod",
    "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim", "ad", "minim", "veniam",
    "quis", "nostrud", "ullamco", "laboris", "nisi", "aliquip", "ex", "ea", "commodo", "duis", "aute", "irure",
    "in", "velit", "esse", "cillum", "fugiat", "nulla", "pariatur", "mauris", "neque", "tula", "blandit",
    "quam", "morbi", "felis", "eget", "urna", "proin", "vitae", "turpis", "nunc", "odio", "etiam", "justo",
    "ligula", "tellus", "arcu", "nibh", "purus", "risus", "massa", "sapien", "lacus", "orci", "donec", "nec",
)
UI_WORDS = (
    "Submit", "Cancel", "OK", "Okay", "Yes", "No", "Next", "Previous", "Back", "Search", "Save", "Delete",
    "Edit", "Close", "Open", "Reply", "Forward", "Send", "Login", "Log in", "Sign up", "Logout", "Home",
    "Settings", "Help", "About", "Profile", "Account", "Password", "Username", "Email", "Name", "Address",
    "City", "Country", "Phone", "Date", "Time", "Start", "End", "Done", "Apply", "Reset", "Clear", "Add",
    "Remove", "Update", "Upload", "Download", "Share", "Like", "Retweet", "Follow", "More", "Less", "Show",
    "Hide", "Menu", "File", "View", "Tools", "Window", "New", "Copy", "Paste", "Undo", "Redo", "Select all",
    "Continue", "Confirm", "Accept", "Decline", "Inbox", "Sent", "Drafts", "Trash", "Archive", "Print",
    "Refresh", "Filter", "Sort", "Options", "Details", "Status", "Total", "Price", "Quantity", "Checkout",
    "Cart", "Terms", "Privacy", "Contact", "First", "Last", "Page", "of", "Section", "Tab", "Item", "Option",
)
PHRASE_TEMPLATES = (
    'Click on the "{w}" button.', "Select {n} and click Submit.", 'Enter "{t}" into the field.',
    "Find the email by {n}.", "Expand the section with {w}.", "Select {w} from the list.",
    "Click the link {w}.", "Type {t} then press Enter.", "Choose {d} as the date.",
    "Forward it to {n}.", "Check {w} and {v}.", "Show {k} results", "{k} items selected",
    "Page {k} of {m}", "Welcome back, {n}!", "Last login: {d}", "Sort by {w}",
)
DOMAINS = ("example.com", "mail.org", "foo.net", "corp.io", "uni.edu", "shop.co.uk", "web.de", "site.fr")
TLDS = ("com", "org", "net", "io", "de", "fr", "edu")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTHS_LONG = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
PUNCT_TEMPLATES = (
    "({w})", "[{w}]", "{{{w}}}", "<{w}>", "{w} & {v}", "#{w}", "@{w}", "{k}% off!", "C:\\{W}\\{v}",
    "~/{w}/{v}", "{w}|{v}", "^_^", "`{w}`", "{w}={k};", "*{w}", "Q&A", "${W}", '"{w}"', "'{w}'", "{w}'s",
    "Yes/No", "{k} + {m} = ?", "x > {k}", "{w}_{v}-{k}", "...", "?!", "{w}?", "{W}!", "{w}: {v}",
    "{w} - {v}", "{w} — {v}", "{w} – {v}", "“{w}”", "‘{w}’", "{w}…", "• {W}", "× {k}", "▲ {k}", "▼ {k}",
    "{k}°C", "© {y} {W}", "{w}, {v}; {u}.", "{w}/{v}/{u}", "{k}:{m}", "{w}@{v}", "a{k}b{m}", "{{k}}",
    "{w} (x{k})", "[{k}/{m}]", "{w}~{v}", "{W} + {V}", "{w} * {v}", "{k}^{m}", "{w}\\n",
)
PUNCT_CHARS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def coverage_set(extra_chars: str = "") -> str:
    """The characters generated text must cover: the base set plus ``extra_chars`` (printable,
    non-whitespace ones only), in a fixed order without repeats."""
    # Whitespace collapses and a lone combining mark joins its neighbour: neither is a character to show.
    extra = "".join(c for c in extra_chars if c.isprintable() and not c.isspace() and not unicodedata.combining(c))
    return "".join(dict.fromkeys(BASE_COVERAGE + extra))


def one_line(text: str, max_len: int) -> str:
    """``text`` with whitespace collapsed, cut to ``max_len`` characters (at a space when one is
    near the end, so words stay whole)."""
    text = " ".join(text.split())
    if len(text) <= max_len:
        return text
    cut = text[:max_len]
    space = cut.rfind(" ")
    if space >= max_len // 2:
        cut = cut[:space]
    return cut.rstrip()


# Which kinds of string each kind of widget shows, with weights. Every profile has some "sweep"
# and "char", so rare characters reach every widget type.
PROFILES: dict[str, dict[str, float]] = {
    "any": {"first_name": 5, "full_name": 4, "last_name": 2, "token": 8, "lorem_word": 7, "ui_word": 8,
            "phrase": 12, "sentence": 5, "number": 7, "date": 4, "time": 3, "email": 3, "url": 3, "phone": 1,
            "punct": 6, "char": 3, "sweep": 10, "cjk": 2},
    "text": {"first_name": 3, "full_name": 3, "token": 5, "lorem_word": 6, "ui_word": 5, "phrase": 16,
             "sentence": 10, "number": 6, "date": 4, "time": 3, "email": 3, "url": 3, "phone": 1, "punct": 7,
             "char": 2, "sweep": 10, "cjk": 2},
    "button": {"ui_word": 30, "lorem_word": 8, "first_name": 4, "token": 6, "phrase": 6, "number": 4,
               "punct": 4, "char": 6, "sweep": 9, "cjk": 2},
    "link": {"lorem_word": 12, "ui_word": 8, "phrase": 14, "first_name": 4, "full_name": 4, "url": 8,
             "email": 5, "token": 4, "number": 2, "punct": 3, "sweep": 7, "cjk": 1},
    "field": {"token": 16, "first_name": 6, "full_name": 5, "lorem_word": 8, "email": 7, "number": 7,
              "date": 6, "time": 3, "phone": 3, "url": 3, "phrase": 5, "punct": 4, "char": 2, "sweep": 9, "cjk": 1},
    "label": {"lorem_word": 14, "first_name": 8, "ui_word": 8, "phrase": 8, "token": 6, "number": 4,
              "punct": 3, "char": 2, "sweep": 7, "cjk": 1},
    "cell": {"number": 14, "first_name": 8, "last_name": 6, "lorem_word": 8, "token": 6, "date": 7, "time": 3,
             "ui_word": 4, "email": 2, "punct": 3, "char": 4, "sweep": 8, "cjk": 1},
    # Where a widget has room for a long line: mostly many-word phrases.
    "long": {"long_phrase": 6, "sentence": 3, "url": 1.5, "email": 1, "full_name": 0.5},
    "row": {"first_name": 8, "full_name": 6, "lorem_word": 10, "ui_word": 6, "phrase": 8, "number": 5,
            "date": 3, "token": 5, "email": 3, "punct": 3, "sweep": 7, "cjk": 1},
}


class StringGen:
    """Seeded source of UI strings; the same seed and ``extra_chars`` give the same strings."""

    def __init__(self, seed: int | str, extra_chars: str = "") -> None:
        self.rng = random.Random(f"synth-strings:{seed}")
        self.coverage = coverage_set(extra_chars)
        self._cycle: list[str] = []
        self._kinds: dict[str, Callable[[], str]] = {
            "first_name": self.first_name, "last_name": self.last_name, "full_name": self.full_name,
            "token": self.token, "lorem_word": self.lorem_word, "ui_word": self.ui_word, "phrase": self.phrase,
            "sentence": self.sentence, "number": self.number, "date": self.date, "time": self.time,
            "email": self.email, "url": self.url, "phone": self.phone, "punct": self.punct, "char": self.char,
            "sweep": self.sweep, "cjk": self.cjk, "long_phrase": self.long_phrase,
        }

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def text(self, profile: str | Mapping[str, float] = "any", max_len: int = 40) -> str:
        """One string for a widget of ``profile`` (a PROFILES name or kind weights), at most ``max_len``."""
        weights = PROFILES[profile] if isinstance(profile, str) else profile
        kinds = list(weights)
        kind = self.rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
        for attempt in range(6):
            # A few tries for a whole string that fits, then one cut to fit ("Share Continu" is rarer).
            raw = " ".join(self.make(kind).split())
            if raw and (len(raw) <= max_len or attempt == 5):
                return one_line(raw, max_len) or self.char()
        return self.char()

    def make(self, kind: str) -> str:
        return self._kinds[kind]()

    # --- the kinds --------------------------------------------------------------------------------
    def first_name(self) -> str:
        return self.rng.choice(FIRST_NAMES)

    def last_name(self) -> str:
        return self.rng.choice(LAST_NAMES)

    def full_name(self) -> str:
        r = self.rng.random()
        if r < 0.7:
            return f"{self.first_name()} {self.last_name()}"
        if r < 0.85:
            return f"{self.last_name()}, {self.first_name()}"
        return f"{self.first_name()[0]}. {self.last_name()}"

    def token(self) -> str:
        """Random letters like MiniWoB's passwords and targets: 'rovphj', 'ZBqbDqc', '7u2i'."""
        n = self.rng.randint(2, 10)
        alphabet = self.rng.choice((string.ascii_lowercase, string.ascii_letters,
                                    string.ascii_lowercase + string.digits, string.ascii_letters + string.digits,
                                    string.ascii_uppercase + string.digits))
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def _case(self, text: str) -> str:
        r = self.rng.random()
        if r < 0.45:
            return text
        if r < 0.75:
            return text[:1].upper() + text[1:]
        if r < 0.9:
            return text.title()
        return text.upper()

    def lorem_word(self) -> str:
        return self._case(self.rng.choice(LOREM))

    def ui_word(self) -> str:
        word = self.rng.choice(UI_WORDS)
        r = self.rng.random()
        return word.upper() if r < 0.08 else word.lower() if r < 0.18 else word

    def phrase(self, n: int | None = None) -> str:
        n = n or self.rng.randint(2, 8)
        vocab = self.rng.choice((LOREM, LOREM, UI_WORDS, LOREM + UI_WORDS))
        words = [self.rng.choice(vocab) for _ in range(n)]
        text = " ".join(words)
        text = text[:1].upper() + text[1:] if self.rng.random() < 0.6 else text
        if self.rng.random() < 0.3:
            text += self.rng.choice(".,:;!?…")
        return text

    def long_phrase(self) -> str:
        return self.phrase(self.rng.randint(5, 9))

    def _fill(self, template: str) -> str:
        return template.format(
            w=self.rng.choice(LOREM), v=self.rng.choice(LOREM), u=self.rng.choice(LOREM),
            W=self.rng.choice(LOREM).capitalize(), V=self.rng.choice(UI_WORDS), n=self.first_name(),
            t=self.token(), d=self.date(), k=self.rng.randint(0, 99), m=self.rng.randint(1, 999),
            y=self.rng.randint(1990, 2030))

    def sentence(self) -> str:
        return self._fill(self.rng.choice(PHRASE_TEMPLATES))

    def number(self) -> str:
        r = self.rng.random()
        mag = 10 ** self.rng.randint(1, 7)
        if r < 0.25:
            return str(self.rng.randrange(mag))
        if r < 0.4:
            return f"{self.rng.uniform(0, mag):.{self.rng.randint(1, 3)}f}"
        if r < 0.5:
            return f"-{self.rng.randrange(1, mag)}" if self.rng.random() < 0.5 else f"-{self.rng.uniform(0, 100):.2f}"
        if r < 0.65:
            return f"{self.rng.randrange(1000, mag * 100 + 1000):,}"
        if r < 0.8:
            sym = self.rng.choice("$$€£")
            amount = f"{self.rng.uniform(0, mag):,.2f}" if self.rng.random() < 0.7 else f"{self.rng.randrange(mag)}"
            return f"-{sym}{amount}" if self.rng.random() < 0.1 else f"{sym}{amount}"
        if r < 0.88:
            return f"{self.rng.randint(0, 100)}%"
        if r < 0.94:
            return self.rng.choice(("+", "#", "No. ", "x", "~")) + str(self.rng.randrange(100))
        return f"{self.rng.randint(1, 9)}/{self.rng.randint(2, 12)}"

    def date(self) -> str:
        y, mo, d = self.rng.randint(1970, 2035), self.rng.randint(1, 12), self.rng.randint(1, 28)
        fmt = self.rng.randrange(7)
        if fmt == 0:
            return f"{mo:02d}/{d:02d}/{y}"
        if fmt == 1:
            return f"{y}-{mo:02d}-{d:02d}"
        if fmt == 2:
            return f"{MONTHS[mo - 1]} {d}, {y}"
        if fmt == 3:
            return f"{d} {MONTHS_LONG[mo - 1]} {y}"
        if fmt == 4:
            return f"{self.rng.choice(DAYS)}, {MONTHS[mo - 1]} {d}"
        if fmt == 5:
            return f"{d:02d}.{mo:02d}.{y}"
        return f"{mo}/{d}/{y % 100:02d}"

    def time(self) -> str:
        h, m, s = self.rng.randint(0, 23), self.rng.randint(0, 59), self.rng.randint(0, 59)
        fmt = self.rng.randrange(5)
        if fmt == 0:
            return f"{h:02d}:{m:02d}"
        if fmt == 1:
            return f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"
        if fmt == 2:
            return f"{h:02d}:{m:02d}:{s:02d}"
        if fmt == 3:
            return f"{(h % 12) or 12}{'am' if h < 12 else 'pm'}"
        return f"{h}:{m:02d}–{(h + 1) % 24}:{m:02d}"

    def email(self) -> str:
        first, last = self.first_name().lower(), self.last_name().lower()
        first, last = _ascii_only(first), _ascii_only(last)
        user = self.rng.choice((first, f"{first}.{last}", f"{first[0]}{last}", f"{first}_{self.rng.randint(1, 99)}",
                                f"{last}+{self.rng.choice(LOREM)}"))
        return f"{user}@{self.rng.choice(DOMAINS)}"

    def url(self) -> str:
        host = self.rng.choice(("www.", "", "app.", "m.")) + self.rng.choice(LOREM) + "." + self.rng.choice(TLDS)
        path = "/".join(self.rng.choice(LOREM) for _ in range(self.rng.randint(0, 2)))
        r = self.rng.random()
        tail = f"?q={self.token()}" if r < 0.2 else f"#{self.rng.choice(LOREM)}" if r < 0.3 else ""
        scheme = self.rng.choice(("https://", "http://", ""))
        return f"{scheme}{host}{'/' + path if path else ''}{tail}"

    def phone(self) -> str:
        a, b, c = self.rng.randint(200, 999), self.rng.randint(100, 999), self.rng.randint(0, 9999)
        return self.rng.choice((f"({a}) {b}-{c:04d}", f"+1 {a}-{b}-{c:04d}", f"{a}.{b}.{c:04d}",
                                f"+44 {a} {b} {c:04d}"))

    def punct(self) -> str:
        if self.rng.random() < 0.75:
            return self._fill(self.rng.choice(PUNCT_TEMPLATES))
        n = self.rng.randint(1, 8)  # a free mix of punctuation and letters
        pool = PUNCT_CHARS + string.ascii_letters + string.digits
        return "".join(self.rng.choice(pool) for _ in range(n))

    def char(self) -> str:
        return self.rng.choice(self.coverage)

    def sweep(self) -> str:
        """The next few characters of the coverage cycle, sometimes between letters: every
        character of the set comes round once per cycle."""
        n = self.rng.randint(1, 8)
        out = []
        for _ in range(n):
            if not self._cycle:
                self._cycle = list(self.coverage)
                self.rng.shuffle(self._cycle)
            out.append(self._cycle.pop())
            if self.rng.random() < 0.15:
                out.append(self.rng.choice(string.ascii_letters + " "))
        return "".join(out)

    def cjk(self) -> str:
        r = self.rng.random()
        word = self.rng.choice(CJK_STRINGS)
        if r < 0.6:
            return word
        if r < 0.8:
            return f"{word} {self.rng.choice(UI_WORDS)}"
        return f"{word}{self.rng.choice(CJK_STRINGS)}"


def _ascii_only(text: str) -> str:
    out = "".join(c for c in text.replace("ß", "ss").replace("é", "e").replace("ë", "e").replace("ü", "u")
                  .replace("ñ", "n").replace("í", "i") if c.isascii() and c.isalnum())
    return out or "user"
