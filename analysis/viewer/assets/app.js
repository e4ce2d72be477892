// hoh view: filters, sorting and the compare view of the results grid.
// Plain DOM, no dependencies; every value is put in with textContent.
(function () {
  "use strict";
  var grid = document.getElementById("results-grid");
  if (!grid) return;
  var body = grid.tBodies[0];
  var heads = grid.tHead.rows[0].cells;
  var filters = {};

  function cellOf(row, col) { return row.cells[col + 2]; }
  function colHead(col) { return heads[col + 2]; }
  function ncols() { return heads.length - 2; }

  function apply() {
    var shownCols = [];
    for (var c = 0; c < ncols(); c++) {
      var h = colHead(c);
      var ok = (!filters.config || h.dataset.config === filters.config) && (!filters.arm || h.dataset.arm === filters.arm);
      h.hidden = !ok;
      if (ok) shownCols.push(c);
    }
    var rows = 0;
    for (var r = 0; r < body.rows.length; r++) {
      var row = body.rows[r];
      var any = false;
      for (var c2 = 0; c2 < ncols(); c2++) {
        var cell = cellOf(row, c2);
        cell.hidden = shownCols.indexOf(c2) < 0;
        var match = !filters.status || cell.dataset.cat === filters.status;
        cell.classList.toggle("dim", !match);
        if (!cell.hidden && match && cell.dataset.cat) any = true;
      }
      var show = (!filters.bench || row.dataset.bench === filters.bench) && any;
      row.hidden = !show;
      if (show) rows++;
    }
    var shown = document.getElementById("shown");
    if (shown) shown.textContent = rows + " of " + body.rows.length + " rows, " + shownCols.length + " of " + ncols() + " columns";
  }

  document.querySelectorAll("[data-filter]").forEach(function (sel) {
    sel.addEventListener("change", function () { filters[sel.dataset.filter] = sel.value; apply(); });
  });

  function value(row, col) {
    var v = cellOf(row, col).dataset.v;
    return v === undefined ? null : parseFloat(v);
  }

  Array.prototype.forEach.call(heads, function (h) {
    if (!h.classList.contains("sortable")) return;
    h.addEventListener("click", function () {
      var desc = !h.classList.contains("sorted-desc");
      Array.prototype.forEach.call(heads, function (o) { o.classList.remove("sorted-asc", "sorted-desc"); });
      h.classList.add(desc ? "sorted-desc" : "sorted-asc");
      var rows = Array.prototype.slice.call(body.rows);
      var col = h.dataset.col === undefined ? -1 : parseInt(h.dataset.col, 10);
      rows.sort(function (a, b) {
        var x, y;
        if (col < 0) { x = a.dataset.task; y = b.dataset.task; return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1); }
        x = value(a, col); y = value(b, col);
        if (x === null && y === null) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x - y) * (desc ? -1 : 1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });

  // Compare view: two columns side by side per task, with B - A.
  var selA = document.getElementById("cmp-a"), selB = document.getElementById("cmp-b");
  var out = document.getElementById("compare-out");
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function fmt(v) { return (Math.round(v * 10000) / 10000).toString(); }
  function compare() {
    if (!selA || !out) return;
    var a = parseInt(selA.value, 10), b = parseInt(selB.value, 10);
    out.textContent = "";
    var table = el("table", undefined, "data compare");
    table.id = "compare-table";
    var hr = table.createTHead().insertRow();
    ["Task", "Rep", "A: " + selA.options[selA.selectedIndex].text, "B: " + selB.options[selB.selectedIndex].text, "B − A"].forEach(function (t) { hr.appendChild(el("th", t)); });
    var tb = table.createTBody();
    var n = 0, sum = 0, w = 0, t = 0, l = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var va = value(row, a), vb = value(row, b);
      if (va === null && vb === null) return;
      var tr = tb.insertRow();
      tr.dataset.task = row.dataset.task;
      tr.appendChild(el("td", row.dataset.task));
      tr.appendChild(el("td", row.cells[1].textContent));
      tr.appendChild(el("td", va === null ? "—" : fmt(va), "num"));
      tr.appendChild(el("td", vb === null ? "—" : fmt(vb), "num"));
      if (va !== null && vb !== null) {
        var d = vb - va;
        tr.appendChild(el("td", (d > 0 ? "+" : "") + fmt(d), "num diff"));
        n++; sum += d;
        if (d > 0) w++; else if (d < 0) l++; else t++;
      } else {
        tr.appendChild(el("td", "unpaired", "num muted"));
      }
    });
    out.appendChild(table);
    out.appendChild(el("p", n ? "Paired tasks: " + n + "; mean difference B − A " + (sum / n > 0 ? "+" : "") + fmt(sum / n) +
      "; B better/equal/worse: " + w + "/" + t + "/" + l : "No task has scores in both columns.", "compare-summary"));
  }
  if (selA) { selA.addEventListener("change", compare); selB.addEventListener("change", compare); compare(); }
  apply();
})();

// The project page's issue table: filter by state.
(function () {
  "use strict";
  var sel = document.getElementById("issue-filter");
  var table = document.getElementById("issue-table");
  if (!sel || !table) return;
  function apply() {
    var v = sel.value, shown = 0, rows = table.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      var st = rows[i].dataset.state;
      var ok = !st || !v || st === v || (v === "unresolved" && st !== "closed");
      rows[i].hidden = !ok;
      if (ok && st) shown++;
    }
    document.getElementById("issues-shown").textContent = shown + " issue(s) shown";
  }
  sel.addEventListener("change", apply);
  apply();
})();
