// contest dashboard: the filters. Everything else was computed in Python (page.py);
// this only drops chart points and table rows whose (strategy, scale, machine, commit)
// is not ticked, and recomputes summary cells with page.py's rules (median, formats).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("dashboard-data").textContent);
  const dims = data.dims;
  const keys = data.keys;
  const figures = data.figures;

  function ticked() {
    const sel = {};
    for (const d of dims) {
      sel[d] = new Set();
      document.querySelectorAll(`input[data-dim="${d}"]:checked`).forEach((i) => sel[d].add(i.value));
    }
    return sel;
  }

  function visibleKeys(sel) {
    return keys.map((k) => dims.every((d, i) => sel[d].has(String(k[i]))));
  }

  // -- numbers as page.py's fmt and median write them --------------------------------
  function halfUp(v) {
    return Math.floor(v + 0.5);
  }
  function thousands(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }
  function fmt(v, kind) {
    if (v === null || v === undefined) return "\u2014";
    if (kind === "int") return thousands(halfUp(v));
    if (kind === "s1") return (halfUp(v * 10) / 10).toFixed(1);
    if (kind === "x2") return (halfUp(v * 100) / 100).toFixed(2);
    throw new Error("unknown format " + kind);
  }
  function median(values) {
    const s = values.slice().sort((a, b) => a - b);
    if (!s.length) return null;
    const lo = s[Math.floor((s.length - 1) / 2)];
    const hi = s[Math.floor(s.length / 2)];
    return (lo + hi) / 2;
  }

  // -- charts --------------------------------------------------------------------------
  const PER_POINT = ["x", "y", "text", "customdata", "hovertext", "ids"];

  function filterFigure(fig, visible) {
    const traces = fig.data.map((t) => {
      if (!Array.isArray(t.customdata)) return t;
      const n = t.customdata.length;
      const keep = [];
      for (let i = 0; i < n; i++) if (visible[t.customdata[i]]) keep.push(i);
      const out = Object.assign({}, t);
      for (const p of PER_POINT) {
        if (Array.isArray(t[p]) && t[p].length === n) out[p] = keep.map((i) => t[p][i]);
      }
      return out;
    });
    return { data: traces, layout: fig.layout };
  }

  function drawCharts(visible) {
    for (const [id, fig] of Object.entries(figures)) {
      const el = document.getElementById(id);
      if (!el) continue;
      const f = filterFigure(fig, visible);
      Plotly.react(el, f.data, f.layout, { responsive: true, displaylogo: false });
    }
  }

  // -- tables --------------------------------------------------------------------------
  function summarise(tr, visible) {
    const members = JSON.parse(tr.dataset.members).filter((m) => visible[m[0]]);
    tr.hidden = members.length === 0;
    const column = (c) => members.map((m) => m[c]).filter((v) => v !== null && v !== undefined);
    tr.querySelectorAll("[data-agg]").forEach((cell) => {
      const c = Number(cell.dataset.col);
      const vals = column(c);
      switch (cell.dataset.agg) {
        case "n":
          cell.textContent = String(members.length);
          break;
        case "count":
          cell.textContent = String(vals.length);
          break;
        case "median":
          cell.textContent = fmt(median(vals), "int");
          break;
        case "median_s":
          cell.textContent = fmt(median(vals), "s1");
          break;
        case "range":
          cell.textContent = vals.length
            ? fmt(Math.min(...vals), "int") + "\u2013" + fmt(Math.max(...vals), "int")
            : "\u2014";
          break;
      }
    });
    return column;
  }

  function ratios(table, columns) {
    // "optimized ×": the reference group's median over this group's, for the runs shown.
    table.querySelectorAll("tr[data-ref]").forEach((tr) => {
      const cell = tr.querySelector('[data-agg="ratio"]');
      const c = Number(cell.dataset.col);
      const own = columns.get(tr.dataset.group);
      const ref = columns.get(tr.dataset.ref);
      const mOwn = own ? median(own(c)) : null;
      const mRef = ref ? median(ref(c)) : null;
      if (mOwn === null || mRef === null || mOwn === 0) {
        cell.textContent = "\u2014";
        return;
      }
      const single = Math.min(own(c).length, ref(c).length) < 2 ? " (single run)" : "";
      cell.textContent = fmt(mRef / mOwn, "x2") + "\u00d7" + single;
    });
  }

  function drawTables(visible) {
    document.querySelectorAll(".table-wrap").forEach((wrap) => {
      const table = wrap.querySelector("table");
      const columns = new Map();
      let shown = 0;
      let total = 0;
      table.querySelectorAll("tbody tr").forEach((tr) => {
        total++;
        if (tr.dataset.members !== undefined) {
          const column = summarise(tr, visible);
          if (tr.dataset.group) columns.set(tr.dataset.group, column);
        } else if (tr.dataset.k !== undefined) {
          tr.hidden = !visible[Number(tr.dataset.k)];
        }
        if (!tr.hidden) shown++;
      });
      ratios(table, columns);
      const what = wrap.querySelector(".shown");
      what.textContent =
        shown === total ? `${total} ${what.dataset.what}` : `${shown} of ${total} ${what.dataset.what}`;
      wrap.querySelector(".none-shown").hidden = shown > 0;
      table.hidden = shown === 0;
    });
  }

  function apply() {
    const visible = visibleKeys(ticked());
    drawTables(visible);
    drawCharts(visible);
  }

  document.querySelectorAll("#filters input[type=checkbox]").forEach((i) => i.addEventListener("change", apply));
  document.querySelectorAll("#filters button").forEach((b) =>
    b.addEventListener("click", () => {
      const d = b.dataset.all || b.dataset.none;
      document.querySelectorAll(`input[data-dim="${d}"]`).forEach((i) => (i.checked = !!b.dataset.all));
      apply();
    })
  );
  window.addEventListener("pageshow", apply); // back/forward keeps the boxes' state
  apply();
  document.body.dataset.ready = "1";
})();
