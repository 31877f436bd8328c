// The page agent of hands: installed once per document in an isolated world (the page's own
// scripts cannot see or change it), it reads the page in one DOM walk, issues refs bound to the
// nodes they name, and re-checks a ref at the moment of an action.
//
// Called by the driver as `install(docId)`; every later call is `__hands[method](args)`.
function install(docId) {
  'use strict';
  if (globalThis.__hands) return globalThis.__hands.doc;

  const DOC = docId;
  // ref -> {node: WeakRef, role, label, scope, url}: `url` is the document's address when the
  // ref was last issued; a same-document navigation (history API, fragment) makes it stale
  // at once, before the driver even hears of it.
  const refs = new Map();
  // element -> its element ref / its scope ref
  const refOf = new WeakMap();
  const scopeOf = new WeakMap();

  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK',
    'TITLE', 'OBJECT', 'EMBED', 'PARAM', 'SOURCE', 'TRACK', 'DATALIST']);
  // Elements whose content is a value, not page text (a textarea's text, a select's options).
  const VALUE_CONTENT = new Set(['SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP', 'INPUT']);
  const BLOCK = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BR', 'CAPTION', 'DD',
    'DETAILS', 'DIALOG', 'DIV', 'DL', 'DT', 'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER',
    'FORM', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR', 'LEGEND', 'LI', 'MAIN', 'NAV',
    'OL', 'P', 'PRE', 'SECTION', 'SUMMARY', 'TABLE', 'TBODY', 'TFOOT', 'THEAD', 'TR', 'UL',
    'BODY', 'HTML']);
  const CELL = new Set(['TD', 'TH']);
  const CONTROL_TAGS = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON']);
  // Elements whose content is a value, never part of a name.
  const FIELD_TAGS = new Set(['INPUT', 'SELECT', 'TEXTAREA']);
  // ARIA roles and the kind each means (hands-core `Kind`).
  const ARIA_ROLES = {
    button: 'button', link: 'link', menuitem: 'menuitem', tab: 'tab', treeitem: 'clickable',
    option: 'clickable', switch: 'switch', checkbox: 'checkbox', menuitemcheckbox: 'checkbox',
    radio: 'radio', menuitemradio: 'radio',
    textbox: 'textbox', searchbox: 'textbox', spinbutton: 'textbox',
    combobox: 'combobox', listbox: 'listbox', slider: 'slider',
  };
  // Kinds whose name comes from their content (their own text) when no label names them.
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'tab', 'menuitem', 'switch', 'checkbox',
    'radio', 'clickable']);
  // Kinds a person picks by sight when they have no text (a swatch, a shape, an icon).
  const LOOKS_NAME = new Set(['button', 'link', 'tab', 'menuitem', 'clickable']);
  // Why an element without a native or ARIA role is operable (the walk's signals).
  const SIG_LISTENER = 1;
  const SIG_POINTER = 2;
  const SIG_FOCUSABLE = 4;
  // Handler attributes that make an element operable.
  const HANDLER_ATTRS = ['onclick', 'onmousedown', 'onmouseup', 'onpointerdown', 'onpointerup',
    'ontouchstart', 'onkeydown', 'onkeyup', 'ondblclick'];
  // Marks page text never contains (stripped from it): the walk puts one where each element
  // stands in the text, and the driver turns them into offsets.
  const MARK = '\uFDD0';
  // What the listener log's marks say (listeners.js).
  const MARK_ROOT = 4;
  const LANDMARKS = {
    MAIN: 'main', NAV: 'navigation', HEADER: 'header', FOOTER: 'footer', ASIDE: 'aside',
    FORM: 'form', DIALOG: 'dialog', SECTION: 'section', ARTICLE: 'article',
    FIELDSET: 'group', TABLE: 'table',
  };
  const SCOPE_ROLES = new Set(['main', 'navigation', 'banner', 'contentinfo', 'complementary',
    'search', 'form', 'region', 'dialog', 'alertdialog', 'tabpanel', 'group', 'table', 'grid']);
  const PRIVATE_AUTOCOMPLETE = new Set(['current-password', 'new-password', 'one-time-code',
    'cc-number', 'cc-csc', 'cc-exp', 'cc-exp-month', 'cc-exp-year']);

  // --- text helpers -------------------------------------------------------------------------

  function norm(s) {
    return s.replace(/\s+/g, ' ').trim();
  }

  function utf8Len(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c <= 0xdbff) { n += 4; i++; }
      else n += 3;
    }
    return n;
  }

  // The longest prefix of at most `max` UTF-8 bytes that splits no character.
  function cut(s, max) {
    if (s.length * 3 <= max) return [s, false];
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      let w = c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c <= 0xdbff) ? 4 : 3;
      if (n + w > max) return [s.slice(0, i), true];
      n += w;
      if (w === 4) i++;
    }
    return [s, false];
  }

  // --- structure ------------------------------------------------------------------------------

  // Rendered and not hidden. `checkVisibility` is false for an element without a box (its own
  // or an ancestor's `display: none`, `content-visibility: hidden`) and, with
  // `visibilityProperty`, for `visibility: hidden`. `display: contents` has no box but its
  // children do: it counts as visible, for its children's sake.
  function visibleEl(el) {
    if (!el.checkVisibility) return true;
    if (el.checkVisibility({ visibilityProperty: true })) return true;
    return el.tagName !== 'BODY' && el.parentElement != null &&
      getComputedStyle(el).display === 'contents' && visibleEl(el.parentElement);
  }

  // The element's rendered children: its shadow tree, a slot's assigned nodes, or its children.
  function childrenOf(el) {
    if (el.shadowRoot) return el.shadowRoot.childNodes;
    if (el.tagName === 'SLOT') {
      const assigned = el.assignedNodes();
      return assigned.length ? assigned : el.childNodes;
    }
    return el.childNodes;
  }

  function frameDoc(el) {
    try {
      const d = el.contentDocument;
      return d && d.body ? d : null;
    } catch (e) {
      return null;
    }
  }

  // Up through shadow hosts and frame elements.
  function parentOf(n) {
    if (n.parentNode && n.parentNode.nodeType !== 11 && n.parentNode.nodeType !== 9) return n.parentNode;
    if (n.parentNode && n.parentNode.nodeType === 11) return n.parentNode.host || null;
    const doc = n.nodeType === 9 ? n : n.parentNode;
    if (doc && doc.nodeType === 9) {
      const w = doc.defaultView;
      return w && w.frameElement ? w.frameElement : null;
    }
    return null;
  }

  function composedContains(outer, n) {
    for (let c = n; c; c = parentOf(c)) if (c === outer) return true;
    return false;
  }

  // Connected to this document, through every frame it sits in.
  function attached(el) {
    if (!el.isConnected) return false;
    let d = el.ownerDocument;
    while (d !== document) {
      const w = d.defaultView;
      if (!w) return false;
      const f = w.frameElement;
      if (!f || !f.isConnected) return false;
      d = f.ownerDocument;
    }
    return true;
  }

  // What an element is (a hands-core `Kind` name), or null when nothing says a person can
  // operate it. `sig` is the walk's signals for it (SIG_*): a handler of its own or delegated to
  // it, a pointer cursor where handlers listen, a tab stop.
  function kindOf(el, sig) {
    // A private field is a text field whatever role it claims: `<input type=password
    // role=button>` must not have its value read as a button's label or as page text.
    if (isPrivate(el)) return 'textbox';
    const attr = el.getAttribute('role');
    if (attr) {
      const r = ARIA_ROLES[attr.trim().split(/\s+/)[0].toLowerCase()];
      if (r) return r;
    }
    switch (el.tagName) {
      case 'BUTTON': return 'button';
      case 'A':
        if (el.hasAttribute('href')) return 'link';
        break;
      case 'SUMMARY': return 'button';
      case 'SELECT': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'INPUT': {
        switch ((el.getAttribute('type') || 'text').toLowerCase()) {
          case 'hidden': return null;
          case 'button': case 'submit': case 'reset': case 'image': return 'button';
          case 'checkbox': return 'checkbox';
          case 'radio': return 'radio';
          case 'range': return 'slider';
          case 'file': return 'button';
          case 'color': return 'unsupported';
          default: return el.list ? 'combobox' : 'textbox';
        }
      }
    }
    if (el.hasAttribute('contenteditable') && el.isContentEditable &&
        !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
    if (sig || HANDLER_ATTRS.some((a) => el.hasAttribute(a))) {
      return el.tagName === 'A' ? 'link' : 'clickable';
    }
    return null;
  }

  // Whether the element is a control by itself (native or ARIA), signals aside.
  function HAS_ROLE(el) {
    return kindOf(el, 0) !== null;
  }

  // A tab stop made so by the page (`tabindex` ≥ 0 on an element that is not a control), other
  // than a scrollable region made focusable for keyboard scrolling.
  function tabStop(el) {
    if (!el.hasAttribute('tabindex') || el.tabIndex < 0) return false;
    if (el.tagName === 'BODY' || el.tagName === 'HTML') return false;
    return !(el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1);
  }

  // Text of a subtree for a name, without the text of form controls inside it.
  function nameText(n, budget) {
    let s = '';
    for (const c of n.childNodes) {
      if (s.length > budget) break;
      if (c.nodeType === 3) s += c.data;
      else if (c.nodeType === 1) {
        if (FIELD_TAGS.has(c.tagName) || SKIP.has(c.tagName)) continue;
        if (c.tagName === 'IMG') s += ' ' + (c.getAttribute('alt') || '') + ' ';
        else s += ' ' + nameText(c, budget - s.length) + ' ';
      }
    }
    return s;
  }

  function byIds(el, ids) {
    const root = el.getRootNode();
    return ids.split(/\s+/).map((id) => {
      const t = root.getElementById ? root.getElementById(id) : null;
      return t ? (t.getAttribute('aria-label') || nameText(t, 1000)) : '';
    }).join(' ');
  }

  // The `<label>`s of a control, as `el.labels` lists them. `el.labels` is a live list that
  // Chromium fills by walking the control's whole tree scope, and drops again on any DOM change:
  // asked of every control in a walk it makes a read quadratic (300 ms for 1,600 labelled
  // controls, on every read of a page that changed since the last one). A walk passes `index`,
  // a map it fills once per tree scope from that scope's `<label>`s and their `control`, which
  // is the same relation `labels` reports, in the same tree order.
  function labelsOf(el, index) {
    if (!index) return el.labels ? Array.from(el.labels) : [];
    const root = el.getRootNode();
    let byControl = index.get(root);
    if (!byControl) {
      byControl = new Map();
      if (root.querySelectorAll) {
        for (const label of root.querySelectorAll('label')) {
          const control = label.control;
          if (!control) continue;
          const list = byControl.get(control);
          if (list) list.push(label);
          else byControl.set(control, [label]);
        }
      }
      index.set(root, byControl);
    }
    return byControl.get(el) || [];
  }

  // Names for what has no text (labels.js): the text beside it, its icon, what it looks like.
  const { besideText, iconHint, iconClass, fileWords, looks } =
    labelLooks({ SKIP, FIELD_TAGS, norm, visibleEl, nameText });

  function rawLabel(el, kind, index) {
    let l = '';
    const lb = el.getAttribute('aria-labelledby');
    if (lb) l = norm(byIds(el, lb));
    if (!l) l = norm(el.getAttribute('aria-label') || '');
    if (!l) {
      const labels = labelsOf(el, index);
      if (labels.length) l = norm(labels.map((x) => nameText(x, 1000)).join(' '));
    }
    if (!l && el.tagName === 'INPUT' && kind === 'button') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      l = norm(t === 'image' ? (el.getAttribute('alt') || el.value ||
        fileWords(el.getAttribute('src') || '')) : el.value ||
        (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''));
    } else if (!l && NAME_FROM_CONTENT.has(kind) && !FIELD_TAGS.has(el.tagName)) {
      l = norm(nameText(el, 1000));
      // An icon glyph (no letter or digit: "✕", "●", an icon font's private-use character)
      // names nothing; the element's title or icon hint does.
      if (l && !/[\p{L}\p{N}]/u.test(l)) {
        l = norm(el.getAttribute('title') || '') || iconHint(el) || iconClass(el) || l;
      }
    }
    if (!l) l = norm(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || '');
    if (!l) l = norm(el.getAttribute('title') || el.getAttribute('alt') || '');
    if (!l) l = iconHint(el);
    // A target without text is named by what it looks like, before the text beside it (which
    // would give every swatch of a palette the same name).
    const looked = LOOKS_NAME.has(kind) && !FIELD_TAGS.has(el.tagName);
    if (!l && looked) l = looks(el, false);
    if (!l && kind !== 'textbox') l = besideText(el);
    if (!l) l = norm(el.getAttribute('name') || '');
    if (!l && kind === 'textbox') l = besideText(el);
    if (!l && looked) l = looks(el, true);
    if (!l) l = norm(el.id || '');
    if (!l) l = kind;
    return l;
  }

  // The label as reported: at most 256 bytes; `cut` says whether it was shortened. `index` is
  // the walk's label index (see `labelsOf`); a single look-up passes none.
  function labelOf(el, kind, index) {
    const [l, truncated] = cut(rawLabel(el, kind, index), 256);
    return { label: l, truncated };
  }

  function disabled(el) {
    if (el.matches(':disabled')) return true;
    if (el.getAttribute('aria-disabled') === 'true') return true;
    return !!el.closest('[inert]');
  }

  function isPrivate(el) {
    if (el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA') return false;
    if (el.tagName === 'INPUT' && (el.getAttribute('type') || '').toLowerCase() === 'password') return true;
    const ac = (el.getAttribute('autocomplete') || '').toLowerCase().split(/\s+/);
    return ac.some((t) => PRIVATE_AUTOCOMPLETE.has(t));
  }

  function checkedOf(el) {
    if (el.tagName === 'INPUT') return !!el.checked;
    const a = el.getAttribute('aria-checked');
    return a === 'true';
  }

  function rawValue(el, role) {
    if (role === 'textbox') {
      if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') return el.value;
      return el.innerText || '';
    }
    if (role === 'slider') {
      if (el.tagName === 'INPUT') return el.value;
      return el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow') || '';
    }
    if (role === 'combobox') {
      if (el.tagName === 'SELECT') {
        const o = el.selectedOptions[0];
        return o ? o.value : '';
      }
      if (el.tagName === 'INPUT') return el.value;
      return '';
    }
    return null;
  }

  function optionsOf(el, role, maxOptions) {
    if (el.tagName !== 'SELECT') return null;
    const out = [];
    let more = false;
    for (const o of el.options) {
      if (out.length >= maxOptions) { more = true; break; }
      let [label] = cut(norm(o.label || o.text || o.value || ''), 256);
      if (!label) continue;
      const [value] = cut(o.value, 512);
      const item = { label, value };
      if (role === 'listbox') item.selected = o.selected;
      out.push(item);
    }
    return { options: out, more };
  }

  function scopeLabel(el) {
    const tag = el.tagName;
    const role = (el.getAttribute('role') || '').toLowerCase();
    const kind = (role && SCOPE_ROLES.has(role)) ? role : (LANDMARKS[tag] || 'section');
    let name = norm(el.getAttribute('aria-label') || '');
    const lb = el.getAttribute('aria-labelledby');
    if (!name && lb) name = norm(byIds(el, lb));
    if (!name) {
      const h = el.querySelector(tag === 'FIELDSET' ? 'legend' : tag === 'TABLE' ? 'caption' :
        'h1,h2,h3,h4,h5,h6,[role=heading],legend');
      if (h) name = norm(nameText(h, 500));
    }
    const [l] = cut(name ? kind + ': ' + name : kind, 256);
    return l;
  }

  function isScope(el) {
    const role = (el.getAttribute('role') || '').toLowerCase();
    if (role && SCOPE_ROLES.has(role)) return true;
    const tag = el.tagName;
    if (tag === 'DIALOG') return el.open;
    if (tag === 'SECTION' || tag === 'ARTICLE') {
      return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ||
        !!el.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6, :scope > header');
    }
    return tag in LANDMARKS && tag !== 'SECTION' && tag !== 'ARTICLE';
  }

  const identity = refIdentity({ SKIP, FIELD_TAGS, kindOf, labelOf, norm, childrenOf, attached });

  function newRef(prefix, state) {
    const r = prefix + state.next;
    state.next += 1;
    return r;
  }

  // `sig`: the walk's signals that made it operable, kept so the re-check before an action
  // sees the element as the read did. `fp`: what the element looked like (refs.js), so a
  // re-render's successor can be found. An element keeps its ref from read to read while its
  // kind stays: a new name is recorded (a read reports it as changed; an action on the ref
  // before that read is refused, the name it was issued with having changed). An element seen
  // for the first time has no ref yet (null): `issueRefs` gives it one after the walk.
  function elementRef(el, role, label, sig, state) {
    const old = refOf.get(el);
    if (old) {
      const e = refs.get(old);
      // (A ref that followed a re-render to another node is that node's now.)
      if (e && e.node.deref() === el) {
        if (e.role === role) {
          e.label = label;
          e.url = state.href;
          e.sig = sig;
          identity.note(e, el);
          return old;
        }
        refs.delete(old);
      }
    }
    return null;
  }

  // Gives each element first seen by a walk its ref. An element that replaced one a read
  // reported (a list rendered anew) inherits the replaced element's ref when the identity is
  // certain: the replaced element is gone from the document, it is the only one of that kind and
  // name that is gone and the only new one, and refs.js would follow the old ref to exactly this
  // element (same root, place and row or heading: the rule an action's re-bind obeys, so a read
  // never gives a ref to an element an action would refuse to follow it to). Otherwise a new ref.
  // Whether `el` is, by refs.js's rule, the one successor of the gone element of entry `e`.
  function inherits(e, el) {
    if (e.doc.deref() !== el.ownerDocument) return false;
    const next = identity.successor(e, e.node.deref());
    return !next.error && next.el === el;
  }

  function issueRefs(pending, state) {
    const keyOf = (role, label) => role + '\u0000' + label;
    const fresh = new Map();
    for (const p of pending) {
      const k = keyOf(p.role, p.label);
      const list = fresh.get(k);
      if (list) list.push(p);
      else fresh.set(k, [p]);
    }
    const gone = new Map();
    if (fresh.size) {
      for (const [r, e] of refs) {
        if (e.scope) continue;
        const k = keyOf(e.role, e.label);
        if (!fresh.has(k)) continue;
        const node = e.node.deref();
        if (node && attached(node)) continue;
        const list = gone.get(k);
        if (list) list.push(r);
        else gone.set(k, [r]);
      }
    }
    for (const p of pending) {
      const k = keyOf(p.role, p.label);
      const heirs = gone.get(k);
      const r = (heirs && heirs.length === 1 && fresh.get(k).length === 1 &&
        inherits(refs.get(heirs[0]), p.el)) ? heirs[0] : newRef('e', state);
      const e = { node: new WeakRef(p.el), doc: new WeakRef(p.el.ownerDocument), role: p.role,
        label: p.label, sig: p.sig, fp: null, scope: false, url: state.href };
      refs.set(r, e);
      refOf.set(p.el, r);
      identity.note(e, p.el);
      p.item.ref = r;
    }
  }

  function scopeRef(el, label, state) {
    const old = scopeOf.get(el);
    if (old) {
      const e = refs.get(old);
      if (e && e.label === label) {
        e.url = state.href;
        return old;
      }
      refs.delete(old);
    }
    const r = newRef('s', state);
    refs.set(r, { node: new WeakRef(el), role: 'scope', label, scope: true, url: state.href });
    scopeOf.set(el, r);
    return r;
  }

  // --- the walk -------------------------------------------------------------------------------

  // One walk: visible text, elements and (optionally) scopes under `root`, to `maxDepth` levels.
  function walk(root, opts) {
    const lim = opts.limits;
    const wantText = opts.mode !== 'interactive';
    const wantElements = opts.mode !== 'text';
    const maxDepth = opts.depth > 0 ? opts.depth : Infinity;
    // `href` is read once: the document's address cannot change during a walk.
    const state = { next: opts.next, href: location.href };
    const labelIndex = new Map();
    const omitted = new Set();
    const elements = [];
    // Elements seen for the first time, given their refs after the walk (`issueRefs`).
    const pending = [];
    const scopes = [];
    const parts = [];
    let textBytes = 0;
    let textFull = false;
    let reportBytes = 64;
    let reportFull = false;
    let work = 0;
    let stopped = false;
    const t0 = performance.now();
    let pendingBreak = false;
    // Elements given a ref for a pointer cursor under a handler (delegated targets), and where
    // the last element's mark is in `parts`.
    let delegated = 0;
    let lastMark = -1;
    // Labels cut to 256 bytes (`name_limit`), and whether the last element's was.
    let nameCuts = 0;
    let lastCut = false;

    function addText(s) {
      if (!wantText || textFull) return;
      const t = s.replace(/\s+/g, ' ').replace(/\uFDD0/g, '');
      if (t === ' ' || t === '') {
        if (t === ' ' && parts.length && !pendingBreak) parts.push(' ');
        return;
      }
      if (pendingBreak) { parts.push('\n'); pendingBreak = false; }
      const n = utf8Len(t);
      if (textBytes + n > lim.textBytes) {
        const [head] = cut(t, Math.max(0, lim.textBytes - textBytes));
        parts.push(head);
        textBytes = lim.textBytes;
        textFull = true;
        omitted.add('text_limit');
        return;
      }
      parts.push(t);
      textBytes += n;
    }

    function lineBreak() {
      if (parts.length) pendingBreak = true;
    }

    // Once elements stop fitting, the text stops too: a capped read covers the page up to one
    // point, with refs for every control it mentions (the rest: find or read_page_scoped).
    function stopText() {
      if (wantText && !textFull) {
        textFull = true;
        omitted.add('text_limit');
      }
    }

    // Adds an element; true when it was added.
    function addElement(el, role, sig, offscreen) {
      if (reportFull) { omitted.add('report_limit'); stopText(); return false; }
      if (elements.length >= lim.elements) { omitted.add('target_limit'); stopText(); return false; }
      if (role === 'unsupported') { omitted.add('unsupported_control'); return false; }
      if (opts.enabledOnly && disabled(el)) return false;
      const { label, truncated } = labelOf(el, role, labelIndex);
      if (truncated) nameCuts += 1;
      lastCut = truncated;
      const item = { ref: elementRef(el, role, label, sig, state), role, label };
      // A ref is given after the walk (`issueRefs`); counted here at the size of a new one.
      if (item.ref === null) {
        pending.push({ item, el, role, label, sig });
        item.ref = 'e' + state.next;
      }
      if (role === 'checkbox' || role === 'radio' || role === 'switch') item.checked = checkedOf(el);
      if (offscreen) item.offscreen = true;
      const priv = isPrivate(el);
      const raw = rawValue(el, role);
      if (raw !== null) {
        if (priv) {
          omitted.add('private');
        } else if (!opts.values) {
          if (raw !== '') omitted.add('value');
        } else {
          const [v, t] = cut(raw, 512);
          if (t) omitted.add('value');
          item.value = v;
        }
      }
      if (role === 'combobox' || role === 'listbox') {
        if (opts.values && !priv) {
          const o = optionsOf(el, role, lim.options);
          if (o) {
            item.options = o.options;
            if (o.more) omitted.add('report_limit');
          }
        } else if (el.tagName === 'SELECT' && el.options.length) {
          omitted.add('value');
        }
      }
      let size = 40 + item.ref.length + label.length * 2;
      if (item.value !== undefined) size += item.value.length * 2;
      if (item.options) for (const o of item.options) size += 24 + (o.label.length + o.value.length) * 2;
      if (reportBytes + size > lim.reportBytes) {
        reportFull = true;
        omitted.add('report_limit');
        stopText();
        return false;
      }
      reportBytes += size;
      elements.push(item);
      if (sig & SIG_POINTER) delegated += 1;
      // Where the element stands in the text.
      lastMark = -1;
      if (wantText && !textFull) {
        if (pendingBreak) { parts.push('\n'); pendingBreak = false; }
        lastMark = parts.length;
        parts.push(MARK);
      }
      return true;
    }

    // What the listener log says (null: no log in this document, e.g. a page loaded before
    // the driver attached), per document walked into.
    const markMaps = new Map();
    const marksOf = (doc) => {
      if (!wantElements) return null;
      if (!markMaps.has(doc)) markMaps.set(doc, probe(doc, opts.token));
      return markMaps.get(doc);
    };
    const vw = window.innerWidth;
    const vh = window.innerHeight;

    function zeroSized(el) {
      const r = el.getBoundingClientRect();
      return r.width <= 0 || r.height <= 0;
    }

    // Whether a person can see and reach the element: not hidden from them (`aria-hidden`,
    // `inert`: the walk's context), not of zero size, not covered where it is in view (a hit
    // test of its centre and four more points). A native checkbox or radio with a label counts
    // as reachable through it (custom-styled ones hide the input under the label).
    function reachable(el, kind) {
      const r = el.getBoundingClientRect();
      const viaLabel = (kind === 'checkbox' || kind === 'radio') && el.tagName === 'INPUT' &&
        (labelsOf(el, labelIndex).length > 0);
      if ((r.width <= 0 || r.height <= 0) && !viaLabel) return false;
      if (el.ownerDocument !== document || viaLabel) return true;
      if (r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) return true;
      for (const [fx, fy] of [[0.5, 0.5], [0.2, 0.5], [0.8, 0.5], [0.5, 0.2], [0.5, 0.8]]) {
        const x = r.left + r.width * fx;
        const y = r.top + r.height * fy;
        if (x < 0 || y < 0 || x >= vw || y >= vh) continue;
        const hit = hitAt(x, y);
        if (!hit || hits(el, hit) || composedContains(hit, el)) return true;
      }
      // Under a small fixed or sticky bar (a header): scrolling reveals it.
      const top = hitAt(Math.min(vw - 1, Math.max(0, r.left + r.width / 2)),
        Math.min(vh - 1, Math.max(0, r.top + r.height / 2)));
      for (let c = top; c && c.nodeType === 1; c = parentOf(c)) {
        const pos = getComputedStyle(c).position;
        if (pos === 'fixed' || pos === 'sticky') {
          const b = c.getBoundingClientRect();
          return b.width * b.height < 0.4 * vw * vh;
        }
      }
      return false;
    }

    // `ctx`: what the element's ancestors say — `listening` (a click, pointer or key handler
    // sits on an ancestor, so a pointer-cursor element may be its delegated target),
    // `hidden` (under `aria-hidden` or `inert`), `operable` (inside an element that has a ref:
    // its pointer cursor and tab stops are its ancestor's), `cursor` (the parent's cursor).
    function visit(node, depth, inScope, ctx) {
      if (stopped) return;
      if (node.nodeType === 3) {
        if (depth <= maxDepth + 1) addText(node.data);
        return;
      }
      if (node.nodeType !== 1) {
        if (node.nodeType === 11) for (const c of node.childNodes) visit(c, depth, inScope, ctx);
        return;
      }
      const el = node;
      work += 1;
      if (work > lim.nodes || depth > 400) { stopped = true; omitted.add('work_limit'); return; }
      if ((work & 255) === 0 && performance.now() - t0 > lim.ms) {
        stopped = true; omitted.add('work_limit'); return;
      }
      const tag = el.tagName;
      if (SKIP.has(tag)) return;
      if (!visibleEl(el)) return;
      const within = depth <= maxDepth;
      let scoped = inScope;
      if (opts.scopes && el !== root && !inScope && isScope(el)) {
        const label = scopeLabel(el);
        if (scopes.length < lim.scopes) {
          scopes.push({ ref: scopeRef(el, label, state), label });
          reportBytes += label.length + 24;
        } else {
          omitted.add('target_limit');
        }
        scoped = true;
      }
      let role = null;
      let sig = 0;
      let offscreen = false;
      let display = '';
      let cursor = ctx.cursor;
      let listening = ctx.listening;
      let hidden = ctx.hidden || el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert');
      if (wantElements) {
        const marks = marksOf(el.ownerDocument);
        const own = marks ? (marks.get(el) || 0) : 0;
        if (own) listening = true;
        const cs = getComputedStyle(el);
        display = cs.display;
        cursor = cs.cursor;
        if (own && tag !== 'BODY' && tag !== 'HTML') sig |= SIG_LISTENER;
        if (!ctx.operable) {
          if (cursor === 'pointer' && ctx.cursor !== 'pointer' && (ctx.listening || !marks) &&
              tag !== 'BODY' && tag !== 'HTML') sig |= SIG_POINTER;
          if (tabStop(el)) sig |= SIG_FOCUSABLE;
        }
        role = kindOf(el, sig);
        // A large region with a handler (a page-wide click-outside handler on a wrapper) is
        // where handlers listen, not something to click.
        if (role && sig && !HAS_ROLE(el)) {
          const r = el.getBoundingClientRect();
          if (r.width * r.height >= 0.4 * vw * vh && el.children.length) role = null;
        }
        if (role && hidden) role = null;
        if (role && !reachable(el, role)) {
          // A control of zero size that the keyboard reaches (a skip link, a control shown on
          // focus) stays in a full read, marked off-screen: a person reaches it with Tab.
          if (!opts.enabledOnly && zeroSized(el) && el.tabIndex >= 0 && !disabled(el)) offscreen = true;
          else role = null;
        }
      } else {
        role = kindOf(el, 0);
        display = getComputedStyle(el).display;
      }
      // An element whose only signal is a handler of its own, without a pointer cursor, may be
      // where handlers for its children listen (a list or table delegating clicks to its rows):
      // its children are looked at as if it had no ref, and it loses its own when one of them
      // turns out to be a delegated target or a control with a role of its own is found inside
      // it (a list whose buttons and checkboxes the handler serves: its name would be all of
      // their names).
      const tentative = role && sig === SIG_LISTENER && cursor !== 'pointer' && !HAS_ROLE(el);
      let added = false;
      let addedAt = -1;
      let markAt = -1;
      let cut = false;
      const delegatedBefore = delegated;
      if (role) {
        if (within) {
          if (wantElements) {
            added = addElement(el, role, sig, offscreen);
            addedAt = elements.length - 1;
            markAt = lastMark;
            cut = lastCut;
          }
        } else if (wantElements) {
          omitted.add('target_limit');
        }
      }
      const block = BLOCK.has(tag);
      // An operable element, or one laid out as a box of its own (inline-block, a flex or grid
      // item), is separated from the text around it: two buttons never read "Okprevious".
      const boxed = !block && within && (role || (display && display !== 'inline' && display !== 'contents'));
      if (block && within) lineBreak();
      else if (boxed) addText(' ');
      const inner = { listening, hidden, operable: ctx.operable || (!!role && !tentative), cursor };
      if (tag === 'IFRAME' || tag === 'FRAME') {
        const d = frameDoc(el);
        if (d) visit(d.body, depth + 1, scoped, inner);
        else omitted.add('frame_limit');
      } else if (tag === 'INPUT' && role === 'button' && within) {
        addText(' ' + (el.value || '') + ' ');
      } else if (!VALUE_CONTENT.has(tag)) {
        for (const c of childrenOf(el)) {
          visit(c, depth + 1, scoped, inner);
          if (stopped) break;
        }
      } else if (within) {
        // A field's box separates the text around it: "Display name [____] Used by Account."
        // must not read "Display nameUsed by Account.".
        addText(' ');
      }
      if (within) {
        if (block) lineBreak();
        else if (CELL.has(tag) || boxed) addText(' ');
      }
      if (tentative && added && (delegated > delegatedBefore ||
          elements.slice(addedAt + 1).some((e) => e.role !== 'clickable'))) {
        elements[addedAt].dropped = true;
        elements.splice(addedAt, 1);
        if (markAt >= 0) parts[markAt] = '';
        if (cut) nameCuts -= 1;
      }
    }

    // Handlers on the document or the window (or any ancestor of a scoped root) make every
    // pointer-cursor element a possible delegated target.
    let rootListening = false;
    if (wantElements) {
      const marks = marksOf(document);
      rootListening = !marks || !!(marks.get(document));
      for (let a = parentOf(root); a && !rootListening; a = parentOf(a)) {
        if (a.nodeType === 1 && marks && marks.get(a)) rootListening = true;
      }
    }
    visit(root, 1, false, { listening: rootListening, hidden: false, operable: false, cursor: '' });
    issueRefs(pending.filter((p) => !p.item.dropped), state);
    if (nameCuts > 0) omitted.add('name_limit');
    let text = parts.join('').split('\n').map((l) => l.replace(/ {2,}/g, ' ').trim())
      .filter((l) => l).join('\n');
    return {
      doc: DOC,
      next: state.next,
      text,
      elements,
      scopes,
      omitted: Array.from(omitted),
      ms: performance.now() - t0,
      nodes: work,
    };
  }

  function lookup(ref, doc) {
    identity.flush();
    if (doc !== DOC) return { error: 'navigated' };
    const e = refs.get(ref);
    if (!e) return { error: 'unknown' };
    if (e.url !== location.href) return { error: 'navigated' };
    let el = e.node.deref();
    if (e.scope) {
      if (!el || !attached(el)) return { error: 'removed' };
      if (!visibleEl(el)) return { error: 'hidden' };
      if (scopeLabel(el) !== e.label) return { error: 'changed' };
      return { el, entry: e };
    }
    // A node replaced (detached) or given another row (a list patched in place) is followed to
    // the one element no reader could tell from it, or refused with what changed (refs.js).
    let rebound = false;
    const gone = !el || !attached(el);
    if (gone || !identity.stillAt(el, e.fp)) {
      const next = identity.successor(e, el);
      if (next.error && !gone) {
        const why = next.replaced.why === 'heading' ? 'heading' : 'row';
        return { error: 'changed', replaced: { ...next.replaced, why } };
      }
      if (next.error) return next;
      el = next.el;
      e.node = new WeakRef(el);
      refOf.set(el, ref);
      rebound = true;
    }
    const role = kindOf(el, e.sig || 0);
    if (role !== e.role || labelOf(el, role).label !== e.label) return { error: 'changed' };
    if (!visibleEl(el) || hiddenFromPeople(el)) return { error: 'hidden' };
    return { el, entry: e, rebound };
  }

  // Under `aria-hidden="true"` or `inert`, through shadow hosts and frames.
  function hiddenFromPeople(el) {
    for (let c = el; c; c = parentOf(c)) {
      if (c.nodeType === 1 && (c.getAttribute('aria-hidden') === 'true' || c.hasAttribute('inert'))) {
        return true;
      }
    }
    return false;
  }

  // Asks the listener log of `doc` (listeners.js, in the page's main world) which elements
  // have handlers: one probe event, answered synchronously by one mark event per element.
  // Returns element -> flags, or null when no log answered.
  function probe(doc, token) {
    if (!token) return null;
    const marks = new Map();
    let answered = false;
    const onMark = (e) => {
      const t = e.composedPath()[0];
      marks.set(t, (marks.get(t) || 0) | (Number(e.detail) || 0));
      e.stopImmediatePropagation();
    };
    const onAck = (e) => { answered = true; e.stopImmediatePropagation(); };
    doc.addEventListener(token + ':mark', onMark, true);
    doc.addEventListener(token + ':ack', onAck, true);
    try {
      doc.dispatchEvent(new CustomEvent(token + ':probe'));
    } finally {
      doc.removeEventListener(token + ':mark', onMark, true);
      doc.removeEventListener(token + ':ack', onAck, true);
    }
    return answered ? marks : null;
  }

  // --- geometry -------------------------------------------------------------------------------

  // Offset of a frame's viewport inside the top viewport.
  function frameOffset(win) {
    let x = 0;
    let y = 0;
    while (win !== window) {
      const f = win.frameElement;
      if (!f) break;
      const r = f.getBoundingClientRect();
      const cs = getComputedStyle(f);
      x += r.left + f.clientLeft + (parseFloat(cs.paddingLeft) || 0);
      y += r.top + f.clientTop + (parseFloat(cs.paddingTop) || 0);
      win = f.ownerDocument.defaultView;
    }
    return { x, y };
  }

  // The element's box in top-viewport CSS pixels, clipped to the viewport.
  function box(el) {
    const r = el.getBoundingClientRect();
    const off = frameOffset(el.ownerDocument.defaultView);
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const left = Math.max(0, r.left + off.x);
    const top = Math.max(0, r.top + off.y);
    const right = Math.min(vw, r.right + off.x);
    const bottom = Math.min(vh, r.bottom + off.y);
    return { left, top, right, bottom, w: right - left, h: bottom - top };
  }

  function inView(el) {
    const b = box(el);
    const r = el.getBoundingClientRect();
    return b.w >= Math.min(r.width, 1) && b.h >= Math.min(r.height, 1) &&
      b.w >= r.width - 1 && b.h >= r.height - 1;
  }

  function hitAt(x, y) {
    let doc = document;
    let ox = 0;
    let oy = 0;
    let hit = doc.elementFromPoint(x, y);
    for (let guard = 0; hit && guard < 64; guard++) {
      if (hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (inner && inner !== hit) { hit = inner; continue; }
      }
      if (hit.tagName === 'IFRAME' || hit.tagName === 'FRAME') {
        const d = frameDoc(hit);
        if (d) {
          const r = hit.getBoundingClientRect();
          const cs = getComputedStyle(hit);
          ox += r.left + hit.clientLeft + (parseFloat(cs.paddingLeft) || 0);
          oy += r.top + hit.clientTop + (parseFloat(cs.paddingTop) || 0);
          doc = d;
          const inner = d.elementFromPoint(x - ox, y - oy);
          if (inner) { hit = inner; continue; }
        }
      }
      break;
    }
    return hit;
  }

  function hits(el, hit) {
    if (!hit) return false;
    if (composedContains(el, hit)) return true;
    // A label that activates the control (custom-styled checkboxes hide the input under it).
    const lab = hit.closest ? hit.closest('label') : null;
    return !!(lab && lab.control === el);
  }

  // A guard on the next press. The point was found on the element, but the page may move
  // before the press arrives (a late banner, an animation): a press that lands on anything
  // else is stopped, with its release and click, before the page's own listeners see it, and
  // `settled` (with `guard`) says 'missed' so the driver can find the point again. Listeners sit on the
  // element's window and the top window, in the capture phase; a page listener registered on
  // the window before them still sees a stopped event.
  let guard = null;
  const PRESSES = ['pointerdown', 'mousedown'];
  const FOLLOWERS = ['pointerup', 'mouseup', 'click', 'auxclick', 'dblclick', 'contextmenu'];

  function disarmGuard() {
    if (!guard) return 'none';
    const g = guard;
    guard = null;
    for (const w of g.wins) {
      for (const t of PRESSES) w.removeEventListener(t, g.onPress, true);
      for (const t of FOLLOWERS) w.removeEventListener(t, g.onFollower, true);
    }
    return g.state;
  }

  // Resolves once the guarded press has been released (the click, dispatched in the same task
  // as the release, has run by the next turn), or after `ms`. The browser can acknowledge the
  // input before the page has handled it: a look that disarmed the guard then would answer
  // before the click's effect and leave the press unguarded.
  function released(ms) {
    const g = guard;
    if (!g || g.released) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      g.onRelease = () => { clearTimeout(timer); resolve(); };
    });
  }

  function armGuard(el) {
    disarmGuard();
    const g = { state: 'none', wins: [], released: false, onRelease: null };
    const stop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
    g.onPress = (e) => {
      if (g.state === 'none') g.state = hits(el, e.composedPath()[0]) ? 'hit' : 'missed';
      if (g.state === 'missed') stop(e);
    };
    g.onFollower = (e) => {
      if (g.state === 'missed') stop(e);
      if (g.state !== 'none' && !g.released && (e.type === 'mouseup' || e.type === 'pointerup')) {
        g.released = true;
        if (g.onRelease) g.onRelease();
      }
    };
    for (const w of new Set([window, el.ownerDocument.defaultView])) {
      if (!w) continue;
      g.wins.push(w);
      for (const t of PRESSES) w.addEventListener(t, g.onPress, true);
      for (const t of FOLLOWERS) w.addEventListener(t, g.onFollower, true);
    }
    guard = g;
  }

  // Scrolls the element into view when it is not, then finds a point of it that is on top.
  function target(el) {
    if (!inView(el)) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const b = box(el);
    if (b.w <= 0 || b.h <= 0) return { error: 'offscreen' };
    const candidates = [[0.5, 0.5], [0.25, 0.5], [0.75, 0.5], [0.5, 0.25], [0.5, 0.75],
      [0.15, 0.15], [0.85, 0.85]];
    for (const [fx, fy] of candidates) {
      const x = b.left + b.w * fx;
      const y = b.top + b.h * fy;
      if (hits(el, hitAt(x, y))) return { x, y };
    }
    return { error: 'covered' };
  }

  function resolve(a) {
    const found = lookup(a.ref, a.doc);
    if (found.error) return found;
    // Aiming a pointer or focusing for typing comes right before an action's input.
    if (a.point || a.focus) armWatch(a.token);
    const el = found.el;
    const out = { role: found.entry.role, scope: found.entry.scope, tag: el.tagName, rebound: !!found.rebound };
    if (found.entry.scope) return out;
    if (a.point) {
      const t = target(el);
      if (t.error) return t;
      out.x = t.x;
      out.y = t.y;
      if (a.guard) armGuard(el);
    } else if (a.scroll) {
      if (!inView(el)) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
    if (a.checked) out.checked = checkedOf(el);
    if (a.focus) {
      el.focus({ preventScroll: true });
      const active = deepActive();
      if (!active || !composedContains(el, active)) return { error: 'unfocusable' };
      if (a.selectAll) {
        if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
          try { el.select(); } catch (e) { /* not selectable */ }
        } else if (el.isContentEditable) {
          const sel = el.ownerDocument.getSelection();
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(el);
          sel.removeAllRanges();
          sel.addRange(range);
        }
      }
    }
    return out;
  }

  function deepActive() {
    let a = document.activeElement;
    for (let guard = 0; a && guard < 64; guard++) {
      if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
      if ((a.tagName === 'IFRAME' || a.tagName === 'FRAME')) {
        const d = frameDoc(a);
        if (d && d.activeElement && d.activeElement !== d.body) { a = d.activeElement; continue; }
      }
      break;
    }
    return a;
  }

  function selectOption(a) {
    const found = lookup(a.ref, a.doc);
    if (found.error) return found;
    armWatch(a.token);
    const el = found.el;
    if (el.tagName !== 'SELECT') return { error: 'not_select' };
    if (el.disabled) return { error: 'disabled' };
    const wanted = a.values;
    const opts = Array.from(el.options);
    const matched = [];
    for (const v of wanted) {
      let o = opts.find((x) => x.value === v && !x.disabled);
      if (!o) o = opts.find((x) => norm(x.label || x.text) === norm(v) && !x.disabled);
      if (!o) return { error: 'no_option' };
      if (!matched.includes(o)) matched.push(o);
    }
    if (!el.multiple && matched.length !== 1) return { error: 'single' };
    if (!inView(el)) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    el.focus({ preventScroll: true });
    for (const o of opts) o.selected = matched.includes(o);
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { n: matched.length, rebound: !!found.rebound };
  }

  // Inputs whose value is not typed character by character in Chromium: a date, time or colour
  // field shows segments or a picker, and inserted text never reaches its value.
  const VALUE_INPUTS = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];

  // Sets such an input's value the way the page's own script would see a person do it: through
  // the native setter (so frameworks that wrap `value` notice), then `input` and `change`.
  function setValue(a) {
    const found = lookup(a.ref, a.doc);
    if (found.error) return found;
    const el = found.el;
    if (el.tagName !== 'INPUT' || !VALUE_INPUTS.includes(el.type)) return { error: 'not_value_input', rebound: !!found.rebound };
    if (el.disabled || el.readOnly) return { error: 'disabled' };
    if (!inView(el)) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    el.focus({ preventScroll: true });
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    const before = el.value;
    setter.call(el, a.value);
    // The browser sanitises a value it cannot parse to "" (or clamps a range): refuse rather than
    // leave the field silently different from what was asked.
    if (el.value !== a.value && !(el.type === 'color' && el.value === a.value.toLowerCase())) {
      setter.call(el, before);
      return { error: 'invalid_value', type: el.type };
    }
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { type: el.type, rebound: !!found.rebound };
  }

  // --- waiting --------------------------------------------------------------------------------

  // The action watch: armed when an action resolves its target (before any input reaches the
  // page), it counts the document's changes from then on, so the settle after the action knows
  // whether the action changed anything and when the page last changed. It stops observing by
  // itself a few seconds after its last use.
  const watch = { armed: 0, n: 0, first: 0, last: 0, observer: null, stop: null, seen: new WeakMap(),
    token: null, requests: null };
  const WATCH_IDLE_MS = 5000;
  // How long a look waits for the guarded press to be released (see `released`).
  const RELEASE_MS = 1000;
  function keepWatching() {
    clearTimeout(watch.stop);
    watch.stop = setTimeout(() => { watch.observer.disconnect(); watch.observer = null; }, WATCH_IDLE_MS);
  }
  // How many requests (fetch, XMLHttpRequest) the page's scripts have started, from the listener
  // log in the page's main world (listeners.js); null when none answers.
  function requestsStarted(token) {
    if (!token) return null;
    let n = null;
    const onCount = (e) => { n = Number(e.detail) || 0; e.stopImmediatePropagation(); };
    document.addEventListener(token + ':count', onCount, true);
    try {
      document.dispatchEvent(new CustomEvent(token + ':requests'));
    } finally {
      document.removeEventListener(token + ':count', onCount, true);
    }
    return n;
  }
  function armWatch(token) {
    watch.token = token || null;
    watch.requests = requestsStarted(watch.token);
    if (!watch.observer) {
      watch.observer = new MutationObserver((records) => {
        const now = performance.now();
        let real = false;
        for (const r of records) if (!repeatingIn(watch.seen, r, now)) real = true;
        if (!real) return;
        if (!watch.n) watch.first = now;
        watch.n += records.length;
        watch.last = now;
      });
      watch.observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    }
    watch.armed = performance.now();
    watch.n = 0;
    keepWatching();
  }

  // After an action: resolves once the page has had a turn (the tasks the input queued, such as
  // `hashchange` or a framework's batched render, have run) and, when the action changed the
  // document, no change has come for `quietMs` (0 after the action itself; the action's quiet
  // before the tab's next call); or after `capMs`. An action that changed nothing answers after
  // that one turn. `armed: false` says no watch was armed in this document (it is a new one), so
  // the caller settles the long way. With `guard`, the guarded press is waited for (`released`),
  // then the guard removed and its verdict returned (a click's first look is one call).
  async function settled(a) {
    const start = performance.now();
    let guarded = null;
    if (a.guard) {
      await released(Math.min(a.capMs, RELEASE_MS));
      // The click (and auxclick, dblclick) comes in the release's task, after this
      // continuation: disarm only a turn later, or a stray press's click would pass unguarded.
      await new Promise((resolve) => setTimeout(resolve, 0));
      guarded = disarmGuard();
    }
    return new Promise((resolve) => {
      const finish = (quiet) => {
        if (watch.observer) keepWatching();
        resolve({
          guard: guarded,
          armed: watch.armed > 0,
          quiet,
          mutations: watch.n,
          firstMs: watch.n ? watch.first - watch.armed : null,
          lastMs: watch.n ? performance.now() - watch.last : null,
          requests: watch.requests === null ? null : requestsStarted(watch.token) - watch.requests,
          waitedMs: performance.now() - start,
        });
      };
      const check = () => {
        const now = performance.now();
        if (now - start >= a.capMs) return finish(false);
        if (!watch.n || now - watch.last >= a.quietMs) return finish(true);
        setTimeout(check, Math.max(1, a.quietMs - (now - watch.last)));
      };
      setTimeout(check, 0);
    });
  }

  // Resolves once no mutation has happened for `quietMs`, or after `capMs`. An animation is
  // not a change to wait for: an attribute that changes again on the same element within
  // ANIMATION_MS of its last change (a style or transform set every frame, an SVG attribute
  // tweened by script) re-arms nothing after its first change; CSS animations and canvas
  // drawing make no mutations at all. Text and children always count (content streaming in).
  const ANIMATION_MS = 250;
  // Whether a mutation repeats an attribute change made on the same element within ANIMATION_MS
  // (`seen` remembers when each element's attributes last changed).
  function repeatingIn(seen, r, now) {
    if (r.type !== 'attributes') return false;
    let attrs = seen.get(r.target);
    if (!attrs) { attrs = new Map(); seen.set(r.target, attrs); }
    const last = attrs.get(r.attributeName);
    attrs.set(r.attributeName, now);
    return last !== undefined && now - last < ANIMATION_MS;
  }
  function quiet(a) {
    return new Promise((resolve) => {
      let n = 0;
      let animated = 0;
      const start = performance.now();
      let timer = null;
      const changed = new WeakMap();
      const done = (ok) => {
        observer.disconnect();
        clearTimeout(timer);
        clearTimeout(cap);
        resolve({ quiet: ok, mutations: n, animated, ms: performance.now() - start });
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => done(true), a.quietMs);
      };
      const repeating = (r, now) => repeatingIn(changed, r, now);
      const observer = new MutationObserver((records) => {
        const now = performance.now();
        let real = false;
        for (const r of records) {
          if (repeating(r, now)) animated += 1;
          else real = true;
        }
        n += records.length;
        if (real) arm();
      });
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const cap = setTimeout(() => done(false), a.capMs);
      arm();
    });
  }

  function visibleText() {
    const root = document.body || document.documentElement;
    return walk(root, {
      mode: 'text', depth: 0, scopes: false, next: 0, values: false,
      limits: { textBytes: 4 << 20, elements: 0, reportBytes: 8 << 20, nodes: 500000,
        ms: 2000, options: 0, scopes: 0 },
    }).text;
  }

  // Resolves true once the whitespace-normalised visible text contains `a.text`, false after
  // `a.timeoutMs`. Re-checks only when the DOM changes (in the document, open shadow roots and
  // same-origin frames), at most once per 16 ms.
  function waitText(a) {
    const needle = a.text;
    return new Promise((resolve) => {
      const observed = new WeakSet();
      let scheduled = false;
      let last = 0;
      let finished = false;
      const observer = new MutationObserver(() => schedule());
      const watch = (root) => {
        if (observed.has(root)) return;
        observed.add(root);
        observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
      };
      const watchAll = (root) => {
        const stack = [root];
        let budget = 200000;
        while (stack.length && budget-- > 0) {
          const n = stack.pop();
          if (n.shadowRoot) { watch(n.shadowRoot); stack.push(...n.shadowRoot.children); }
          if (n.tagName === 'IFRAME' || n.tagName === 'FRAME') {
            const d = frameDoc(n);
            if (d) { watch(d); stack.push(d.documentElement); }
          }
          if (n.children) for (const c of n.children) stack.push(c);
        }
      };
      const finish = (v) => {
        if (finished) return;
        finished = true;
        observer.disconnect();
        clearTimeout(timeout);
        resolve(v);
      };
      const check = () => {
        scheduled = false;
        last = performance.now();
        if (norm(visibleText()).includes(needle)) { finish(true); return; }
        watchAll(document.documentElement);
      };
      const schedule = () => {
        if (scheduled || finished) return;
        scheduled = true;
        const wait = Math.max(0, 16 - (performance.now() - last));
        setTimeout(check, wait);
      };
      const timeout = setTimeout(() => finish(false), a.timeoutMs);
      watch(document);
      check();
    });
  }

  // Returned as JSON text: one string crosses the protocol faster than a large object.
  function read(opts) {
    let root = document.body || document.documentElement;
    if (opts.root) {
      const found = lookup(opts.root, opts.rootDoc);
      if (found.error) return JSON.stringify({ error: found.error });
      if (!found.entry.scope) return JSON.stringify({ error: 'not_scope' });
      root = found.el;
    }
    return JSON.stringify(walk(root, opts));
  }

  globalThis.__hands = {
    doc: DOC,
    read,
    resolve,
    selectOption,
    setValue,
    quiet,
    settled,
    waitText,
    viewport: () => ({ w: window.innerWidth, h: window.innerHeight }),
    focused: () => {
      const a = deepActive();
      return a && a !== document.body ? a.tagName : null;
    },
  };
  return DOC;
}
