// Ref identity (docs/decisions.md, "A ref follows its re-rendered element only when no reader
// could tell the two apart"): what a ref's element looked like when it was read (its
// fingerprint), and the one element that matches it after a re-render replaced or re-purposed
// the node. AGENT_JS puts this file, labels.js and agent.js in one function; `h` is agent.js's
// helpers.
function refIdentity(h) {
  'use strict';
  // A row's text longer than this is no key (a ref read inside it is not followed).
  const TEXT_MAX = 4000;
  const LETTER = /[\p{L}\p{N}]/u;

  // A subtree's text as a key (`textContent`: every text in it, names of the controls in it
  // included; field values never, so typing in a row does not change it), null past TEXT_MAX.
  function textOf(root, cache) {
    let t = cache.get(root);
    if (t === undefined) {
      const all = root.textContent || '';
      t = all.length > TEXT_MAX ? null : h.norm(all);
      cache.set(root, t);
    }
    return t;
  }

  // Whether a letter or digit of the subtree's text lies outside the controls in it.
  function freeText(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!LETTER.test(n.data)) continue;
      let inControl = false;
      for (let a = n.parentElement; a && a !== root; a = a.parentElement) {
        if (h.SKIP.has(a.tagName) || h.kindOf(a, 0) !== null) { inControl = true; break; }
      }
      if (!inControl) return true;
    }
    return false;
  }

  // The element's place: the tags and ids of it and its ancestors up to its tree's root (a
  // document or shadow root). A row moved to another list keeps its text but not its place.
  function pathOf(el, cache) {
    if (!el) return '';
    let p = cache.get(el);
    if (p === undefined) {
      p = '/' + el.localName + (el.id ? '#' + el.id : '') + pathOf(el.parentElement, cache);
      cache.set(el, p);
    }
    return p;
  }

  // The text of the nearest heading at or before the element in its tree ('' when none): what
  // a person reads as the section an element without a row of its own belongs to.
  function headingOf(el, ctx) {
    const root = el.getRootNode();
    let list = ctx.headings.get(root);
    if (!list) {
      list = root.querySelectorAll ? Array.from(root.querySelectorAll('h1,h2,h3,h4,h5,h6,[role=heading]')) : [];
      ctx.headings.set(root, list);
    }
    let lo = 0;
    let hi = list.length - 1;
    let found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] === el || list[mid].compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) {
        found = list[mid];
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found ? textOf(found, ctx.texts) : '';
  }

  function liveRoot(root) {
    if (!root) return false;
    if (root.nodeType === 11) return !!root.host && h.attached(root.host);
    if (root === document) return true;
    const w = root.defaultView;
    return !!(w && w.frameElement && h.attached(w.frameElement));
  }

  // Per read (or per look-up): the texts computed, the label index, the look-alike groups.
  function context() {
    return { texts: new Map(), labels: new Map(), groups: new Map(), paths: new Map(), headings: new Map() };
  }

  // The elements of `root` a reader could take for one another: same tag, role and label (and,
  // for elements operable only through their handlers, same class), in document order.
  function lookAlikes(root, tag, cls, sig, role, label, ctx) {
    const k = tag + '\0' + (cls === null ? '-' : cls) + '\0' + (sig ? 1 : 0);
    let byRoot = ctx.groups.get(root);
    if (!byRoot) { byRoot = new Map(); ctx.groups.set(root, byRoot); }
    let groups = byRoot.get(k);
    if (!groups) {
      groups = new Map();
      for (const c of root.querySelectorAll(CSS.escape(tag))) {
        if (cls !== null && String(c.getAttribute('class') || '') !== cls) continue;
        const r = h.kindOf(c, sig);
        if (!r) continue;
        const key = r + '\0' + h.labelOf(c, r, ctx.labels).label;
        const list = groups.get(key);
        if (list) list.push(c);
        else groups.set(key, [c]);
      }
      byRoot.set(k, groups);
    }
    return groups.get(role + '\0' + label) || [];
  }

  // Whether `a` holds a look-alike of `el` other than `el` (look-alikes are in document order,
  // and an element's subtree is a run of it: holding any, it holds the one before or after).
  function holdsOther(a, el, alikes) {
    if (alikes.length < 2) return false;
    if (!alikes.pos) alikes.pos = new Map(alikes.map((c, i) => [c, i]));
    const got = alikes.pos.get(el);
    const i = got === undefined ? -1 : got;
    const prev = i > 0 ? alikes[i - 1] : null;
    const next = i >= 0 && i + 1 < alikes.length ? alikes[i + 1] : null;
    return !!((prev && a.contains(prev)) || (next && a.contains(next)));
  }

  function top(a) {
    return !a || a.tagName === 'BODY' || a.tagName === 'HTML';
  }

  // The text of the element's row: for an element with look-alikes, the nearest ancestor
  // holding no other look-alike whose text has more than its label and some outside controls
  // (a list item, a table row), else the highest ancestor holding none of them. Undefined: a
  // unique element, identified by its name and the nearest heading, never by the text around it
  // (a form's submit button sits in a form whose summary and messages change as it is filled:
  // that is not another item). Null: no row could be keyed (too long, or it shares its container
  // with a look-alike, or unique in a shadow tree, whose host's slotted content may be what
  // tells one component from another: never followed).
  function rowOf(el, label, alikes, ctx) {
    if (alikes.length < 2) return el.getRootNode().nodeType === 11 ? null : undefined;
    let highest = el;
    for (let a = el.parentElement; !top(a); a = a.parentElement) {
      if (holdsOther(a, el, alikes)) break;
      highest = a;
      const t = textOf(a, ctx.texts);
      if (t === null) return null;
      if (t !== label && freeText(a)) return t;
    }
    return highest === el ? null : textOf(highest, ctx.texts);
  }

  // Elements given a ref by the read running now, fingerprinted together when it ends (a
  // microtask: nothing of the page runs in between), their look-alikes taken from the read
  // itself (a look-alike it did not report makes a re-bind refuse, never misfire).
  let pending = null;

  function note(entry, el) {
    if (!pending) {
      pending = [];
      queueMicrotask(flush);
    }
    pending.push([entry, el]);
  }

  // What each ref of the last read keeps of its element: root, tag (and class, for an element
  // operable only through its handlers), place, row; and whether a twin shares all of it.
  function flush() {
    if (!pending) return;
    const items = pending;
    pending = null;
    const ctx = context();
    const groups = new Map();
    const keyOf = (e, el) => {
      const cls = e.sig ? String(el.getAttribute('class') || '') : null;
      return [cls, el.localName + '\0' + cls + '\0' + e.role + '\0' + e.label];
    };
    for (const [e, el] of items) {
      const root = el.getRootNode();
      const [, key] = keyOf(e, el);
      let byRoot = groups.get(root);
      if (!byRoot) { byRoot = new Map(); groups.set(root, byRoot); }
      const list = byRoot.get(key);
      if (list) list.push(el);
      else byRoot.set(key, [el]);
    }
    for (const byRoot of groups.values()) {
      for (const list of byRoot.values()) {
        if (list.length > 1) list.sort((x, y) => (x.compareDocumentPosition(y) & 4 ? -1 : 1));
      }
    }
    const twins = new Map();
    for (const [e, el] of items) {
      const root = el.getRootNode();
      const [cls, key] = keyOf(e, el);
      const alikes = groups.get(root).get(key);
      const fp = { root: new WeakRef(root), tag: el.localName, cls, path: pathOf(el, ctx.paths),
        row: rowOf(el, e.label, alikes, ctx), dup: false };
      if (fp.row === undefined) fp.heading = headingOf(el, ctx);
      e.fp = fp;
      if (fp.row === undefined || fp.row === null) continue;
      const twin = fp.path + '\0' + key + '\0' + fp.row;
      const other = twins.get(twin);
      if (other) { other.dup = true; fp.dup = true; } else twins.set(twin, fp);
    }
  }

  // Whether `c` (a look-alike now) sits where the fingerprint's element sat: same place, and an
  // ancestor-or-self holding no other look-alike with the row's text.
  function sitsAt(c, fp, alikes, ctx) {
    if (pathOf(c, ctx.paths) !== fp.path) return false;
    if (fp.row === undefined) return headingOf(c, ctx) === fp.heading;
    for (let a = c; !top(a); a = a.parentElement) {
      if (a !== c && holdsOther(a, c, alikes)) return false;
      const t = textOf(a, ctx.texts);
      if (t === null || t.length > fp.row.length) return false;
      if (t === fp.row) return true;
    }
    return false;
  }

  // Whether a live element still sits in its row (a framework that patches a list in place
  // gives the same node another item's row).
  function stillAt(el, fp) {
    if (!fp || fp.row === null) return true;
    const ctx = context();
    if (fp.row === undefined) return headingOf(el, ctx) === fp.heading;
    for (let a = el; !top(a); a = a.parentElement) {
      const t = textOf(a, ctx.texts);
      if (t === null || t.length > fp.row.length) return false;
      if (t === fp.row) return true;
    }
    return false;
  }

  // The one element that is the ref's element now, or why there is none: {el} or
  // {error: 'removed', replaced: {why, n, role, label}}. `old` is its node, detached or moved
  // out of its row.
  function successor(e, old) {
    const fp = e.fp;
    const refuse = (why, n) => ({ error: 'removed', replaced: { why, n: n || 0, role: e.role, label: e.label } });
    if (!fp || fp.row === null) return refuse('unkeyed');
    const root = fp.root.deref();
    if (!liveRoot(root)) return refuse('frame');
    if (fp.dup) return refuse('twins');
    const ctx = context();
    const alikes = lookAlikes(root, fp.tag, fp.cls, e.sig || 0, e.role, e.label, ctx);
    const live = alikes.filter((c) => c !== old);
    if (!live.length) return refuse('gone');
    // Unique and without a row when read: its name alone identified it.
    if (fp.row === undefined && live.length > 1) return refuse('many', live.length);
    const found = live.filter((c) => sitsAt(c, fp, alikes, ctx));
    if (found.length === 1) return { el: found[0] };
    if (found.length) return refuse('many', found.length);
    return refuse(fp.row === undefined ? 'heading' : 'moved', live.length);
  }

  return { note, flush, successor, stillAt };
}
