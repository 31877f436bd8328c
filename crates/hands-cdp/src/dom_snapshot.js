// A DOM snapshot for a run's trace (issue 22): the main document serialized as HTML by a walk of
// its own, in an isolated world. Open shadow roots come as declarative `<template
// shadowrootmode>`; a frame is noted (its URL), not entered; script contents, event-handler
// attributes and `javascript:` URLs are dropped; the value of a password field is never written
// (nor any field's typed value: only the page's own `value` attribute, and not a password's).
// Capped at `max` characters, with a note where it was cut.
function (max) {
  const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link',
    'meta', 'source', 'track', 'wbr']);
  const esc = (s, attr) => s.replace(attr ? /[&"]/g : /[&<>]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  const out = [];
  let size = 0;
  let cut = false;
  const put = (s) => {
    if (cut) return;
    if (size + s.length > max) { cut = true; out.push('\n<!-- hands: cut at ' + max + ' characters -->'); return; }
    size += s.length;
    out.push(s);
  };
  const walk = (node) => {
    if (cut) return;
    switch (node.nodeType) {
      case 3: put(esc(node.data, false)); return;
      case 11: for (const c of node.childNodes) walk(c); return;
      case 1: break;
      default: return;
    }
    const tag = node.localName;
    const password = tag === 'input' && (node.type || '').toLowerCase() === 'password';
    let open = '<' + tag;
    for (const a of node.attributes) {
      const name = a.name.toLowerCase();
      if (name.startsWith('on')) continue;
      if (password && name === 'value') continue;
      let value = a.value;
      if (/^\s*javascript:/i.test(value)) value = 'javascript:';
      open += ' ' + a.name + '="' + esc(value, true) + '"';
    }
    put(open + '>');
    if (VOID.has(tag)) return;
    if (tag === 'script') { put('</script>'); return; }
    if (tag === 'iframe' || tag === 'frame') {
      put('<!-- hands: a frame (' + esc(String(node.src || 'no src'), false) + '), not included -->');
    }
    if (node.shadowRoot) {
      put('<template shadowrootmode="' + node.shadowRoot.mode + '">');
      walk(node.shadowRoot);
      put('</template>');
    }
    const children = tag === 'template' ? node.content.childNodes : node.childNodes;
    for (const c of children) walk(c);
    put('</' + tag + '>');
  };
  put('<!doctype html>\n<!-- hands DOM snapshot of ' + esc(location.origin + location.pathname, false) + ' -->\n');
  walk(document.documentElement);
  return out.join('');
}
