// Labels for what has no text (docs/decisions.md, "Names for targets without text"): the text a
// person reads beside a control, an icon's hint or glyph class, and what a target looks like (an
// SVG shape and its fill, a colour's name, an image's file name). AGENT_JS puts this file,
// refs.js and agent.js in one function; `h` is agent.js's helpers.
function labelLooks(h) {
  'use strict';
  const { SKIP, FIELD_TAGS, norm, visibleEl, nameText } = h;

  // Text a person reads beside an element that has no name of its own: the nearest text
  // before or after it among its siblings, then its parent's siblings (two levels up), never
  // the text of another control.
  function besideText(el) {
    const textOf = (n) => {
      if (n.nodeType === 3) return norm(n.data);
      if (n.nodeType !== 1 || SKIP.has(n.tagName) || !visibleEl(n)) return '';
      if (FIELD_TAGS.has(n.tagName) || n.tagName === 'BUTTON' || n.tagName === 'A' ||
          (n.querySelector && n.querySelector('input,select,textarea,button,a[href],[role]'))) return null;
      return norm(nameText(n, 200));
    };
    for (let node = el, depth = 0; node && depth < 3; node = node.parentElement, depth++) {
      if (node.tagName === 'BODY') break;
      for (const step of ['nextSibling', 'previousSibling']) {
        for (let s = node[step]; s; s = s[step]) {
          const t = textOf(s);
          if (t === null) break;
          if (t) return t;
        }
      }
    }
    return '';
  }

  // A hint an icon gives of what it does: an SVG `<title>`, a labelled or titled descendant,
  // the symbol an SVG `<use>` draws (`#icon-close` → "close").
  function iconHint(el) {
    const t = el.querySelector && el.querySelector('title');
    if (t && norm(t.textContent || '')) return norm(t.textContent || '');
    const inner = el.querySelector && el.querySelector('[aria-label],[title]');
    if (inner) {
      const l = norm(inner.getAttribute('aria-label') || inner.getAttribute('title') || '');
      if (l) return l;
    }
    const use = el.querySelector && el.querySelector('use');
    if (use) {
      const ref = use.getAttribute('href') || use.getAttribute('xlink:href') || '';
      const name = ref.split('#').pop().replace(/^(icon|ico|i|svg|sprite)[-_]/i, '').replace(/[-_]+/g, ' ');
      if (norm(name)) return norm(name);
    }
    return '';
  }

  // Colour names a person would say, each with its sRGB value: the nearest names a colour
  // (a hover that darkens a swatch a little keeps its name).
  const COLOURS = [['black', 0, 0, 0], ['white', 255, 255, 255], ['gray', 128, 128, 128],
    ['silver', 192, 192, 192], ['red', 255, 0, 0], ['maroon', 128, 0, 0],
    ['orange', 255, 165, 0], ['yellow', 255, 255, 0], ['olive', 128, 128, 0],
    ['lime', 0, 255, 0], ['green', 0, 128, 0], ['teal', 0, 128, 128], ['cyan', 0, 255, 255],
    ['blue', 0, 0, 255], ['navy', 0, 0, 128], ['purple', 128, 0, 128],
    ['magenta', 255, 0, 255], ['pink', 255, 192, 203], ['brown', 165, 42, 42]];

  // The name of a computed colour (`rgb(…)` / `rgba(…)`), or '' when it is transparent.
  function colourName(css) {
    const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?/.exec(css || '');
    if (!m || (m[4] !== undefined && Number(m[4]) < 0.1)) return '';
    const [r, g, b] = [Number(m[1]), Number(m[2]), Number(m[3])];
    let best = '';
    let dist = Infinity;
    for (const [name, cr, cg, cb] of COLOURS) {
      const d = (r - cr) ** 2 + (g - cg) ** 2 + (b - cb) ** 2;
      if (d < dist) { dist = d; best = name; }
    }
    return best;
  }

  // SVG shapes and what a person calls them.
  const SHAPES = { circle: 'circle', ellipse: 'ellipse', rect: 'rectangle', polygon: 'polygon',
    path: 'shape', line: 'line', polyline: 'line' };

  // "red circle": an SVG shape by its fill (its stroke when unfilled) and its kind.
  function shapeName(el) {
    let shape = SHAPES[el.localName];
    if (!shape) return '';
    if (shape === 'rectangle') {
      const b = el.getBoundingClientRect();
      if (b.width > 0 && Math.abs(b.width - b.height) < 1) shape = 'square';
    } else if (shape === 'polygon') {
      const n = (el.getAttribute('points') || '').trim().split(/[\s,]+/).length / 2;
      if (n === 3) shape = 'triangle';
    }
    const cs = getComputedStyle(el);
    const colour = (cs.fill && cs.fill !== 'none' ? colourName(cs.fill) : '') ||
      colourName(cs.stroke);
    return colour ? colour + ' ' + shape : shape;
  }

  // The words of an image's file name: `/img/trash-can@2x.png` → "trash can".
  function fileWords(url) {
    if (!url || url.startsWith('data:')) return '';
    let name = url.split(/[?#]/)[0].split('/').pop() || '';
    try { name = decodeURIComponent(name); } catch (e) { /* keep it encoded */ }
    return norm(name.replace(/\.[a-z0-9]{2,5}$/i, '').replace(/@\dx$/i, '')
      .replace(/[-_.+]+/g, ' ').replace(/\b(icon|ico|img|image|btn)\b/gi, ' '));
  }

  // Icon fonts name their glyph in a class: `fa fa-trash`, `bi-gear`, `glyphicon-star`.
  const ICON_CLASS = /^(?:fa[srlbdk]?|fas|far|fab|bi|glyphicon|mdi|ion|ti|la|icon|oi|octicon|feather|ri|bx|uil)-(?!(?:lg|xs|sm|[0-9]+x|fw|spin|pulse|border|inverse|stack|solid|regular|light|brands|flip.*|rotate.*|pull.*)$)([a-z0-9-]+)$/i;

  function iconClass(el) {
    for (const n of [el, ...(el.querySelectorAll ? el.querySelectorAll('i,span,svg,em') : [])].slice(0, 8)) {
      const list = n.classList ? Array.from(n.classList) : [];
      for (const c of list) {
        const m = ICON_CLASS.exec(c);
        if (m) return norm(m[1].replace(/-/g, ' '));
      }
    }
    return '';
  }

  // What a person sees of an element that has no text: an SVG shape and its colour, an
  // image's file name, an icon font's class, the element's own colour. A shape that is the
  // target itself (a pie's slice) names it; free-form paths inside it (an icon's strokes) say
  // little: they count only with `paths` (after the text beside it).
  function looks(el, paths) {
    const own = shapeName(el);
    if (own) return own;
    const shapes = [];
    if (el.querySelectorAll) {
      for (const s of el.querySelectorAll('circle,ellipse,rect,polygon,path,line,polyline')) {
        if (!paths && s.localName === 'path') continue;
        const n = shapeName(s);
        if (n && !shapes.includes(n)) shapes.push(n);
        if (shapes.length >= 3) break;
      }
    }
    const img = el.tagName === 'IMG' ? el : (el.querySelector ? el.querySelector('img') : null);
    const file = img ? fileWords(img.currentSrc || img.getAttribute('src') || '') : '';
    if (file) return file;
    const icon = iconClass(el);
    if (icon) return icon;
    if (shapes.length) return shapes.join(' and ');
    const cs = getComputedStyle(el);
    const bg = /url\(["']?([^"')]+)/.exec(cs.backgroundImage || '');
    if (bg && fileWords(bg[1])) return fileWords(bg[1]);
    // An element's own colour names it before the text beside it only among look-alikes (a
    // palette of swatches, where that text is the same for all); alone (a slider's track) it
    // comes after.
    if (!paths && !lookAlikes(el)) return '';
    const colour = colourName(cs.backgroundColor);
    return colour ? colour + ' ' + (el.localName === 'svg' ? 'image' : 'box') : '';
  }

  // Whether the element has at least two siblings of its tag and classes.
  function lookAlikes(el) {
    const parent = el.parentElement;
    if (!parent) return false;
    const cls = el.getAttribute('class');
    let n = 0;
    for (const c of parent.children) {
      if (c !== el && c.tagName === el.tagName && c.getAttribute('class') === cls && ++n >= 2) return true;
    }
    return false;
  }

  return { besideText, iconHint, iconClass, fileWords, looks };
}
