// The listener log of hands: installed in the main world of every document before the page's own
// scripts (Page.addScriptToEvaluateOnNewDocument), it notes every element (or document, or
// window) that gets a click, pointer, mouse, touch or key handler — through addEventListener or
// an `on…` property — and, when the page agent asks (one `TOKEN:probe` event per read), answers
// with one `TOKEN:mark` event per noted target, so the agent (in its isolated world, which
// cannot see the page's JavaScript) learns which elements have handlers. jQuery's delegated
// handlers (`$(root).on('click', '.row', …)`) are answered for the elements their selector
// matches. It also counts the requests the page's scripts start (`fetch`, `XMLHttpRequest`), which
// the agent asks for around an action. TOKEN is replaced per driver session.
(() => {
  'use strict';
  const TOKEN = '__HANDS_TOKEN__';
  const OPERATE = new Set(['click', 'dblclick', 'auxclick', 'contextmenu', 'mousedown', 'mouseup',
    'pointerdown', 'pointerup', 'touchstart', 'touchend', 'keydown', 'keyup', 'keypress']);
  const OWN = 1;
  const PROPERTY = 2;
  const ROOT = 4;
  const SELECTOR = 8;
  const targets = [];
  const flags = new WeakMap();
  const note = (target, flag) => {
    if (!target || (typeof target !== 'object' && typeof target !== 'function')) return;
    const f = flags.get(target);
    if (f === undefined) targets.push(new WeakRef(target));
    flags.set(target, (f || 0) | flag);
  };
  const proto = EventTarget.prototype;
  const add = proto.addEventListener;
  const addEventListener = {
    addEventListener(type, listener) {
      if (listener && OPERATE.has(String(type).toLowerCase())) note(this, OWN);
      return add.apply(this, arguments);
    },
  }.addEventListener;
  Object.defineProperty(proto, 'addEventListener', { value: addEventListener, writable: true, configurable: true });
  for (const owner of [globalThis.HTMLElement, globalThis.SVGElement, globalThis.Document]) {
    const p = owner && owner.prototype;
    if (!p) continue;
    for (const type of OPERATE) {
      const d = Object.getOwnPropertyDescriptor(p, 'on' + type);
      if (!d || !d.set) continue;
      const set = d.set;
      Object.defineProperty(p, 'on' + type, {
        get: d.get,
        set: { set(v) { if (v) note(this, PROPERTY); return set.call(this, v); } }.set,
        enumerable: d.enumerable,
        configurable: true,
      });
    }
  }
  // Requests the page's scripts start, counted so the agent can tell that an action started one
  // before the browser's network events for it reach the driver (answered on `TOKEN:requests`).
  let requests = 0;
  const fetch = globalThis.fetch;
  if (typeof fetch === 'function') {
    globalThis.fetch = {
      fetch(input) {
        requests++;
        return fetch.apply(this, arguments);
      },
    }.fetch;
  }
  const xhr = globalThis.XMLHttpRequest && globalThis.XMLHttpRequest.prototype;
  const send = xhr && xhr.send;
  if (typeof send === 'function') {
    Object.defineProperty(xhr, 'send', {
      value: { send() { requests++; return send.apply(this, arguments); } }.send,
      writable: true, enumerable: true, configurable: true,
    });
  }
  add.call(document, TOKEN + ':requests', (e) => {
    e.stopImmediatePropagation();
    document.dispatchEvent(new CustomEvent(TOKEN + ':count', { detail: requests }));
  }, true);
  const mark = (node, flag) => {
    node.dispatchEvent(new CustomEvent(TOKEN + ':mark', { detail: flag, composed: true }));
  };
  add.call(document, TOKEN + ':probe', (e) => {
    e.stopImmediatePropagation();
    document.dispatchEvent(new CustomEvent(TOKEN + ':ack'));
    let live = 0;
    const jq = typeof globalThis.jQuery === 'function' && globalThis.jQuery._data ? globalThis.jQuery : null;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i].deref();
      if (!t) continue;
      targets[live++] = targets[i];
      const f = flags.get(t) || 0;
      if (t === globalThis || t === document) mark(document, f | ROOT);
      else if (t.nodeType === 1 && t.isConnected && t.ownerDocument === document) mark(t, f);
      else continue;
      if (!jq) continue;
      let events = null;
      try { events = jq._data(t, 'events'); } catch (err) { events = null; }
      if (!events) continue;
      const root = t === globalThis ? document : t;
      for (const type of OPERATE) {
        for (const h of events[type] || []) {
          if (!h || typeof h.selector !== 'string' || !h.selector) continue;
          try {
            for (const m of root.querySelectorAll(h.selector)) mark(m, SELECTOR);
          } catch (err) { /* a selector only jQuery understands */ }
        }
      }
    }
    targets.length = live;
  }, true);
})();
