// Visual hierarchy editor. The tree lives on the server (one editing session); this page asks for
// one node's children at a time, in pages, so an 18,000-leaf tree stays responsive. Every edit is a
// POST to the session's op endpoint; a refused edit comes back as 400 {"error": ...}.
// Labels are user data: they are only ever written with textContent.
(function () {
  "use strict";
  var configEl = document.getElementById("editor-config");
  if (!configEl) return;
  var config = JSON.parse(configEl.textContent);
  var urls = config.urls;
  var unit = config.measure || "records"; // what a node's count counts: records, or item occurrences
  var csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
  var treeEl = document.getElementById("tree");
  var messageEl = document.getElementById("editor-message");
  var padSave = document.getElementById("pad-save");
  var searchBox = document.getElementById("tree-search");
  var dialog = document.getElementById("delete-dialog");

  var rootLabel = config.root;
  var expanded = new Set([key([])]); // keys of open nodes
  var shown = {}; // key -> number of children loaded
  var selected = null; // key of the highlighted node
  var dragPath = null;
  var cutPath = null; // the node cut (Ctrl+X or ✂) to be moved under the node where it is pasted
  var wantFocus = false; // put the keyboard focus back on the selected node after the tree is redrawn
  var query = "";
  var busy = false;

  function key(path) { return JSON.stringify(path); }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // Plotly draws slice and hover labels as pseudo-HTML (<b>, <a href>, ...) and decodes these entities
  // back, so an escaped label is shown literally.
  function plotlyText(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  // ---- server ------------------------------------------------------------------------------
  function getJSON(url, params) {
    var q = new URLSearchParams(params || {});
    return fetch(url + (q.toString() ? "?" + q.toString() : ""), { credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (d) { d._status = r.status; return d; }); });
  }

  function postJSON(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(body || {}),
    }).then(function (r) { return r.json().then(function (d) { d._status = r.status; return d; }); });
  }

  function say(text, kind) {
    messageEl.className = "message message-" + (kind || "info");
    messageEl.querySelector(".text").textContent = text;
    padSave.classList.add("hidden");
  }

  function quiet() { messageEl.className = "message hidden"; }

  // ---- drawing ------------------------------------------------------------------------------
  function nodeMeta(info) {
    var parts = [];
    if (info.children) parts.push(plural(info.leaves, "leaf", "leaves"));
    if (info.records !== null && info.records !== undefined) {
      parts.push(unit === "item occurrences" ? plural(info.records, "item occurrence", "item occurrences")
        : plural(info.records, "record", "records"));
    }
    return parts.join(" · ");
  }

  function makeNode(info) {
    var path = info.path;
    var k = key(path);
    var isRoot = path.length === 0;
    var li = el("li", null, "node");
    li.setAttribute("role", "treeitem");
    li.setAttribute("aria-selected", selected === k ? "true" : "false");
    li.tabIndex = -1; // roving focus: rove() gives 0 to the selected node
    li.dataset.path = k;
    var row = el("div", null, "node-row");
    row.draggable = !isRoot;
    if (selected === k) row.classList.add("selected");
    var toggle = el("button", info.children ? (expanded.has(k) ? "▾" : "▸") : "·", "toggle");
    toggle.type = "button";
    toggle.disabled = !info.children;
    toggle.setAttribute("aria-label", expanded.has(k) ? "Collapse" : "Expand");
    if (info.children) li.setAttribute("aria-expanded", expanded.has(k) ? "true" : "false");
    var label = el("span", info.label, "node-label");
    if (query && String(info.label).toLowerCase().indexOf(query.toLowerCase()) >= 0) label.classList.add("match");
    var meta = el("span", nodeMeta(info), "node-meta muted small");
    var actions = el("span", null, "node-actions");
    actions.appendChild(button("✎", "rename", "Rename"));
    actions.appendChild(button("+", "add", "Add a child"));
    if (!isRoot) actions.appendChild(button("×", "delete", "Delete"));
    if (!isRoot && cutPath === null) actions.appendChild(button("✂", "cut", "Cut, to move it under another node"));
    if (cutPath !== null && canReceive(path)) actions.appendChild(button("⤵", "paste", "Move the cut node here"));
    if (cutPath !== null && k === key(cutPath)) row.classList.add("cut");
    row.appendChild(toggle);
    row.appendChild(label);
    row.appendChild(meta);
    row.appendChild(actions);
    li.appendChild(row);
    li._info = info;
    return li;
  }

  function button(text, action, title) {
    var b = el("button", text, "node-btn");
    b.type = "button";
    b.dataset.action = action;
    b.title = title;
    b.setAttribute("aria-label", title);
    return b;
  }

  // Children of an open node, fetched (as many as were shown before) and drawn, recursively.
  function fillChildren(li, path) {
    var k = key(path);
    var want = Math.max(shown[k] || 0, config.page);
    return getJSON(urls.nodes, { path: k, limit: want }).then(function (data) {
      if (data._status !== 200) { expanded.delete(k); return; }
      var ul = el("ul", null, "children");
      ul.setAttribute("role", "group");
      shown[k] = data.children.length;
      var jobs = data.children.map(function (c) {
        var child = makeNode(c);
        ul.appendChild(child);
        return expanded.has(key(c.path)) && c.children ? fillChildren(child, c.path) : null;
      });
      if (data.total > data.offset + data.children.length) {
        var more = el("li", null, "more");
        var b = el("button", "Show " + Math.min(config.page, data.total - data.children.length) + " more of " +
          data.total, "btn btn-small btn-ghost");
        b.type = "button";
        b.dataset.action = "more";
        more.appendChild(b);
        ul.appendChild(more);
      }
      var old = li.querySelector(":scope > ul.children");
      if (old) li.replaceChild(ul, old); else li.appendChild(ul);
      return Promise.all(jobs);
    });
  }

  // Redraw the whole visible tree (after an edit): open nodes stay open, off-screen first, then swapped.
  function refresh() {
    return getJSON(urls.nodes, { path: key([]), limit: 1 }).then(function (data) {
      if (data._status !== 200) { say(data.error || "The tree could not be loaded.", "error"); return; }
      rootLabel = data.node.label;
      var rootLi = makeNode(data.node);
      var fresh = el("ul");
      fresh.appendChild(rootLi);
      return fillChildren(rootLi, []).then(function () {
        var hadFocus = treeEl.contains(document.activeElement); // the redraw must not drop the keyboard focus
        clear(treeEl);
        treeEl.appendChild(rootLi);
        rove(hadFocus);
        treeEl.dataset.ready = String(Date.now());
      });
    });
  }

  // ---- state after an answer ------------------------------------------------------------------
  function remap(from, to) {
    var fk = key(from).slice(0, -1); // '["a","b"' : prefix of the key of every node under it
    var tk = key(to).slice(0, -1);
    function move(k) {
      if (k === key(from)) return key(to);
      if (k.indexOf(fk + ",") === 0) return tk + k.slice(fk.length);
      return k;
    }
    expanded = new Set(Array.from(expanded).map(move));
    var ns = {};
    Object.keys(shown).forEach(function (k) { ns[move(k)] = shown[k]; });
    shown = ns;
    if (selected) selected = move(selected);
  }

  function applyState(state) {
    document.getElementById("undo").disabled = !state.can_undo;
    document.getElementById("redo").disabled = !state.can_redo;
    var unsaved = document.getElementById("unsaved");
    unsaved.textContent = state.edits ? plural(state.edits, "unsaved edit", "unsaved edits") : "";
    unsaved.classList.toggle("hidden", !state.edits);
  }

  // One edit; resolves to true when the server applied it.
  function op(body) {
    if (busy) return Promise.resolve(false);
    busy = true;
    return postJSON(urls.op, body).then(function (data) {
      if (data._status !== 200) {
        say(data.error || "The edit was refused.", "error");
        return false;
      }
      quiet();
      if (data.moved) remap(data.moved.from, data.moved.to);
      applyState(data.state);
      drawChecks(data.checks);
      scheduleSunburst();
      return refresh().then(function () { return true; });
    }).catch(function () {
      say("The server could not be reached; the edit was not applied.", "error");
      return false;
    }).then(function (ok) { busy = false; return ok; });
  }

  // ---- checks ---------------------------------------------------------------------------------
  function section(parent, title, items, count, render) {
    var box = el("div", null, "check");
    box.appendChild(el("h3", title));
    var ul = el("ul", null, "value-list");
    items.forEach(function (it) { ul.appendChild(render(it)); });
    box.appendChild(ul);
    if (count > items.length) box.appendChild(el("p", "and " + (count - items.length) + " more", "muted small"));
    parent.appendChild(box);
  }

  function drawChecks(c) {
    var box = document.getElementById("checks");
    clear(box);
    var ok = true;
    box.appendChild(el("p", plural(c.leaves, "leaf", "leaves") + ", leaf depth " +
      (c.depth_range[0] === c.depth_range[1] ? c.depth_range[0] : c.depth_range[0] + "–" + c.depth_range[1]) +
      (c.column ? "; data: " + c.column : ""), "muted small"));
    if (c.uncovered_count) {
      ok = false;
      section(box, plural(c.uncovered_count, "data value is", "data values are") + " not covered", c.uncovered,
        c.uncovered_count, function (v) { var li = el("li"); li.appendChild(el("code", v)); return li; });
      box.lastChild.classList.add("check-uncovered");
    }
    if (c.empty_count) {
      ok = false;
      section(box, plural(c.empty_count, "node has", "nodes have") + " no leaves", c.empty_nodes, c.empty_count,
        function (p) { return pathLink(p); });
      box.lastChild.classList.add("check-empty");
    }
    if (c.unequal_depth) {
      ok = false;
      var d = el("div", null, "check check-depth");
      d.appendChild(el("h3", "Leaves at unequal depth"));
      d.appendChild(el("p", "Full-domain algorithms need every leaf at the same depth (" + c.depth_range[0] +
        " to " + c.depth_range[1] + " here). Padding repeats a shallow leaf's label on the missing levels.", "small"));
      var pad = el("button", "Pad the shallow leaves", "btn btn-small");
      pad.type = "button";
      pad.id = "pad";
      pad.addEventListener("click", function () { op({ op: "pad" }); });
      d.appendChild(pad);
      box.appendChild(d);
    }
    if (c.duplicate_labels.length) {
      ok = false;
      section(box, "Labels used twice on one level", c.duplicate_labels, c.duplicate_labels.length, function (item) {
        var li = el("li");
        li.appendChild(el("span", "level " + item.level + ": ", "muted small"));
        item.labels.forEach(function (l) { li.appendChild(el("code", l)); });
        if (item.count > item.labels.length) li.appendChild(el("span", " and " + (item.count - item.labels.length) + " more", "muted small"));
        return li;
      });
      box.lastChild.classList.add("check-duplicates");
    }
    if (ok) {
      var p = el("p", null, "covered check-ok");
      p.appendChild(el("span", "ok", "badge badge-success"));
      p.appendChild(document.createTextNode(" No problems found" + (c.column ? ": every data value is a leaf." : ".")));
      box.appendChild(p);
    }
  }

  function pathLink(path) {
    var li = el("li");
    var a = el("a", path.join(" › "), "path-link");
    a.href = "#";
    a.addEventListener("click", function (e) { e.preventDefault(); reveal(path); });
    li.appendChild(a);
    return li;
  }

  function loadChecks() {
    return getJSON(urls.checks).then(function (d) {
      if (d._status === 200) { drawChecks(d.checks); applyState(d.state); }
    });
  }

  // ---- search and reveal ------------------------------------------------------------------------
  var searchTimer = null;
  searchBox.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 250);
  });

  function runSearch() {
    query = searchBox.value.trim();
    var box = document.getElementById("search-results");
    var hits = document.getElementById("search-hits");
    clear(hits);
    if (!query) { box.classList.add("hidden"); refresh(); return; }
    getJSON(urls.search, { q: query }).then(function (d) {
      box.classList.remove("hidden");
      document.getElementById("search-summary").textContent = d.total ?
        plural(d.total, "node matches", "nodes match") + (d.total > d.hits.length ? " (first " + d.hits.length + " shown)" : "") :
        "No label contains “" + query + "”.";
      d.hits.forEach(function (p) { hits.appendChild(pathLink(p)); });
      refresh();
    });
  }

  // Open every ancestor of a node, loading as many children as needed to show it, then highlight it.
  function reveal(path) {
    var steps = [];
    for (var i = 0; i < path.length; i++) steps.push(i);
    return steps.reduce(function (p, i) {
      return p.then(function () {
        var parent = path.slice(0, i);
        expanded.add(key(parent));
        return getJSON(urls.nodes, { path: key(parent), around: path[i], limit: config.page }).then(function (d) {
          if (d._status === 200) shown[key(parent)] = Math.max(shown[key(parent)] || 0, d.children.length);
        });
      });
    }, Promise.resolve()).then(function () {
      selected = key(path);
      return refresh();
    }).then(function () {
      var li = findLi(key(path));
      if (li) li.scrollIntoView({ block: "center" });
    });
  }

  function findLi(k) {
    var all = treeEl.querySelectorAll("li.node");
    for (var i = 0; i < all.length; i++) if (all[i].dataset.path === k) return all[i];
    return null;
  }

  // ---- interactions ---------------------------------------------------------------------------
  treeEl.addEventListener("click", function (e) {
    var t = e.target.closest("button");
    if (!t) {
      var row = e.target.closest(".node-row");
      if (row) select(row.parentNode.dataset.path);
      return;
    }
    var li = t.closest("li.node") || t.closest("li.more").parentNode.parentNode;
    var path = JSON.parse(li.dataset.path);
    var k = li.dataset.path;
    if (t.classList.contains("toggle")) {
      if (expanded.has(k)) {
        expanded.delete(k);
        var ul = li.querySelector(":scope > ul.children");
        if (ul) li.removeChild(ul);
        t.textContent = "▸";
        li.setAttribute("aria-expanded", "false");
      } else {
        expanded.add(k);
        t.textContent = "▾";
        li.setAttribute("aria-expanded", "true");
        fillChildren(li, path);
      }
      return;
    }
    var action = t.dataset.action;
    if (action === "more") {
      shown[k] = (shown[k] || 0) + config.page;
      fillChildren(li, path);
    } else if (action === "rename") {
      startRename(li, path);
    } else if (action === "add") {
      startAdd(li, path);
    } else if (action === "delete") {
      askDelete(li, path);
    } else if (action === "cut") {
      cut(li, path);
    } else if (action === "paste") {
      paste(path);
    }
  });

  // ---- keyboard: arrow keys move through the tree (WAI-ARIA tree view), F2 renames, Insert adds a child,
  // Delete deletes, Ctrl+X cuts a node and Ctrl+V moves it under the focused one (Escape cancels) ----------
  function items() { return Array.prototype.slice.call(treeEl.querySelectorAll("li.node")); }

  function rove(hadFocus) {
    var target = (selected && findLi(selected)) || treeEl.querySelector("li.node");
    items().forEach(function (li) { li.tabIndex = li === target ? 0 : -1; });
    if (target && (wantFocus || hadFocus)) target.focus();
    wantFocus = false;
  }

  function focusItem(li) {
    if (!li) return;
    select(li.dataset.path);
    items().forEach(function (other) { other.tabIndex = other === li ? 0 : -1; });
    li.focus();
  }

  function canReceive(target) {
    if (cutPath === null) return false;
    var inside = target.length >= cutPath.length && key(target.slice(0, cutPath.length)) === key(cutPath);
    var parent = key(cutPath.slice(0, -1)) === key(target);
    return !inside && !parent;
  }

  function cut(li, path) {
    if (!path.length) return;
    cutPath = path;
    say("Cut \u201c" + li._info.label + "\u201d: move to the node it goes under and press Ctrl+V (or its \u2935 button); " +
        "Escape cancels.", "info");
    wantFocus = document.activeElement && treeEl.contains(document.activeElement);
    refresh();
  }

  function paste(target) {
    if (!canReceive(target)) {
      say("A node cannot go under itself, under one of its own descendants, or where it already is.", "error");
      return;
    }
    var from = cutPath;
    cutPath = null;
    expanded.add(key(target));
    wantFocus = true;
    op({ op: "move", path: from, to: target }).then(function (ok) { if (!ok) refresh(); });
  }

  treeEl.addEventListener("keydown", function (e) {
    if (/INPUT|TEXTAREA|SELECT|BUTTON/.test(e.target.tagName)) return;
    var li = e.target.closest && e.target.closest("li.node");
    if (!li) return;
    var list = items();
    var i = list.indexOf(li);
    var path = JSON.parse(li.dataset.path);
    var k = li.dataset.path;
    var toggle = li.querySelector(":scope > .node-row > .toggle");
    var handled = true;
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "x") {
      cut(li, path);
    } else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "v") {
      paste(path);
    } else if (e.ctrlKey || e.metaKey || e.altKey) {
      handled = false;
    } else if (e.key === "ArrowDown") {
      focusItem(list[i + 1]);
    } else if (e.key === "ArrowUp") {
      focusItem(list[i - 1]);
    } else if (e.key === "Home") {
      focusItem(list[0]);
    } else if (e.key === "End") {
      focusItem(list[list.length - 1]);
    } else if (e.key === "ArrowRight") {
      if (li._info.children && !expanded.has(k)) toggle.click();  // opens in place: the focus stays
      else focusItem(li.querySelector(":scope > ul.children > li.node"));
    } else if (e.key === "ArrowLeft") {
      if (expanded.has(k) && li._info.children) toggle.click();
      else focusItem(li.parentNode.closest("li.node"));
    } else if (e.key === "F2" || e.key === "Enter") {
      wantFocus = true;
      startRename(li, path);
    } else if (e.key === "Insert") {
      wantFocus = true;
      startAdd(li, path);
    } else if (e.key === "Delete") {
      if (path.length) askDelete(li, path);
    } else if (e.key === "Escape" && cutPath !== null) {
      cutPath = null;
      quiet();
      wantFocus = true;
      refresh();
    } else {
      handled = false;
    }
    if (handled) e.preventDefault();
  });

  treeEl.addEventListener("dblclick", function (e) {
    var label = e.target.closest(".node-label");
    if (label) {
      var li = label.closest("li.node");
      startRename(li, JSON.parse(li.dataset.path));
    }
  });

  function select(k) {
    selected = k;
    treeEl.querySelectorAll(".node-row.selected").forEach(function (r) {
      r.classList.remove("selected");
      r.parentNode.setAttribute("aria-selected", "false");
    });
    var li = findLi(k);
    if (li) {
      li.firstChild.classList.add("selected");
      li.setAttribute("aria-selected", "true");
      items().forEach(function (other) { other.tabIndex = other === li ? 0 : -1; });
    }
  }

  function inlineInput(initial, onCommit, onCancel) {
    var input = el("input", null, "inline-edit");
    input.type = "text";
    input.value = initial;
    var done = false;
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
        done = true;
        onCommit(input.value);
      } else if (e.key === "Escape") {
        done = true;
        onCancel();
      }
    });
    input.addEventListener("blur", function () { if (!done) { done = true; onCancel(); } });
    return input;
  }

  function startRename(li, path) {
    var label = li.querySelector(":scope > .node-row > .node-label");
    var old = li._info.label;
    var input = inlineInput(old, function (value) {
      if (value === old) { refresh(); return; }
      op({ op: "rename", path: path, label: value }).then(function (ok) { if (!ok) refresh(); });
    }, function () { input.replaceWith(label); });
    input.setAttribute("aria-label", "New label for " + old);
    label.replaceWith(input);
    input.focus();
    input.select();
  }

  function startAdd(li, path) {
    var k = key(path);
    var go = expanded.has(k) ? Promise.resolve() : (expanded.add(k), fillChildren(li, path));
    go.then(function () {
      var ul = li.querySelector(":scope > ul.children");
      if (!ul) { ul = el("ul", null, "children"); li.appendChild(ul); }
      var holder = el("li", null, "node adding");
      var input = inlineInput("", function (value) {
        op({ op: "add", path: path, label: value }).then(function (ok) { if (!ok && holder.parentNode) holder.remove(); });
      }, function () { holder.remove(); });
      input.placeholder = "label of the new child";
      input.setAttribute("aria-label", "Label of the new child of " + li._info.label);
      holder.appendChild(input);
      ul.insertBefore(holder, ul.firstChild);
      input.focus();
    });
  }

  function askDelete(li, path) {
    var info = li._info;
    document.getElementById("delete-label").textContent = "“" + info.label + "”";
    document.getElementById("delete-choice").classList.toggle("hidden", !info.children);
    dialog.querySelector("input[value=move]").checked = true;
    dialog.returnValue = "";
    dialog.onclose = function () {
      if (dialog.returnValue !== "confirm") return;
      var how = dialog.querySelector("input[name=children]:checked").value;
      op({ op: "delete", path: path, children: info.children ? how : "delete" });
    };
    dialog.showModal();
  }

  // Drag a subtree onto another node to move it there.
  treeEl.addEventListener("dragstart", function (e) {
    var row = e.target.closest && e.target.closest(".node-row");
    if (!row) return;
    dragPath = JSON.parse(row.parentNode.dataset.path);
    row.classList.add("dragging");
    if (e.dataTransfer) {
      e.dataTransfer.effectAllowed = "move";
      e.dataTransfer.setData("text/plain", row.parentNode.dataset.path);
    }
  });

  function dropTarget(e) {
    var row = e.target.closest && e.target.closest(".node-row");
    if (!row || !dragPath) return null;
    var target = JSON.parse(row.parentNode.dataset.path);
    var inside = target.length >= dragPath.length &&
      key(target.slice(0, dragPath.length)) === key(dragPath);
    return inside ? null : { row: row, path: target };
  }

  treeEl.addEventListener("dragover", function (e) {
    var t = dropTarget(e);
    if (!t) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
    t.row.classList.add("drop-target");
  });

  treeEl.addEventListener("dragleave", function (e) {
    var row = e.target.closest && e.target.closest(".node-row");
    if (row) row.classList.remove("drop-target");
  });

  treeEl.addEventListener("drop", function (e) {
    var t = dropTarget(e);
    if (!t) return;
    e.preventDefault();
    t.row.classList.remove("drop-target");
    var from = dragPath;
    dragPath = null;
    expanded.add(key(t.path));
    op({ op: "move", path: from, to: t.path });
  });

  treeEl.addEventListener("dragend", function () {
    dragPath = null;
    treeEl.querySelectorAll(".dragging, .drop-target").forEach(function (r) {
      r.classList.remove("dragging");
      r.classList.remove("drop-target");
    });
  });

  document.getElementById("collapse-all").addEventListener("click", function () {
    expanded = new Set([key([])]);
    shown = {};
    refresh();
  });

  document.getElementById("undo").addEventListener("click", function () { op({ op: "undo" }); });
  document.getElementById("redo").addEventListener("click", function () { op({ op: "redo" }); });
  document.addEventListener("keydown", function (e) {
    if (!(e.ctrlKey || e.metaKey) || /INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName)) return;
    var k = e.key.toLowerCase();
    if (k === "z" && !e.shiftKey) { e.preventDefault(); op({ op: "undo" }); }
    if (k === "y" || (k === "z" && e.shiftKey)) { e.preventDefault(); op({ op: "redo" }); }
  });

  function save(pad) {
    return postJSON(urls.save, { pad: pad }).then(function (d) {
      if (d._status !== 200) {
        say(d.error || "The hierarchy could not be saved.", "error");
        if (d.can_pad) padSave.classList.remove("hidden");
        return;
      }
      say(d.message, "success");
      applyState(d.state);
      drawChecks(d.checks);
      if (d.padded) refresh();
    });
  }

  document.getElementById("save").addEventListener("click", function () { save(false); });
  padSave.addEventListener("click", function () { save(true); });

  // ---- sunburst -----------------------------------------------------------------------------------
  var sunTimer = null;
  function scheduleSunburst() {
    clearTimeout(sunTimer);
    sunTimer = setTimeout(drawSunburst, 400);
  }

  function drawSunburst() {
    var target = document.getElementById("sunburst");
    if (typeof window.Plotly === "undefined") return;
    var depth = document.getElementById("sunburst-depth").value;
    getJSON(urls.sunburst, { depth: depth }).then(function (d) {
      if (d._status !== 200) return;
      // Two rings at a time (maxdepth), so slices stay wide enough to write on; a click zooms into a slice
      // and shows the rings below it, the centre goes back up.
      var rings = Math.min(Number(d.depth) + 1, 3);
      document.getElementById("sunburst-note").textContent = "Sized by " + d.measure + " under each node; " +
        (rings - 1) + " levels shown at a time of the top " + d.depth + (d.truncated ? " (the largest levels are cut short)" : "") +
        ". Click a slice to zoom into it, the centre to go back up; labels are cut to " + (d.short_chars || 16) +
        " characters on the slices, whole on hover.";
      window.Plotly.react(target, [{
        type: "sunburst", ids: d.ids, labels: d.labels.map(plotlyText), parents: d.parents, values: d.values,
        text: (d.short || d.labels).map(plotlyText), textinfo: "text", maxdepth: rings,
        branchvalues: "total", hovertemplate: "%{label}<br>%{value} " + d.measure + "<extra></extra>",
        // text at a readable size, turned the way it fits its slice best; a slice too thin for 11 px shows no
        // text (uniformtext) rather than a speck
        insidetextorientation: "auto", textfont: { size: 13 },
      }], { margin: { l: 0, r: 0, t: 10, b: 10 }, height: 460, uniformtext: { minsize: 11, mode: "hide" } },
      { responsive: true, displaylogo: false });
      target.dataset.ready = "1";
    });
  }
  document.getElementById("sunburst-depth").addEventListener("change", drawSunburst);

  // ---- start ------------------------------------------------------------------------------------
  applyState(config.state);
  refresh();
  loadChecks();
  if (document.readyState === "complete") drawSunburst();
  else window.addEventListener("load", drawSunburst);
})();
