// DOM → caap element labels for a MiniWoB++ page, at DATA-GENERATION time only (the agent never
// reads the DOM). Evaluated in the page as `(SCRIPT)(rules)`; returns page-pixel boxes clipped to
// the task region, for elements a person can actually see: not hidden, not scrolled away, not
// covered by something drawn on top.
//
// rules (from caap/bench/dom_rules.py):
//   region: [w, h]                      the task area at page (0, 0)
//   draggable: CSS selector             text inside it is draggable_text (highlight-text tasks)
//   icons: [[selector, subtype]]        image-like elements that are icons of the taxonomy
//   shapes: [[selector, subtype]]       HTML elements that are shapes (e.g. drag-box's boxes)
//   buttons: [[selector, text]]         clickable widgets without text of their own (dialog close, spinner arrows)
//   item_buttons: CSS selector          elements whose whole text is one clickable button (accordion headers)
//   rows: CSS selector                  containers whose text is tabled_text (menu items, drag items)
//   handles: CSS selector               resize handles drawn by the page (jQuery UI resizable)
//   skip: CSS selector                  subtrees never labelled (decorations)
//   links: CSS selector                 non-<a> elements drawn and used as links (MiniWoB's span.alink)
// Opt-in rules for generated widget UIs (caap.data.synth.ui); MiniWoB's rules never set them, so its
// labels do not change:
//   scale: number                       device pixels per CSS pixel: boxes come back in captured-image
//                                       pixels (converted once, in clip)
//   widgets: true                       ARIA and HTML widgets: input[type=range]/role=slider -> slider,
//                                       role=tab -> tab, role=treeitem/<summary> -> tree_item (expanded),
//                                       <progress>/role=progressbar -> progress_bar, role=scrollbar
//                                       (a drawn one) -> scrollbar, role=switch -> checkbox; date and
//                                       time fields read as Chromium shows them
//   whole: true                         nothing cut by a clipping ancestor or the region is labelled
//   covers: CSS selector                popups drawn over the page: what they overlap is not labelled
// Plain SVG shapes (circle, ellipse, rect, polygon with 3 corners, line) are shapes everywhere.
(rules) => {
  const [W, H] = rules.region;
  const out = [];
  const consumed = new Set();  // text nodes already part of another element (checkbox labels, buttons)
  const active = document.activeElement;
  const selection = window.getSelection();
  // The whole page, not just #wrap: jQuery UI appends dialogs and menus to <body>. MiniWoB's own
  // score panel and start cover are not part of the task.
  const skipSel = ['#reward-display', '#sync-task-cover', rules.skip].filter(Boolean).join(', ');
  const skip = [...document.querySelectorAll(skipSel)];

  const inSkipped = (el) => skip.some((s) => s === el || s.contains(el));
  const S = rules.scale || 1;  // 1 for MiniWoB: every box below is then exactly what it always was
  const handled = new Set();  // elements a task rule already labelled: the generic rules leave them alone

  function styleVisible(el) {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || s.visibility === 'collapse') return false;
      if (parseFloat(s.opacity) < 0.05) return false;
    }
    return true;
  }

  // Intersect a rect with the client areas of every clipping ancestor and with the task region.
  function clip(el, r) {
    let x1 = r.left, y1 = r.top, x2 = r.right, y2 = r.bottom;
    for (let e = el.nodeType === 1 ? el.parentElement : el.parentNode; e && e !== document.documentElement;
         e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const c = e.getBoundingClientRect();
        const cx1 = c.left + e.clientLeft, cy1 = c.top + e.clientTop;
        x1 = Math.max(x1, cx1); y1 = Math.max(y1, cy1);
        x2 = Math.min(x2, cx1 + e.clientWidth); y2 = Math.min(y2, cy1 + e.clientHeight);
      }
    }
    x1 = Math.max(0, x1); y1 = Math.max(0, y1); x2 = Math.min(W, x2); y2 = Math.min(H, y2);
    // Partly shown is not shown: a cut text would be labelled with words nobody sees.
    if (rules.whole && (x1 > r.left + 0.5 || y1 > r.top + 0.5 || x2 < r.right - 0.5 || y2 < r.bottom - 0.5)) return null;
    const box = [Math.floor(x1 * S + 0.01), Math.floor(y1 * S + 0.01), Math.ceil(x2 * S - 0.01), Math.ceil(y2 * S - 0.01)];
    if (box[2] - box[0] < 2 * S || box[3] - box[1] < 2 * S) return null;
    return box;
  }

  // Visible unless something else is drawn over most of it: probe a 3x3 grid inside the box.
  function uncovered(el, box) {
    let hits = 0, probes = 0;
    for (const fx of [0.2, 0.5, 0.8]) {
      for (const fy of [0.25, 0.5, 0.75]) {
        const x = (box[0] + (box[2] - box[0]) * fx) / S, y = (box[1] + (box[3] - box[1]) * fy) / S;
        probes++;
        const top = document.elementFromPoint(x, y);
        if (!top) continue;
        if (top === el || el.contains(top) || top.contains(el)) { hits++; continue; }
        // A label or wrapper of a control counts as the control.
        if (top.tagName === 'LABEL' && (top.control === el || top.contains(el))) hits++;
      }
    }
    return hits * 2 >= probes;  // at least half the probes see the element itself
  }

  // Popups (rules.covers) in paint order; an element is under every one after the popup it is in.
  const covers = rules.covers ? [...document.querySelectorAll(rules.covers)].filter(styleVisible) : [];
  const coverRects = covers.map((c) => c.getBoundingClientRect());
  function underCover(el, box) {
    let own = -1;
    covers.forEach((c, i) => { if (c === el || c.contains(el)) own = i; });
    const [x1, y1, x2, y2] = box.map((v) => v / S);
    for (let i = own + 1; i < covers.length; i++) {
      const r = coverRects[i];
      if (Math.min(x2, r.right) - Math.max(x1, r.left) > 0.5 && Math.min(y2, r.bottom) - Math.max(y1, r.top) > 0.5) return true;
    }
    return false;
  }

  // The part of a mostly covered element that a person still sees: the longest run of columns (or
  // rows) of the box where the element is on top, probed every CSS pixel. Only a band across the
  // whole box counts, so the part is a box nothing else lies on. Null if none.
  function shownBand(el, box) {
    const [x1, y1, x2, y2] = box.map((v) => v / S);
    const xs = [], ys = [];
    // Whole coordinates: Chromium rounds a hit-test point, so x + 0.5 would probe pixel x + 1.
    for (let x = Math.ceil(x1); x < x2; x++) xs.push(x);
    for (let y = Math.ceil(y1); y < y2; y++) ys.push(y);
    if (!xs.length || !ys.length) return null;
    const on = ys.map((y) => xs.map((x) => {
      const top = document.elementFromPoint(x, y);
      return !!top && (top === el || el.contains(top));
    }));
    const longest = (flags) => {  // [start, end) of the longest run of true
      let best = [0, 0], start = -1;
      flags.concat([false]).forEach((f, i) => {
        if (f && start < 0) start = i;
        if (!f && start >= 0) { if (i - start > best[1] - best[0]) best = [start, i]; start = -1; }
      });
      return best;
    };
    // Most of a line, not all: rounded corners are hit-tested as drawn, so a band's ends miss.
    const most = (flags) => flags.filter(Boolean).length >= 0.8 * flags.length;
    const cols = longest(xs.map((_, i) => most(on.map((row) => row[i]))));
    const rows = longest(ys.map((_, j) => most(on[j])));
    const colArea = (cols[1] - cols[0]) * ys.length, rowArea = (rows[1] - rows[0]) * xs.length;
    if (!colArea && !rowArea) return null;
    const part = colArea >= rowArea
      ? [xs[cols[0]], y1, xs[cols[1] - 1] + 1, y2]
      : [x1, ys[rows[0]], x2, ys[rows[1] - 1] + 1];
    const out = [Math.floor(part[0] * S + 0.01), Math.floor(part[1] * S + 0.01),
                 Math.ceil(part[2] * S - 0.01), Math.ceil(part[3] * S - 0.01)];
    return out[2] - out[0] >= 2 * S && out[3] - out[1] >= 2 * S ? out : null;
  }

  function push(type, el, box, attrs) {
    if (!box) return;
    if (el && !uncovered(el, box)) {
      // A button another lies on is still clicked where it shows (MiniWoB's ONE under TWO); its
      // name is under the cover, so the part is nameless.
      if (type !== 'button' || el.nodeType !== 1) return;
      box = shownBand(el, box);
      if (!box) return;
      attrs = Object.assign({}, attrs, {text: ''});
    }
    if (covers.length && el && underCover(el, box)) return;
    // Content Chromium does not draw although its style shows it: a closed <details>' body
    // (content-visibility: hidden) can still report rects for some of its words.
    if (rules.widgets && el && el.checkVisibility && !el.checkVisibility()) return;
    // Every element says whether it takes input; the labeller keeps it where the type carries it.
    if (el && el.nodeType === 1 && !('enabled' in attrs)) attrs = Object.assign({enabled: !disabled(el)}, attrs);
    out.push(Object.assign({type, bbox: box}, attrs));
  }

  // Greyed out: a disabled form control (or one in a disabled fieldset), or aria-disabled on it or
  // an ancestor.
  function disabled(el) {
    if (el.matches && el.matches(':disabled')) return true;
    return !!(el.closest && el.closest('[aria-disabled=true]'));
  }
  // Where a range widget stands, 0-1 (caap.taxonomy's value); null where the page does not say.
  function fraction(now, min, max) {
    const [n, lo, hi] = [parseFloat(now), parseFloat(min), parseFloat(max)];
    if (!isFinite(n) || !isFinite(lo) || !isFinite(hi) || hi === lo) return null;
    return Math.round(Math.min(1, Math.max(0, (n - lo) / (hi - lo))) * 10000) / 10000;
  }
  const rangeValue = (el) => (el.tagName === 'INPUT'
    ? fraction(el.value, el.min || 0, el.max || 100)
    : fraction(el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemin') || 0, el.getAttribute('aria-valuemax') || 100));
  const progressValue = (el) => (el.tagName === 'PROGRESS'
    ? (el.hasAttribute('value') ? fraction(el.value, 0, el.max) : null)
    : fraction(el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemin') || 0, el.getAttribute('aria-valuemax') || 100));

  const union = (a, b) => (!a ? b : !b ? a : [Math.min(a[0], b[0]), Math.min(a[1], b[1]),
                                               Math.max(a[2], b[2]), Math.max(a[3], b[3])]);
  const norm = (t) => (t || '').replace(/\s+/g, ' ').trim();

  function textNodes(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) if (norm(n.textContent)) nodes.push(n);
    return nodes;
  }

  // Line runs of a text node: consecutive words that share a line box, with their union rect.
  function lineRuns(node) {
    const text = node.textContent;
    const runs = [];
    const re = /\S+/g;
    let m;
    while ((m = re.exec(text))) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
      if (!rects.length) continue;
      const r = rects[0];
      const last = runs[runs.length - 1];
      if (last && Math.abs(last.rect.top - r.top) < r.height / 2 && r.left >= last.rect.left) {
        last.words.push(m[0]);
        last.rect = {left: Math.min(last.rect.left, r.left), top: Math.min(last.rect.top, r.top),
                     right: Math.max(last.rect.right, r.right), bottom: Math.max(last.rect.bottom, r.bottom)};
        last.end = m.index + m[0].length;
      } else {
        runs.push({words: [m[0]], rect: {left: r.left, top: r.top, right: r.right, bottom: r.bottom},
                   start: m.index, end: m.index + m[0].length});
      }
    }
    return runs;
  }

  function selected(node, start, end) {
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return false;
    const range = selection.getRangeAt(0);
    const probe = document.createRange();
    probe.setStart(node, start);
    probe.setEnd(node, end);
    return range.compareBoundaryPoints(Range.END_TO_START, probe) < 0 &&
           range.compareBoundaryPoints(Range.START_TO_END, probe) > 0;
  }

  const rectOf = (el) => el.getBoundingClientRect();
  const matches = (el, sel) => !!sel && el.matches(sel);
  const closest = (el, sel) => (sel ? el.closest(sel) : null);

  // --- task-specific widgets ----------------------------------------------------------------------
  for (const [selector, subtype] of rules.icons || []) {
    for (const el of document.querySelectorAll(selector)) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      textNodes(el).forEach((n) => consumed.add(n));
      const attrs = {subtype};
      if (subtype === 'important' || subtype === 'like' || subtype === 'retweet') {
        attrs.checked = el.classList.contains('clicked') || el.classList.contains('active');
      }
      handled.add(el);
      push('icon', el, clip(el, rectOf(el)), attrs);
    }
  }
  for (const [selector, subtype] of rules.shapes || []) {
    for (const el of document.querySelectorAll(selector)) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      textNodes(el).forEach((n) => consumed.add(n));
      handled.add(el);
      push('shape', el, clip(el, rectOf(el)), {subtype});
    }
  }
  for (const el of document.querySelectorAll('svg circle, svg ellipse, svg rect, svg polygon, svg line')) {
    if (!styleVisible(el) || inSkipped(el)) continue;
    let subtype = {CIRCLE: 'circle', ELLIPSE: 'circle', RECT: 'rectangle', LINE: 'line'}[el.tagName.toUpperCase()];
    if (el.tagName.toUpperCase() === 'POLYGON') {
      const n = el.points ? el.points.numberOfItems : 0;
      subtype = n === 3 ? 'triangle' : n === 4 ? 'rectangle' : null;
    }
    const r = rectOf(el);
    if (subtype === 'circle' && r.width <= 6 && r.height <= 6) subtype = 'point';
    if (subtype) push('shape', el, clip(el, r), {subtype});
  }
  if (rules.handles) {
    for (const el of document.querySelectorAll(rules.handles)) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      push('resize_handle', el, clip(el, rectOf(el)), {});
    }
  }
  for (const [selector, text] of rules.buttons || []) {
    for (const el of document.querySelectorAll(selector)) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      textNodes(el).forEach((n) => consumed.add(n));
      handled.add(el);
      push('button', el, clip(el, rectOf(el)), {text, focused: false, checked: false});
    }
  }
  if (rules.item_buttons) {
    for (const el of document.querySelectorAll(rules.item_buttons)) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      textNodes(el).forEach((n) => consumed.add(n));
      handled.add(el);
      // Focus unknown: the accordion draws its open header the same whether or not it has the
      // focus, so no pixel can tell (a label saying either would teach a guess).
      push('button', el, clip(el, rectOf(el)), {text: norm(el.innerText), focused: null, checked: false});
    }
  }

  // --- widget roles (rules.widgets) ---------------------------------------------------------------
  const own = (el) => {  // a widget labelled whole: its text and its parts are not labelled again
    textNodes(el).forEach((n) => consumed.add(n));
    handled.add(el);
    for (const d of el.querySelectorAll('*')) handled.add(d);
  };
  if (rules.widgets) {
    for (const el of document.querySelectorAll('input[type=range], [role=slider]')) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      own(el);
      push('slider', el, clip(el, rectOf(el)), {value: rangeValue(el)});
    }
    for (const el of document.querySelectorAll('progress, [role=progressbar]')) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      own(el);
      push('progress_bar', el, clip(el, rectOf(el)), {value: progressValue(el)});
    }
    for (const el of document.querySelectorAll('[role=scrollbar]')) {  // a drawn one; native bars: scrollbars()
      if (!styleVisible(el) || inSkipped(el)) continue;
      own(el);
      push('scrollbar', el, clip(el, rectOf(el)), {});
    }
    for (const el of document.querySelectorAll('[role=tab]')) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      own(el);
      push('tab', el, clip(el, rectOf(el)), {text: norm(el.innerText), highlighted: el.getAttribute('aria-selected') === 'true'});
    }
    for (const el of document.querySelectorAll('[role=treeitem], details > summary')) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      // A nested tree keeps an item's children in a group inside it: the item is its own row only.
      const group = el.querySelector(':scope > [role=group]');
      let box = group ? null : clip(el, rectOf(el));
      if (group) for (const c of el.children) if (c !== group) box = union(box, clip(c, rectOf(c)));
      const nodes = textNodes(el).filter((n) => !group || !group.contains(n));
      nodes.forEach((n) => consumed.add(n));
      handled.add(el);
      for (const d of el.querySelectorAll('*')) if (!group || !group.contains(d)) handled.add(d);
      const text = group ? norm(nodes.map((n) => n.textContent).join(' ')) : norm(el.innerText);
      const attrs = {text, highlighted: el.getAttribute('aria-selected') === 'true'};
      if (el.tagName === 'SUMMARY') attrs.expanded = el.parentElement.open;
      else if (el.hasAttribute('aria-expanded')) attrs.expanded = el.getAttribute('aria-expanded') === 'true';
      push('tree_item', el, box, attrs);  // a leaf has no expanded at all
    }
    for (const el of document.querySelectorAll('[role=switch]')) {
      if (!styleVisible(el) || inSkipped(el)) continue;
      // A toggle switch is a checkbox: one element with its label, as annotate labels checkboxes.
      let box = clip(el, rectOf(el));
      let text = '';
      const label = el.closest('label') || (el.id && document.querySelector(`label[for="${el.id}"]`));
      for (const n of label ? textNodes(label).filter((n) => !el.contains(n)) : []) {
        consumed.add(n);
        for (const run of lineRuns(n)) box = union(box, clip(n, run.rect));
        text += ' ' + n.textContent;
      }
      own(el);
      push('checkbox', el, box, {text: norm(text), checked: el.getAttribute('aria-checked') === 'true', indeterminate: false});
    }
  }

  // The text a date or time field shows (Chromium, en-US), not its ISO value.
  function shownDate(value, type) {
    if (!value) return '';
    const two = (n) => String(n).padStart(2, '0');
    if (type === 'date') {
      const [y, m, d] = value.split('-');
      return `${m}/${d}/${y}`;
    }
    if (type === 'time') {
      const [h, mi] = value.split(':').map(Number);
      return `${two(h % 12 || 12)}:${two(mi)} ${h < 12 ? 'AM' : 'PM'}`;
    }
    if (type === 'datetime-local') {
      const [d, t] = value.split('T');
      return `${shownDate(d, 'date')}, ${shownDate(t.slice(0, 5), 'time')}`;
    }
    return value;
  }

  // --- controls ---------------------------------------------------------------------------------
  const all = [...document.body.querySelectorAll('*')].filter((el) => !inSkipped(el));
  for (const el of all) {
    if (handled.has(el) || !styleVisible(el)) continue;
    const tag = el.tagName;
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'BUTTON' || (tag === 'INPUT' && ['button', 'submit', 'reset'].includes(type))) {
      textNodes(el).forEach((n) => consumed.add(n));
      const text = norm(tag === 'INPUT' ? el.value : el.innerText);
      // Held down: a toggle button (aria-pressed) that is on; a push button never stays down.
      push('button', el, clip(el, rectOf(el)), {text, focused: el === active, checked: el.getAttribute('aria-pressed') === 'true'});
    } else if (tag === 'INPUT' && (type === 'checkbox' || type === 'radio')) {
      // The control and its label are one element: the box covers both, the text is the label's.
      let box = clip(el, rectOf(el));
      let text = '';
      const label = el.closest('label') || (el.id && document.querySelector(`label[for="${el.id}"]`));
      const labelNodes = label ? textNodes(label) : [];
      if (!labelNodes.length && el.nextSibling && el.nextSibling.nodeType === 3) labelNodes.push(el.nextSibling);
      for (const n of labelNodes) {
        consumed.add(n);
        for (const run of lineRuns(n)) box = union(box, clip(n, run.rect));
        text += ' ' + n.textContent;
      }
      // A box neither ticked nor clear has no checked (caap.taxonomy).
      const mixed = el.indeterminate || el.getAttribute('aria-checked') === 'mixed';
      push(type, el, box, {text: norm(text), checked: mixed ? null : el.checked, indeterminate: mixed});
    } else if (tag === 'INPUT' && !['hidden', 'range', 'color', 'file', 'image'].includes(type)) {
      const shown = type === 'password' ? '•'.repeat(el.value.length) : rules.widgets ? shownDate(el.value, type) : el.value;
      push('input_field', el, clip(el, rectOf(el)), {text: norm(visibleInputText(el, shown)), focused: el === active});
    } else if (tag === 'TEXTAREA') {
      push('text_area', el, clip(el, rectOf(el)), {text: visibleTextareaText(el), focused: el === active});
      scrollbars(el);
      if (getComputedStyle(el).resize !== 'none') resizeHandle(el);
    } else if (tag === 'SELECT' && !(el.multiple || el.size > 1)) {
      const opt = el.options[el.selectedIndex];
      push('dropdown', el, clip(el, rectOf(el)), {text: norm(opt ? opt.text : ''), focused: el === active});
    } else if (tag === 'SELECT') {
      // A list box scrolls its options inside itself: clip them to its client area too.
      const c = rectOf(el);
      const cx1 = c.left + el.clientLeft, cy1 = c.top + el.clientTop;
      for (const opt of el.options) {
        const r = rectOf(opt);
        const inner = {left: Math.max(r.left, cx1), top: Math.max(r.top, cy1),
                       right: Math.min(r.right, cx1 + el.clientWidth), bottom: Math.min(r.bottom, cy1 + el.clientHeight)};
        if (inner.bottom - inner.top < 4) continue;
        if (rules.whole && (inner.top > r.top + 0.5 || inner.bottom < r.bottom - 0.5)) continue;
        push('tabled_text', el, clip(el, inner), {text: norm(opt.text), highlighted: opt.selected});
      }
      scrollbars(el);
    } else if ((tag === 'A' || matches(el, rules.links)) && norm(el.innerText)) {
      for (const n of textNodes(el)) {
        consumed.add(n);
        for (const run of lineRuns(n)) push('hyperlink', el, clip(n, run.rect), {text: run.words.join(' '),
          highlighted: selected(n, run.start, run.end)});
      }
    } else if (tag !== 'HTML' && tag !== 'BODY') {
      const s = getComputedStyle(el);
      if ((s.overflowY === 'auto' || s.overflowY === 'scroll' || s.overflowX === 'auto' || s.overflowX === 'scroll')) {
        scrollbars(el);
      }
    }
  }

  // --- text ---------------------------------------------------------------------------------------
  for (const node of textNodes(document.body)) {
    if (consumed.has(node)) continue;
    const parent = node.parentElement;
    if (!parent || inSkipped(parent) || !styleVisible(parent)) continue;
    if (['SCRIPT', 'STYLE', 'OPTION', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(parent.tagName.toUpperCase())) continue;
    let type = 'text';
    if (closest(parent, rules.draggable)) type = 'draggable_text';
    else if (parent.closest('td, th') || closest(parent, rules.rows)) type = 'tabled_text';
    const activeRow = closest(parent, rules.rows);
    const raw = node.textContent;
    for (const run of lineRuns(node)) {
      // Whether the DOM has whitespace right before/after the run: merge_line_runs joins runs of
      // one line with a space exactly where the page has one, whatever the pixel gap.
      const attrs = {text: run.words.join(' '), _space_before: run.start > 0 && /\s/.test(raw[run.start - 1]),
                     _space_after: run.end < raw.length && /\s/.test(raw[run.end])};
      if (type !== 'draggable_text') {
        attrs.highlighted = selected(node, run.start, run.end) || !!(activeRow &&
          activeRow.matches('.ui-state-active, .ui-state-focus, .active, :hover') ||
          parent.closest('.highlight, .ui-state-active'));
      }
      push(type, parent, clip(node, run.rect), attrs);
    }
  }

  function scrollbars(el) {
    const r = rectOf(el);
    const vw = el.offsetWidth - el.clientWidth - el.clientLeft * 2;  // vertical bar width
    const hh = el.offsetHeight - el.clientHeight - el.clientTop * 2;  // horizontal bar height
    if (vw > 3) {
      push('scrollbar', el, clip(el, {left: r.right - el.clientLeft - vw, top: r.top + el.clientTop,
        right: r.right - el.clientLeft, bottom: r.top + el.clientTop + el.clientHeight}), {});
    }
    if (hh > 3) {
      push('scrollbar', el, clip(el, {left: r.left + el.clientLeft, top: r.bottom - el.clientTop - hh,
        right: r.left + el.clientLeft + el.clientWidth, bottom: r.bottom - el.clientTop}), {});
    }
  }

  function resizeHandle(el) {
    const r = rectOf(el);
    const size = 10;  // Chromium's grip sits in the bottom-right corner, inside the border
    push('resize_handle', el, clip(el, {left: r.right - el.clientLeft - size, top: r.bottom - el.clientTop - size,
      right: r.right - el.clientLeft, bottom: r.bottom - el.clientTop}), {});
  }

  // The part of a one-line field's text that is scrolled into view (long values scroll sideways).
  function visibleInputText(el, shown) {
    if (!shown || el.scrollWidth <= el.clientWidth + 1) return shown;
    const s = getComputedStyle(el);
    const probe = document.createElement('span');
    for (const p of ['fontFamily', 'fontSize', 'fontWeight', 'letterSpacing']) probe.style[p] = s[p];
    probe.style.position = 'absolute';
    probe.style.visibility = 'hidden';
    probe.style.whiteSpace = 'pre';
    probe.textContent = shown;
    document.body.appendChild(probe);
    const node = probe.firstChild;
    const x0 = probe.getBoundingClientRect().left;
    const lo = el.scrollLeft, hi = el.scrollLeft + el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    let visible = '';
    for (let i = 0; i < shown.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const r = range.getBoundingClientRect();
      if (r.left - x0 >= lo - 0.5 && r.right - x0 <= hi + 0.5) visible += shown[i];
    }
    probe.remove();
    return visible;
  }

  // The lines of a textarea that are scrolled into view, measured on an invisible copy of it.
  function visibleTextareaText(el) {
    const s = getComputedStyle(el);
    const mirror = document.createElement('div');
    for (const p of ['fontFamily', 'fontSize', 'fontWeight', 'lineHeight', 'letterSpacing', 'paddingLeft',
                     'paddingRight', 'paddingTop', 'borderLeftWidth', 'borderRightWidth', 'boxSizing', 'tabSize']) {
      mirror.style[p] = s[p];
    }
    mirror.style.position = 'absolute';
    mirror.style.visibility = 'hidden';
    mirror.style.whiteSpace = 'pre-wrap';
    mirror.style.overflowWrap = 'break-word';
    mirror.style.width = el.clientWidth + 'px';
    mirror.style.left = '-9999px';
    mirror.style.top = '0px';
    mirror.textContent = el.value;
    document.body.appendChild(mirror);
    const node = mirror.firstChild;
    const top = mirror.getBoundingClientRect().top + parseFloat(s.paddingTop) * 0;
    const lo = el.scrollTop, hi = el.scrollTop + el.clientHeight;
    // Visible words, grouped into the visual lines they wrap to: lines are joined with "\n", so the
    // label keeps what a reader sees line by line (whitespace-normalised, it is the words in order).
    const lines = [];
    let lineTop = null;
    if (node) {
      const re = /\S+/g;
      let m;
      while ((m = re.exec(node.textContent))) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        const r = rects.length ? rects[0] : range.getBoundingClientRect();
        const y1 = r.top - top, y2 = r.bottom - top;
        if (!(y1 >= lo - 1 && y2 <= hi + 1)) continue;
        if (lineTop === null || Math.abs(y1 - lineTop) >= r.height / 2) {
          lines.push([]);
          lineTop = y1;
        }
        lines[lines.length - 1].push(m[0]);
      }
    }
    mirror.remove();
    return lines.map((words) => words.join(' ')).join('\n');
  }

  return out;
}
