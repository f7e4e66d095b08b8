"""A Qt 5 window of real widgets in random states, for the desktop training sets.

Run by the system Python (Debian's ``python3-pyqt5``), never imported by caap:
``python3 qt5.py --page PAGE --seed N [-style STYLE]``. Qt's example programs among the training
apps hold few checkable controls: tool buttons held down, checkable push buttons, check boxes in
their third state, tree items with check boxes, checkable group boxes. This window draws them, in
the style the generator picks, every label, state and arrangement drawn from the seed, with the
keyboard focus on one control, so the labels AT-SPI gives describe what is drawn.

Pages: ``tools`` (tool bars and a tree beside an editor pane), ``forms`` (tabs of form pages and a
list).
"""

from __future__ import annotations

import argparse
import random
import sys

from PyQt5.QtCore import QSize, Qt, QTimer
from PyQt5.QtGui import QIcon
from PyQt5.QtWidgets import (
    QAbstractButton,
    QAction,
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSlider,
    QSpinBox,
    QSplitter,
    QStyle,
    QTabWidget,
    QToolBar,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from words import ACTIONS, FORMATS, NAMES, OPTIONS, WORDS  # beside this file

# Icons every Qt style draws without an icon theme.
ICONS = ("SP_DialogOpenButton", "SP_DialogSaveButton", "SP_FileIcon", "SP_DirIcon", "SP_TrashIcon",
         "SP_BrowserReload", "SP_BrowserStop", "SP_ArrowBack", "SP_ArrowForward", "SP_ArrowUp",
         "SP_MediaPlay", "SP_MediaPause", "SP_MediaStop", "SP_MediaVolume", "SP_FileDialogDetailedView",
         "SP_FileDialogListView", "SP_DialogApplyButton", "SP_DialogHelpButton", "SP_ComputerIcon")


class Showcase:
    def __init__(self, page: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.focusable: list[QWidget] = []
        self.window = QMainWindow()
        self.window.setWindowTitle(f"{self.rng.choice(WORDS)} — caap showcase")
        self.window.resize(self.rng.randint(640, 900), self.rng.randint(440, 640))
        for _ in range(self.rng.choice((0, 1, 1, 2))):
            self.window.addToolBar(self.toolbar())
        body = {"tools": self.tools_page, "forms": self.forms_page}[page]()
        self.window.setCentralWidget(body)
        self.window.show()
        QTimer.singleShot(0, self.focus_one)

    # --- pieces ------------------------------------------------------------------------------------
    def words(self, pool: tuple[str, ...], n: int) -> list[str]:
        return self.rng.sample(pool, min(n, len(pool)))

    def icon(self) -> QIcon:
        style = self.window.style()
        return style.standardIcon(getattr(QStyle, self.rng.choice(ICONS)))

    def toolbar(self) -> QToolBar:
        """Tool buttons, some checkable and held down; a group of them kept exclusive (one held down)."""
        bar = QToolBar(self.rng.choice(WORDS))
        bar.setMovable(False)
        bar.setToolButtonStyle(self.rng.choice((Qt.ToolButtonIconOnly, Qt.ToolButtonTextBesideIcon,
                                                Qt.ToolButtonTextOnly, Qt.ToolButtonTextUnderIcon)))
        bar.setIconSize(QSize(*(self.rng.choice((16, 22, 24)),) * 2))
        exclusive = self.rng.random() < 0.4
        group = QButtonGroup(bar) if exclusive else None
        down = self.rng.randrange(3)
        for k, label in enumerate(self.words(ACTIONS + FORMATS, self.rng.randint(3, 7))):
            action = QAction(self.icon(), label, bar)
            checkable = (exclusive and k < 3) or self.rng.random() < 0.45
            action.setCheckable(checkable)
            if checkable:
                action.setChecked(k == down if exclusive and k < 3 else self.rng.random() < 0.5)
            action.setEnabled(self.rng.random() > 0.1)
            bar.addAction(action)
            if group is not None and k < 3:
                button = bar.widgetForAction(action)
                if isinstance(button, QAbstractButton):
                    group.addButton(button)
            if self.rng.random() < 0.15:
                bar.addSeparator()
        return bar

    def row(self, buttons: list[QAbstractButton], spacing: int) -> QWidget:
        """``buttons`` side by side, left-aligned; each takes the focus."""
        box = QWidget()
        layout = QHBoxLayout(box)
        layout.setSpacing(spacing)
        for button in buttons:
            layout.addWidget(button)
            self.focusable.append(button)
        layout.addStretch(1)
        return box

    def tool_buttons(self) -> QWidget:
        """Free-standing tool buttons with text (auto-raised or not), some held down."""
        spacing = self.rng.choice((0, 2, 6))
        raised = self.rng.random() < 0.5
        buttons: list[QAbstractButton] = []
        for label in self.words(FORMATS, self.rng.randint(2, 5)):
            button = QToolButton()
            button.setText(label)
            if self.rng.random() < 0.5:
                button.setIcon(self.icon())
                button.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
            button.setCheckable(True)
            button.setChecked(self.rng.random() < 0.45)
            button.setAutoRaise(raised)
            buttons.append(button)
        return self.row(buttons, spacing)

    def push_toggles(self) -> QWidget:
        """Checkable push buttons: free, or an exclusive group with one held down."""
        spacing = self.rng.choice((0, 6))
        exclusive = self.rng.random() < 0.5
        labels = self.words(FORMATS, self.rng.randint(2, 4))
        down = self.rng.randrange(len(labels))
        buttons: list[QAbstractButton] = []
        for k, label in enumerate(labels):
            button = QPushButton(label)
            button.setCheckable(True)
            button.setChecked(k == down if exclusive else self.rng.random() < 0.4)
            buttons.append(button)
        box = self.row(buttons, spacing)
        group = QButtonGroup(box)
        group.setExclusive(exclusive)
        for button in buttons:
            group.addButton(button)
        return box

    def tree(self) -> QTreeWidget:
        """A tree with some branches open, check boxes on its rows (some partly checked) or not."""
        tree = QTreeWidget()
        checks = self.rng.random() < 0.6
        columns = [self.rng.choice(("Name", "Item", "Section"))] + (["Owner"] if self.rng.random() < 0.5 else [])
        tree.setHeaderLabels(columns)
        tree.setHeaderHidden(self.rng.random() < 0.3)

        def item(parent: QTreeWidget | QTreeWidgetItem, text: str) -> QTreeWidgetItem:
            node = QTreeWidgetItem(parent, [text, *([self.rng.choice(NAMES)] if len(columns) > 1 else [])])
            if checks:
                node.setCheckState(0, self.rng.choice((Qt.Checked, Qt.Unchecked, Qt.Unchecked, Qt.PartiallyChecked)))
            return node

        for top in self.words(WORDS, self.rng.randint(4, 8)):
            parent = item(tree, top)
            for child in self.words(WORDS + NAMES, self.rng.randint(0, 4)):
                mid = item(parent, child)
                for leaf in self.words(NAMES, self.rng.randint(0, 2)):
                    item(mid, leaf)
            parent.setExpanded(self.rng.random() < 0.5)
        if self.rng.random() < 0.7:
            tree.setCurrentItem(tree.topLevelItem(self.rng.randrange(tree.topLevelItemCount())))
        self.focusable.append(tree)
        return tree

    def option_rows(self, n: int) -> QWidget:
        box = QWidget()
        column = QVBoxLayout(box)
        for text in self.words(OPTIONS, n):
            check = QCheckBox(text)
            if self.rng.random() < 0.15:
                check.setTristate(True)
                check.setCheckState(Qt.PartiallyChecked)
            else:
                check.setChecked(self.rng.random() < 0.5)
            check.setEnabled(self.rng.random() > 0.1)
            column.addWidget(check)
            self.focusable.append(check)
        return box

    def radios(self) -> QGroupBox:
        """Radio buttons in a group box, which may itself be checkable (a check box in its title)."""
        group = QGroupBox(self.rng.choice(WORDS))
        layout = QVBoxLayout(group) if self.rng.random() < 0.6 else QHBoxLayout(group)
        labels = self.words(FORMATS, self.rng.randint(2, 4))
        on = self.rng.randrange(len(labels))
        for k, label in enumerate(labels):
            radio = QRadioButton(label)
            radio.setChecked(k == on)
            layout.addWidget(radio)
            self.focusable.append(radio)
        if self.rng.random() < 0.35:
            group.setCheckable(True)
            group.setChecked(self.rng.random() < 0.6)
        return group

    def levels(self) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.choice(("slider", "spin", "progress"))
            if kind == "slider":
                widget: QWidget = QSlider(Qt.Horizontal)
                widget.setRange(0, 100)
                widget.setValue(self.rng.randint(0, 100))
                widget.setMinimumWidth(160)
                self.focusable.append(widget)
            elif kind == "spin":
                widget = QSpinBox()
                widget.setRange(0, 999)
                widget.setValue(self.rng.randint(0, 999))
                self.focusable.append(widget)
            else:
                widget = QProgressBar()
                widget.setValue(self.rng.randint(0, 100))
                widget.setTextVisible(self.rng.random() < 0.6)
            form.addRow(self.rng.choice(WORDS), widget)
        return box

    def fields(self, n: int) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        for _ in range(n):
            label = self.rng.choice(("Name", "Server", "Folder", "Title", "E-mail", "City", "Owner", "Tag", "Port"))
            if self.rng.random() < 0.3:
                combo = QComboBox()
                combo.addItems(self.words(WORDS, 4))
                combo.setCurrentIndex(self.rng.randrange(4))
                form.addRow(label, combo)
                self.focusable.append(combo)
            else:
                entry = QLineEdit()
                if self.rng.random() < 0.7:
                    entry.setText(self.rng.choice(NAMES + WORDS))
                else:
                    entry.setPlaceholderText(self.rng.choice(("Type here", "Optional", "Search…")))
                entry.setEnabled(self.rng.random() > 0.1)
                form.addRow(label, entry)
                self.focusable.append(entry)
        return box

    def listing(self) -> QListWidget:
        listing = QListWidget()
        listing.addItems(self.words(NAMES, self.rng.randint(3, 7)))
        listing.setCurrentRow(self.rng.randrange(3))
        self.focusable.append(listing)
        return listing

    def buttons(self) -> QWidget:
        buttons: list[QAbstractButton] = []
        for label in self.words(ACTIONS, self.rng.randint(1, 3)):
            button = QPushButton(label)
            button.setEnabled(self.rng.random() > 0.15)
            buttons.append(button)
        return self.row(buttons, 6)

    def column(self, makers: list) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        self.rng.shuffle(makers)
        for make in makers:
            layout.addWidget(make())
        layout.addStretch(1)
        return box

    # --- pages -------------------------------------------------------------------------------------
    def tools_page(self) -> QWidget:
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.tree())
        split.addWidget(self.column([self.tool_buttons, self.push_toggles, lambda: self.option_rows(3),
                                     self.buttons, lambda: self.fields(2)]))
        split.setSizes([self.rng.randint(180, 280), 500])
        return split

    def forms_page(self) -> QWidget:
        tabs = QTabWidget()
        for title in self.words(WORDS, self.rng.randint(2, 4)):
            tabs.addTab(self.column([lambda: self.fields(self.rng.randint(2, 4)), lambda: self.option_rows(2),
                                     self.buttons, self.radios, self.tool_buttons]), title)
        tabs.setCurrentIndex(self.rng.randrange(tabs.count()))
        box = QWidget()
        row = QHBoxLayout(box)
        row.addWidget(tabs, 3)
        row.addWidget(self.column([self.listing, self.levels, self.push_toggles]), 2)
        return box

    def focus_one(self) -> None:
        """Focus one control that shows and takes the focus, as after a key press."""
        shown = [w for w in self.focusable if w.isVisible() and w.isEnabled()]
        if shown:
            self.rng.choice(shown).setFocus(Qt.TabFocusReason)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", choices=("tools", "forms"), default="tools")
    parser.add_argument("--seed", type=int, default=0)
    args, qt_args = parser.parse_known_args()  # -style and the rest are Qt's
    app = QApplication([sys.argv[0], *qt_args])
    showcase = Showcase(args.page, args.seed)
    sys.exit(app.exec_() if showcase else 1)


if __name__ == "__main__":
    main()
