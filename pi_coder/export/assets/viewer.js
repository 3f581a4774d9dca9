(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("pi-data").textContent);
  var P = data.p, O = data.o, N = P.length;
  var arts = new Array(N), rows = new Array(N), onPath = new Uint8Array(N);
  var leaf = data.leaf, latest = null, texts = null, marks = [], cur = -1, timer = 0;
  var log = document.getElementById("log"), q = document.getElementById("q");
  var hits = document.getElementById("hits"), main = document.getElementById("main");
  var timing = {};

  function index() {
    var list = log.querySelectorAll("article.e"), k;
    for (k = 0; k < list.length; k++) arts[+list[k].dataset.i] = list[k];
    list = document.querySelectorAll("#tree .r");
    for (k = 0; k < list.length; k++) rows[+list[k].dataset.i] = list[k];
    for (k = leaf; k >= 0 && !onPath[k]; k = P[k]) onPath[k] = 1;
  }

  function leafUnder(i) {
    // The current leaf when it lies under i, else the newest entry written under i.
    for (var k = leaf; k >= 0; k = P[k]) if (k === i) return leaf;
    if (!latest) {
      latest = new Int32Array(N);
      for (var j = 0; j < N; j++) latest[j] = j;
      for (j = N - 1; j >= 0; j--) {  // page order is depth-first: descendants come after
        var p = P[j];
        if (p >= 0 && O[latest[j]] > O[latest[p]]) latest[p] = latest[j];
      }
    }
    return latest[i];
  }

  function show(newLeaf) {
    var want = new Uint8Array(N), k;
    for (k = newLeaf; k >= 0 && !want[k]; k = P[k]) want[k] = 1;
    for (k = 0; k < N; k++) {
      if (want[k] === onPath[k]) continue;
      if (arts[k]) arts[k].hidden = !want[k];
      if (rows[k]) rows[k].classList.toggle("on", !!want[k]);
    }
    if (rows[leaf]) rows[leaf].classList.remove("leaf");
    if (rows[newLeaf]) rows[newLeaf].classList.add("leaf");
    onPath = want;
    leaf = newLeaf;
    var buttons = log.querySelectorAll(".fork button");
    for (k = 0; k < buttons.length; k++) buttons[k].classList.toggle("on", !!want[+buttons[k].dataset.c]);
    if (q.value) search();
  }

  var LAZY = 'script[type="text/x-pi-lazy"]';

  var openTools = false, openThinking = false, observer = null;

  function materialize(article) {
    var b = article.querySelector(":scope > .b"), s = b && b.querySelector(":scope > " + LAZY);
    if (!s) return;
    var box = document.createElement("template");
    box.innerHTML = s.textContent;  // built and escaped by the exporter; the CSP blocks any script
    b.replaceChild(box.content, s);
    article.classList.remove("lz");
    var list = b.querySelectorAll("details.tool"), k;
    for (k = 0; k < list.length && openTools; k++) list[k].open = true;
    list = b.querySelectorAll("details.thinking");
    for (k = 0; k < list.length && openThinking; k++) list[k].open = true;
    if (observer) observer.unobserve(article);
  }

  function observe() {
    if (!window.IntersectionObserver) { for (var j = 0; j < N; j++) if (arts[j]) materialize(arts[j]); return; }
    observer = new IntersectionObserver(function (seen) {
      for (var k = 0; k < seen.length; k++) if (seen[k].isIntersecting) materialize(seen[k].target);
    }, { root: main, rootMargin: "1200px 0px" });
    for (var k = 0; k < N; k++) if (arts[k] && arts[k].querySelector(":scope > .b > " + LAZY)) observer.observe(arts[k]);
  }

  function plain(markup) {
    return markup.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&amp;/g, "&");
  }

  function textOf(el) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, null), out = [], node;
    while ((node = walker.nextNode())) out.push(node.parentNode.tagName === "SCRIPT" ? plain(node.nodeValue) : node.nodeValue);
    return out.join("").toLowerCase();
  }

  function nearestArticle(i) {
    for (var k = i; k >= 0; k = P[k]) if (arts[k]) return arts[k];
    return null;
  }

  function reveal(i) {
    var el = nearestArticle(i);
    if (!el) return;
    materialize(el);
    el.scrollIntoView({ block: "center" });
    el.classList.add("flash");
    setTimeout(function () { el.classList.remove("flash"); }, 1200);
  }

  function unmark() {
    for (var k = 0; k < marks.length; k++) {
      var m = marks[k], parent = m.parentNode;
      if (!parent) continue;
      parent.replaceChild(document.createTextNode(m.textContent), m);
      parent.normalize();
    }
    marks = [];
    cur = -1;
  }

  function markIn(article, needle) {
    // Matches may span elements (highlighted code): find them in the joined text, wrap each piece.
    if (marks.length >= 3000) return;
    materialize(article);
    var el = article.querySelector(":scope > .b");
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, null), nodes = [], starts = [], joined = "", node;
    while ((node = walker.nextNode())) {
      if (node.parentNode.tagName === "SCRIPT") continue;
      nodes.push(node);
      starts.push(joined.length);
      joined += node.nodeValue.toLowerCase();
    }
    var found = [], at = joined.indexOf(needle);
    while (at >= 0 && found.length < 500) { found.push(at); at = joined.indexOf(needle, at + needle.length); }
    var added = [];
    for (var f = found.length - 1; f >= 0; f--) {
      var from = found[f], to = from + needle.length;
      for (var n = nodes.length - 1; n >= 0; n--) {
        var ns = starts[n], ne = ns + nodes[n].nodeValue.length;
        if (ne <= from || ns >= to) continue;
        var piece = nodes[n].splitText(Math.max(from, ns) - ns);
        piece.splitText(Math.min(to, ne) - Math.max(from, ns));
        var m = document.createElement("mark");
        piece.parentNode.replaceChild(m, piece);
        m.appendChild(piece);
        added.push(m);
        for (var d = m.parentNode; d && d !== el; d = d.parentNode) if (d.tagName === "DETAILS") d.open = true;
      }
    }
    marks = marks.concat(added.reverse());
  }

  function search() {
    var needle = q.value.trim().toLowerCase(), k, shown = 0, all = 0;
    unmark();
    if (!texts && needle) {
      texts = new Array(N);
      for (k = 0; k < N; k++) {
        var b = arts[k] && arts[k].querySelector(".b");
        texts[k] = b ? textOf(b) : "";
      }
    }
    for (k = 0; k < N; k++) {
      var hit = !needle || (texts[k] && texts[k].indexOf(needle) >= 0);
      if (arts[k]) arts[k].classList.toggle("nomatch", !!needle && !hit);
      if (rows[k]) { rows[k].classList.toggle("miss", !hit); rows[k].classList.toggle("hit", !!needle && hit); }
      if (needle && hit && texts[k]) {
        all++;
        if (onPath[k]) { shown++; markIn(arts[k], needle); }
      }
    }
    hits.textContent = needle ? shown + " in this branch, " + all + " in the session" : "";
  }

  function next() {
    if (!marks.length) return;
    if (cur >= 0) marks[cur].classList.remove("cur");
    cur = (cur + 1) % marks.length;
    marks[cur].classList.add("cur");
    marks[cur].scrollIntoView({ block: "center" });
  }

  function toggleAll(selector, button, noun) {
    var open = button.dataset.open !== "1", list = log.querySelectorAll(selector);
    if (selector === "details.tool") openTools = open; else openThinking = open;
    for (var k = 0; k < list.length; k++) list[k].open = open;
    button.dataset.open = open ? "1" : "";
    button.textContent = (open ? "Collapse " : "Expand ") + noun;
  }

  function wire() {
    log.addEventListener("click", function (ev) {
      var b = ev.target.closest(".fork button");
      if (!b) return;
      var before = b.getBoundingClientRect().top;
      show(leafUnder(+b.dataset.c));
      main.scrollTop += b.getBoundingClientRect().top - before;
    });
    document.getElementById("tree").addEventListener("click", function (ev) {
      var r = ev.target.closest(".r");
      if (!r) return;
      var i = +r.dataset.i;
      show(leafUnder(i));
      reveal(i);
    });
    q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 120); });
    q.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") { clearTimeout(timer); if (!marks.length) search(); next(); }
      if (ev.key === "Escape") { q.value = ""; search(); }
    });
    document.getElementById("t-tools").addEventListener("click", function (ev) { toggleAll("details.tool", ev.currentTarget, "tools"); });
    document.getElementById("t-think").addEventListener("click", function (ev) { toggleAll("details.thinking", ev.currentTarget, "thinking"); });
    document.getElementById("t-tree").addEventListener("click", function () {
      document.body.classList.toggle(matchMedia("(max-width: 800px)").matches ? "tree-open" : "notree");
    });
  }

  var ready = new Promise(function (resolve) {
    function boot() {
      var t0 = performance.now();
      index();
      wire();
      observe();
      if (rows[leaf]) rows[leaf].scrollIntoView({ block: "center" });
      timing.initMs = performance.now() - t0;
      requestAnimationFrame(function () {
        setTimeout(function () {  // after the first frame with the articles laid out and painted
          var nav = performance.getEntriesByType("navigation")[0] || {};
          timing.renderedMs = performance.now();
          timing.domContentLoadedMs = nav.domContentLoadedEventStart || 0;
          timing.responseEndMs = nav.responseEnd || 0;
          timing.dclToRenderedMs = timing.renderedMs - timing.domContentLoadedMs;
          document.documentElement.setAttribute("data-pi-timing", JSON.stringify(timing));
          resolve(timing);
        }, 0);
      });
    }
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
    else boot();
  });

  window.piViewer = {
    ready: ready,
    shownPath: function () { var out = []; for (var k = 0; k < N; k++) if (onPath[k]) out.push(k); return out; },
    leaf: function () { return leaf; },
  };
})();
