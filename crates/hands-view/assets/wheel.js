// Taking the wheel of a live run: "Take over" asks for it (the run pauses when its turn ends),
// then the run's screen shows here; clicks on it, the wheel, keys and text typed in the box go
// to it; "Give back" lets the run go on (the model is told what hands saw the person do).
"use strict";
(() => {
  const box = document.getElementById("wheel");
  if (!box) return;
  const token = new URLSearchParams(location.search).get("token") || "";
  const make = (tag, attrs, text) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text) node.textContent = text;
    return node;
  };
  const post = (path, body) => fetch(path, {method: "POST",
    headers: {"content-type": "application/json", "x-hands-token": token},
    body: JSON.stringify(body || {})});
  const status = make("div", {id: "wheel-status"});
  const take = make("button", {type: "button", class: "take"}, "Take over");
  const give = make("button", {type: "button", class: "give"}, "Give back");
  const screen = make("img", {id: "wheel-screen", role: "button", tabindex: "0",
    alt: "The run's screen", "aria-label": "The run's screen (click to click there)"});
  const keys = make("textarea", {id: "wheel-keys", rows: "1",
    "aria-label": "Keys to the screen", placeholder: "Type here to type on the screen"});
  const live = make("div", {class: "live"});
  live.append(keys, screen);
  box.append(status, take, give, live);

  // Inputs go one after another, in the order the person made them. One that fails drops the
  // ones already queued behind it (a key without the click before it would land elsewhere) and
  // says why; what the person does after seeing that is sent again.
  let queue = Promise.resolve();
  let round = 0;
  let failed = null;
  const send = (input) => {
    const mine = round;
    queue = queue.then(async () => {
      if (mine !== round) return;
      let why = null;
      try {
        const res = await post("/api/wheel/input", input);
        if (!res.ok) why = (await res.text()) || ("HTTP " + res.status);
      } catch (e) { why = "the view's server did not answer (" + e.message + ")"; }
      if (why) {
        round += 1;
        failed = "Your " + input.type + " did not reach the screen: " + why
          + ". What you did after it was dropped; look at the screen and go on from there.";
        status.textContent = failed;
        status.className = "failed";
        // Kept after the next input succeeds, for whoever looks back (and the tests).
        status.dataset.lastFailure = failed;
      } else if (failed) {
        failed = null;
        status.className = "";
      }
    });
    return queue;
  };
  const at = (e) => [Math.round(e.offsetX * screen.naturalWidth / screen.clientWidth),
                     Math.round(e.offsetY * screen.naturalHeight / screen.clientHeight)];
  screen.addEventListener("click", (e) => {
    if (!screen.naturalWidth) return;
    const [x, y] = at(e);
    send({type: "click", x, y});
    keys.focus();
  });
  screen.addEventListener("wheel", (e) => {
    e.preventDefault();
    if (!screen.naturalWidth) return;
    const [x, y] = at(e);
    send({type: "scroll", x, y, dy: Math.max(-10000, Math.min(10000, e.deltaY))});
  }, {passive: false});
  const named = new Set(["Enter", "Backspace", "Tab", "Escape", "Delete", "ArrowUp", "ArrowDown",
    "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
  keys.addEventListener("keydown", (e) => {
    if (named.has(e.key) && !e.isComposing) { e.preventDefault(); send({type: "key", key: e.key}); }
  });
  keys.addEventListener("input", () => {
    const text = keys.value.replace(/[\r\n\t]/g, "");
    keys.value = "";
    for (let i = 0; i < text.length; i += 1000) send({type: "text", text: text.slice(i, i + 1000)});
  });

  let holder = "model";
  let streaming = false;
  async function stream() {
    streaming = true;
    while (holder === "person") {
      try {
        const res = await fetch("/api/wheel/frame?token=" + encodeURIComponent(token));
        if (res.ok) {
          const old = screen.src;
          screen.src = URL.createObjectURL(await res.blob());
          await new Promise(r => { screen.onload = r; screen.onerror = r; });
          if (old) URL.revokeObjectURL(old);
        } else {
          await new Promise(r => setTimeout(r, 300));
        }
      } catch (e) { break; }
      await new Promise(r => setTimeout(r, 120));
    }
    streaming = false;
  }
  function show(s) {
    holder = s.holder;
    if (holder !== "person") { failed = null; status.className = ""; }
    box.hidden = false;
    box.className = "wheel " + holder;
    take.hidden = holder !== "model";
    take.disabled = !!s.unavailable;
    give.hidden = holder === "model";
    give.textContent = holder === "asked" ? "Never mind" : "Give back";
    live.hidden = holder !== "person";
    status.textContent = failed ? failed : s.unavailable ? "Take the wheel: " + s.unavailable + "."
      : holder === "model" ? "The model has the wheel."
      : holder === "asked" ? "You asked for the wheel: the run pauses when its current turn ends (answer any approval first)."
      : "You have the wheel: the run waits. Click on the screen and type in the box; the model will be told what you did.";
    if (holder === "person" && !streaming) stream();
  }
  take.onclick = async () => {
    take.disabled = true;
    const res = await post("/api/wheel/take");
    if (!res.ok) status.textContent = "Take the wheel: " + await res.text();
    poll();
  };
  give.onclick = async () => { await queue; await post("/api/wheel/give"); poll(); };
  async function poll() {
    const res = await fetch("/api/wheel?token=" + encodeURIComponent(token));
    if (res.ok) show(await res.json());
  }
  (async () => {
    const first = await fetch("/api/wheel?token=" + encodeURIComponent(token));
    if (!first.ok) return;
    const s = await first.json();
    if (s.unavailable === "a finished run") return;
    show(s);
    for (;;) {
      await new Promise(r => setTimeout(r, 500));
      try { await poll(); } catch (e) {
        // The view's server is gone: the run ended with its process.
        holder = "model";
        take.hidden = give.hidden = live.hidden = true;
        status.textContent = "Take the wheel: the run has ended.";
        return;
      }
    }
  })();
})();
