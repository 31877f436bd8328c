"""The six pages of the peers benchmark and the loopback server that serves them.

Each page reports its own state to the server the moment an effect lands in its DOM (a
synchronous POST to /report from the event handler or the re-render), so the benchmark checks
every step by what the page says happened, and can tell an action that returned before its
effect from one that returned after it.
"""

import http.server
import json
import threading
import time

REPORT_JS = """
<script>
function report(key, value) {
  const x = new XMLHttpRequest();
  x.open('POST', '/report', false);
  x.setRequestHeader('content-type', 'application/json');
  x.send(JSON.stringify({page: PAGE, key: key, value: String(value)}));
}
</script>
"""

WORDS = (
    "the quick harbour light drifts over quiet water while engineers measure tides and "
    "record every change in careful notebooks so that later readers can follow each step "
    "of the long survey from the northern cliffs to the southern marsh"
).split()


def _prose(seed, n_words):
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n_words)).capitalize() + "."


def article():
    toc = "".join(
        f'<li><a href="#s{n}">Section {n}: Survey leg {n}</a></li>' for n in range(1, 21)
    )
    sections = "".join(
        f'<section id="s{n}"><h2>Section {n}: Survey leg {n}</h2>'
        f"<p>{_prose(n, 110)}</p><p>{_prose(n + 40, 90)}</p>"
        f'<button onclick="like({n})">Like section {n}</button></section>'
        for n in range(1, 21)
    )
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The coastal survey</title>
<script>const PAGE = 'article';</script>{REPORT_JS}</head><body id="top">
<h1>The coastal survey</h1><nav aria-label="Contents"><ul>{toc}</ul></nav>
<main>{sections}
<h2>Comments</h2>
<label>Comment <textarea id="comment" oninput="report('comment', this.value)"></textarea></label>
<label><input type="checkbox" onchange="report('subscribed', this.checked)"> Subscribe to replies</label>
<button onclick="report('posted', document.getElementById('comment').value)">Post comment</button>
<p><a href="#top">Back to top</a></p>
<button onclick="this.textContent = 'Marked as read'; report('read', 'yes')">Mark article as read</button>
</main>
<script>
const liked = new Set();
function like(n) {{ liked.add(n); report('likes', [...liked].sort((a, b) => a - b).join(',')); }}
addEventListener('hashchange', () => report('hash', location.hash));
</script></body></html>"""


COLORS = ["red", "blue", "green", "black", "white"]


def table():
    return """<!doctype html><html><head><meta charset="utf-8"><title>Products</title>
<script>const PAGE = 'table';</script>""" + REPORT_JS + """</head><body>
<h1>Products</h1>
<label>Filter products <input id="filter" oninput="filterBy(this.value)"></label>
<button onclick="report('exported', [...selected].sort().join(','))">Export selected</button>
<table><thead><tr>
<th><button onclick="sortBy('name')">Sort by name</button></th><th>Color</th>
<th><button onclick="sortBy('price')">Sort by price</button></th>
<th><button onclick="sortBy('stock')">Sort by stock</button></th></tr></thead>
<tbody id="rows"></tbody></table>
<script>
const COLORS = ['red', 'blue', 'green', 'black', 'white'];
const rows = [];
for (let i = 1; i <= 300; i++) {
  const id = String(i).padStart(3, '0');
  rows.push({id, name: 'Product ' + id, color: COLORS[i % 5], price: (i * 37) % 997 / 10 + 1,
             stock: (i * 53) % 211});
}
const selected = new Set();
let key = null, dir = 1, filter = '';
function render() {
  const shown = rows.filter(r => !filter || r.color.includes(filter) || r.name.includes(filter));
  if (key) shown.sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0) * dir);
  document.getElementById('rows').innerHTML = shown.map(r =>
    `<tr><td><label><input type="checkbox" data-id="${r.id}" ${selected.has(r.id) ? 'checked' : ''}> Select ${r.name}</label></td>` +
    `<td>${r.color}</td><td>${r.price.toFixed(2)}</td><td>${r.stock}</td></tr>`).join('');
}
document.getElementById('rows').addEventListener('change', e => {
  const id = e.target.dataset.id;
  if (e.target.checked) selected.add(id); else selected.delete(id);
  report('selected', [...selected].sort().join(','));
});
function sortBy(k) {
  dir = key === k ? -dir : 1; key = k; render();
  report('sort', k + ':' + (dir > 0 ? 'asc' : 'desc'));
}
function filterBy(v) { filter = v; render(); report('filter', v); }
render();
</script></body></html>"""


CHECKOUT_FIELDS = [
    ("first", "First name", "text"),
    ("last", "Last name", "text"),
    ("email", "Email", "email"),
    ("phone", "Phone", "tel"),
    ("street", "Street address", "text"),
    ("city", "City", "text"),
    ("zip", "Postal code", "text"),
    ("card", "Card number", "text"),
    ("expiry", "Expiry date", "text"),
    ("cvc", "Security code", "text"),
]


def checkout():
    inputs = "".join(
        f'<p><label>{label} <input name="{name}" type="{kind}" '
        f"oninput=\"report('{name}', this.value)\"></label></p>"
        for name, label, kind in CHECKOUT_FIELDS
    )
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Checkout</title>
<script>const PAGE = 'checkout';</script>{REPORT_JS}</head><body>
<h1>Checkout</h1><form onsubmit="event.preventDefault(); place()">{inputs}
<p><label>Country <select name="country" onchange="report('country', this.value)">
<option value="">Choose…</option><option value="FR">France</option>
<option value="GB">United Kingdom</option><option value="ES">Spain</option></select></label></p>
<p><label>Delivery <select name="delivery" onchange="report('delivery', this.value)">
<option value="standard">Standard</option><option value="express">Express</option></select></label></p>
<p><label><input type="checkbox" name="gift" onchange="report('gift', this.checked)"> Gift wrap</label></p>
<p><label><input type="checkbox" name="news" onchange="report('news', this.checked)"> Send me offers</label></p>
<p><label>Order notes <textarea name="notes" oninput="report('notes', this.value)"></textarea></label></p>
<button type="submit">Place order</button></form>
<p id="status" role="status"></p>
<script>
function place() {{
  const f = document.forms[0];
  const missing = ['first', 'last', 'email', 'street', 'city', 'card', 'country']
    .filter(n => !f[n].value);
  const said = missing.length ? 'missing ' + missing.join(',') : 'placed';
  document.getElementById('status').textContent = 'Order ' + said;
  report('order', said);
}}
</script></body></html>"""


def widget():
    return """<!doctype html><html><head><meta charset="utf-8"><title>Widgets</title>
<script>const PAGE = 'widget';</script>""" + REPORT_JS + """</head><body>
<h1>Lamp, model K</h1>
<cart-widget></cart-widget>
<iframe src="/frame" title="Newsletter" width="500" height="220"></iframe>
<script>
customElements.define('cart-widget', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: 'open'});
    root.innerHTML = `<p>Quantity: <output>1</output></p>
      <button id="inc">Increase quantity</button> <button id="dec">Decrease quantity</button>
      <button id="fav" aria-pressed="false">Add to favorites</button>
      <label>Gift message <input id="msg"></label> <button id="add">Add to cart</button>`;
    let qty = 1;
    const out = root.querySelector('output');
    const set = q => { qty = q; out.textContent = q; report('qty', q); };
    root.getElementById('inc').onclick = () => set(qty + 1);
    root.getElementById('dec').onclick = () => set(Math.max(1, qty - 1));
    root.getElementById('fav').onclick = e => {
      const on = e.target.getAttribute('aria-pressed') !== 'true';
      e.target.setAttribute('aria-pressed', on); report('favorite', on);
    };
    root.getElementById('msg').oninput = e => report('message', e.target.value);
    root.getElementById('add').onclick = () => report('cart', qty);
  }
});
</script></body></html>"""


def frame():
    return """<!doctype html><html><head><meta charset="utf-8"><title>Newsletter</title>
<script>const PAGE = 'widget';</script>""" + REPORT_JS + """</head><body>
<label>Newsletter email <input id="email" type="email" oninput="report('email', this.value)"></label>
<label>Frequency <select id="freq" onchange="report('frequency', this.value)">
<option value="monthly">Monthly</option><option value="weekly">Weekly</option></select></label>
<button onclick="report('subscribed', email.value + '/' + freq.value)">Subscribe</button>
<button onclick="report('subscribed', 'no')">Unsubscribe</button>
</body></html>"""


def spa():
    return """<!doctype html><html><head><meta charset="utf-8"><title>Tasks</title>
<script>const PAGE = 'spa';</script>""" + REPORT_JS + """</head><body>
<h1>Tasks</h1>
<label>New task <input id="draft" oninput="report('draft', this.value)"></label>
<button onclick="add()">Add task</button>
<nav aria-label="Show"><button onclick="show('all')">Show all</button>
<button onclick="show('completed')">Show completed</button>
<button onclick="clearDone()">Clear completed</button></nav>
<div id="app"></div>
<script>
// Every change goes through a round trip to the server (which answers after 30 ms), then the
// whole list is rendered again: every element of it is replaced, as a framework without keys does.
let tasks = ['Buy milk', 'Call the bank', 'Book dentist', 'Water the plants', 'Pay rent']
  .map(t => ({t, done: false}));
let view = 'all';
function later(f) { fetch('/api/save', {method: 'POST'}).then(() => { f(); render(); }); }
function render() {
  const shown = tasks.filter(x => view === 'all' || x.done);
  document.getElementById('app').innerHTML = '<ul>' + shown.map(x =>
    `<li><label><input type="checkbox" data-t="${x.t}" ${x.done ? 'checked' : ''}> Done: ${x.t}</label>` +
    ` <button data-del="${x.t}">Delete ${x.t}</button></li>`).join('') + '</ul>' +
    `<p>${tasks.filter(x => !x.done).length} left</p>`;
  report('tasks', tasks.map(x => x.t).join(','));
  report('done', tasks.filter(x => x.done).map(x => x.t).join(','));
  report('view', view);
}
document.getElementById('app').addEventListener('click', e => {
  const del = e.target.dataset && e.target.dataset.del;
  if (del) later(() => { tasks = tasks.filter(x => x.t !== del); });
});
document.getElementById('app').addEventListener('change', e => {
  const t = e.target.dataset.t, on = e.target.checked;
  later(() => { tasks.find(x => x.t === t).done = on; });
});
function add() {
  const d = document.getElementById('draft');
  const t = d.value.trim();
  if (t) later(() => { tasks.push({t, done: false}); d.value = ''; });
}
function show(v) { later(() => { view = v; }); }
function clearDone() { later(() => { tasks = tasks.filter(x => !x.done); }); }
render();
</script></body></html>"""


def controls():
    rows = "".join(
        f'<tr id="item-{n}"><td>Item {n}</td>'
        f'<td><label><input type="checkbox" data-n="{n}"> Enable item {n}</label></td>'
        f'<td><label>Quantity for item {n} <input data-q="{n}" size="4"></label></td>'
        f'<td><button data-save="{n}">Save item {n}</button></td>'
        f'<td><a href="#item-{n}">Details for item {n}</a></td></tr>'
        for n in range(1, 501)
    )
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Inventory</title>
<script>const PAGE = 'controls';</script>{REPORT_JS}</head><body>
<h1>Inventory, 500 items</h1><table><tbody id="rows">{rows}</tbody></table>
<script>
const enabled = new Set(), saved = {{}};
const rowsEl = document.getElementById('rows');
rowsEl.addEventListener('change', e => {{
  const n = e.target.dataset.n;
  if (!n) return;
  if (e.target.checked) enabled.add(+n); else enabled.delete(+n);
  report('enabled', [...enabled].sort((a, b) => a - b).join(','));
}});
rowsEl.addEventListener('input', e => {{ if (e.target.dataset.q) report('draft' + e.target.dataset.q, e.target.value); }});
rowsEl.addEventListener('click', e => {{
  const n = e.target.dataset.save;
  if (!n) return;
  saved[n] = document.querySelector(`[data-q="${{n}}"]`).value || '0';
  e.target.textContent = 'Saved item ' + n;
  report('saved', Object.keys(saved).sort((a, b) => a - b).map(k => k + '=' + saved[k]).join(','));
}});
addEventListener('hashchange', () => report('hash', location.hash));
</script></body></html>"""


PAGES = {
    "article": article,
    "table": table,
    "checkout": checkout,
    "widget": widget,
    "spa": spa,
    "controls": controls,
}


class State:
    """What the pages reported: page -> key -> (value, unix time it landed)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_page = {}

    def put(self, page, key, value):
        with self.lock:
            self.by_page.setdefault(page, {})[key] = (value, time.time())

    def get(self, page, key):
        with self.lock:
            return self.by_page.get(page, {}).get(key)

    def reset(self, page):
        with self.lock:
            self.by_page.pop(page, None)


def serve(state):
    """Serves the pages on 127.0.0.1 (a free port); returns (server, base URL)."""
    bodies = {f"/{name}": make() for name, make in PAGES.items()}
    bodies["/frame"] = frame()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            path = self.path.split("?")[0].split("#")[0]
            if path == "/favicon.ico":
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            body = bodies.get(path)
            if body is None:
                self.send_error(404)
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.send_header("cache-control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            n = int(self.headers.get("content-length", 0))
            body = self.rfile.read(n)
            if self.path == "/api/save":
                time.sleep(0.03)
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            said = json.loads(body or b"{}")
            state.put(said.get("page"), said.get("key"), said.get("value"))
            self.send_response(204)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
