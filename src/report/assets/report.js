// @ts-check
/* skillopt report: draws the page from the embedded JSON (no network, no dependencies). */
(function () {
  'use strict';
  /**
   * The page's two embedded JSON blocks (report/html.ts writes them): META names the run, DATA holds what is
   * drawn; `kind` picks the renderer. Their fields are the report builders' output (report/build-*.ts).
   * @typedef {{ kind: 'optimize' | 'compare' | 'matrix' | 'run' } & Record<string, any>} ReportData
   */
  /** @type {Record<string, any>} */
  var META = JSON.parse(document.getElementById('skillopt-meta').textContent);
  /** @type {ReportData} */
  var DATA = JSON.parse(document.getElementById('skillopt-data').textContent);
  var app = document.getElementById('app');

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────────
  var ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  /** HTML-escape a value (null and undefined → '').
   * @param {unknown} s @returns {string} */
  function esc(s) {
    return s === null || s === undefined
      ? ''
      : String(s).replace(/[&<>"']/g, function (c) {
          return ESC[c];
        });
  }
  /** @param {number | null | undefined} x @returns {string} */
  function f3(x) {
    return x === null || x === undefined ? '—' : Number(x).toFixed(3);
  }
  /** @param {number | null | undefined} n @returns {string} */
  function int(n) {
    return n === null || n === undefined ? '—' : Number(n).toLocaleString('en-US');
  }
  /** @param {number} n @returns {string} */
  function kTok(n) {
    return n >= 1e6 ? (n / 1e6).toFixed(2) + 'M' : n >= 1e4 ? (n / 1e3).toFixed(1) + 'k' : String(n);
  }
  /** @param {number | null | undefined} x @returns {string} */
  /** Money as src/cost/pricing.ts formatMoney shows it: "—" when unknown, more digits for small amounts. */
  function money(x, cur) {
    if (x === null || x === undefined || !Number.isFinite(x)) return '—';
    var a = Math.abs(x);
    return Number(x).toFixed(a === 0 || a >= 1 ? 2 : a >= 0.01 ? 4 : 6) + (cur ? ' ' + cur : '');
  }
  /** @param {number} x @returns {number} */
  function r1(x) {
    return Math.round(x * 10) / 10;
  }
  var PALETTE = [
    '#2463eb',
    '#1a7f37',
    '#b26a00',
    '#8a3ffc',
    '#c62828',
    '#0f766e',
    '#a21caf',
    '#64748b',
    '#ca8a04',
    '#0369a1',
  ];
  /** @param {string} id @param {string} title @param {string} inner HTML @returns {string} */
  function section(id, title, inner) {
    return '<section id="' + id + '"><h2>' + esc(title) + '</h2>' + inner + '</section>';
  }
  /** @param {string} s @returns {string} */
  function statusBadge(s) {
    var cls =
      s === 'pass' || s === 'accepted' || s === 'fixed' || s === 'still passing'
        ? 'b-pass'
        : s === 'fail' || s === 'rejected' || s === 'regressed' || s === 'still failing'
          ? 'b-fail'
          : s === 'errored'
            ? 'b-errored'
            : s === 'flaky'
              ? 'b-flaky'
              : '';
    return '<span class="st ' + cls + '">' + esc(s) + '</span>';
  }
  /** @param {string[][]} pairs [label, HTML] each @returns {string} */
  function kv(pairs) {
    var h = '<dl class="kv">';
    for (var i = 0; i < pairs.length; i++) h += '<dt>' + esc(pairs[i][0]) + '</dt><dd>' + pairs[i][1] + '</dd>';
    return h + '</dl>';
  }

  // ── charts (SVG strings) ─────────────────────────────────────────────────────────────────────────
  /** About `n` round tick values from `min` to `max`.
   * @param {number} min @param {number} max @param {number} n @returns {number[]} */
  function ticks(min, max, n) {
    var span = max - min || 1;
    var step = 10 ** Math.floor(Math.log10(span / n));
    var err = span / n / step;
    if (err >= 7.5) step *= 10;
    else if (err >= 3.5) step *= 5;
    else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) out.push(Math.round(v * 1e9) / 1e9);
    return out;
  }

  /**
   * @typedef {{ x: number, y: number | null, cls?: string, title?: string, key?: string }} ChartPoint
   * @typedef {{ cls: string, line?: boolean, step?: boolean, dots?: boolean, r?: number, points: ChartPoint[] }} ChartSeries
   * @typedef {{ width?: number, height?: number, x: number[], y: number[], xLabel?: string, yLabel?: string, label?: string,
   *   yFmt?: (y: number) => string, xFmt?: (x: number) => string,
   *   series?: ChartSeries[], hlines?: Array<{ y: number, cls: string, label?: string }>, xInt?: boolean }} LineChartOptions
   */
  /** An SVG line chart. @param {LineChartOptions} o @returns {string} */
  function lineChart(o) {
    var W = o.width || 760,
      H = o.height || 280,
      L = 52,
      R = 18,
      T = 14,
      B = 40;
    var x0 = o.x[0],
      x1 = o.x[1],
      y0 = o.y[0],
      y1 = o.y[1];
    if (x1 === x0) {
      x0 -= 0.5;
      x1 += 0.5;
    }
    if (y1 === y0) {
      y0 -= 0.5;
      y1 += 0.5;
    }
    function sx(x) {
      return r1(L + ((x - x0) / (x1 - x0)) * (W - L - R));
    }
    function sy(y) {
      return r1(T + (1 - (y - y0) / (y1 - y0)) * (H - T - B));
    }
    var s =
      '<svg class="chart" viewBox="0 0 ' +
      W +
      ' ' +
      H +
      '" width="' +
      W +
      '" height="' +
      H +
      '" role="img" aria-label="' +
      esc(o.label || '') +
      '">';
    var yt = ticks(y0, y1, 5);
    for (var i = 0; i < yt.length; i++)
      s +=
        '<line class="grid" x1="' +
        L +
        '" x2="' +
        (W - R) +
        '" y1="' +
        sy(yt[i]) +
        '" y2="' +
        sy(yt[i]) +
        '"/><text x="' +
        (L - 6) +
        '" y="' +
        (sy(yt[i]) + 4) +
        '" text-anchor="end">' +
        (o.yFmt ? o.yFmt(yt[i]) : yt[i]) +
        '</text>';
    var xt = ticks(x0, x1, Math.min(12, Math.max(2, Math.round(x1 - x0)))).filter(function (v) {
      return !o.xInt || v === Math.round(v);
    });
    for (i = 0; i < xt.length; i++)
      s +=
        '<text x="' +
        sx(xt[i]) +
        '" y="' +
        (H - B + 16) +
        '" text-anchor="middle">' +
        esc(o.xFmt ? o.xFmt(xt[i]) : xt[i]) +
        '</text>';
    s +=
      '<line class="axis" x1="' +
      L +
      '" x2="' +
      (W - R) +
      '" y1="' +
      (H - B) +
      '" y2="' +
      (H - B) +
      '"/><line class="axis" x1="' +
      L +
      '" x2="' +
      L +
      '" y1="' +
      T +
      '" y2="' +
      (H - B) +
      '"/>';
    if (o.xLabel)
      s += '<text x="' + (L + W - R) / 2 + '" y="' + (H - 6) + '" text-anchor="middle">' + esc(o.xLabel) + '</text>';
    if (o.yLabel)
      s +=
        '<text x="12" y="' +
        (T + H - B) / 2 +
        '" text-anchor="middle" transform="rotate(-90 12 ' +
        (T + H - B) / 2 +
        ')">' +
        esc(o.yLabel) +
        '</text>';
    (o.hlines || []).forEach(function (h) {
      s +=
        '<line class="' + h.cls + '" x1="' + L + '" x2="' + (W - R) + '" y1="' + sy(h.y) + '" y2="' + sy(h.y) + '"/>';
      if (h.label)
        s += '<text x="' + (W - R - 4) + '" y="' + (sy(h.y) - 4) + '" text-anchor="end">' + esc(h.label) + '</text>';
    });
    (o.series || []).forEach(function (se) {
      var pts = se.points.filter(function (p) {
        return p.y !== null && p.y !== undefined;
      });
      if (se.line && pts.length > 1) {
        var d = 'M' + sx(pts[0].x) + ' ' + sy(pts[0].y);
        for (var j = 1; j < pts.length; j++)
          d += se.step ? 'H' + sx(pts[j].x) + 'V' + sy(pts[j].y) : 'L' + sx(pts[j].x) + ' ' + sy(pts[j].y);
        s += '<path class="' + se.cls + '" d="' + d + '"/>';
      }
      if (se.dots !== false) {
        for (var k = 0; k < pts.length; k++) {
          var p = pts[k];
          s +=
            '<circle class="pt ' +
            (p.cls || '') +
            '" cx="' +
            sx(p.x) +
            '" cy="' +
            sy(p.y) +
            '" r="' +
            (se.r || 4.5) +
            '"' +
            (p.key !== undefined ? ' data-key="' + esc(p.key) + '"' : '') +
            '><title>' +
            esc(p.title || '') +
            '</title></circle>';
        }
      }
    });
    return s + '</svg>';
  }

  /** Stacked bars: o = {categories:[label], stacks:[{name, values:[]}], yLabel} */
  /**
   * A stacked bar chart: one bar per category, one stack segment per series value.
   * @param {{ width?: number, height?: number, categories: string[], stacks: Array<{ cls?: string, name?: string, values: number[] }>,
   *   yLabel?: string } & Record<string, any>} o
   * @returns {string}
   */
  function barChart(o) {
    var W = o.width || 760,
      H = o.height || 240,
      L = 60,
      R = 14,
      T = 12,
      B = 40;
    var n = o.categories.length;
    var fmt = o.fmt || kTok,
      vfmt = o.fmt || int;
    var totals = o.categories.map(function (_, i) {
      return o.stacks.reduce(function (a, st) {
        return a + (st.values[i] || 0);
      }, 0);
    });
    var max = Math.max.apply(null, totals.concat([o.fmt ? 1e-9 : 1]));
    var yt = ticks(0, max, 4);
    var top = Math.max(max, yt[yt.length - 1] || max);
    function sy(y) {
      return r1(T + (1 - y / top) * (H - T - B));
    }
    var bw = (W - L - R) / Math.max(n, 1);
    var s =
      '<svg class="chart" viewBox="0 0 ' +
      W +
      ' ' +
      H +
      '" width="' +
      W +
      '" height="' +
      H +
      '" role="img" aria-label="' +
      esc(o.label || '') +
      '">';
    for (var i = 0; i < yt.length; i++)
      s +=
        '<line class="grid" x1="' +
        L +
        '" x2="' +
        (W - R) +
        '" y1="' +
        sy(yt[i]) +
        '" y2="' +
        sy(yt[i]) +
        '"/><text x="' +
        (L - 6) +
        '" y="' +
        (sy(yt[i]) + 4) +
        '" text-anchor="end">' +
        esc(fmt(yt[i])) +
        '</text>';
    var every = Math.max(1, Math.ceil(n / 16));
    for (var c = 0; c < n; c++) {
      var acc = 0;
      var x = r1(L + c * bw + bw * 0.15),
        w = r1(Math.max(1, bw * 0.7));
      for (var k = 0; k < o.stacks.length; k++) {
        var v = o.stacks[k].values[c] || 0;
        if (!v) continue;
        var yTop = sy(acc + v),
          yBot = sy(acc);
        s +=
          '<rect x="' +
          x +
          '" y="' +
          yTop +
          '" width="' +
          w +
          '" height="' +
          r1(Math.max(0.5, yBot - yTop)) +
          '" fill="' +
          PALETTE[k % PALETTE.length] +
          '"><title>' +
          esc(o.categories[c] + ' · ' + o.stacks[k].name + ': ' + vfmt(v)) +
          '</title></rect>';
        acc += v;
      }
      if (c % every === 0)
        s +=
          '<text x="' +
          r1(L + c * bw + bw / 2) +
          '" y="' +
          (H - B + 16) +
          '" text-anchor="middle">' +
          esc(o.categories[c]) +
          '</text>';
    }
    s += '<line class="axis" x1="' + L + '" x2="' + (W - R) + '" y1="' + (H - B) + '" y2="' + (H - B) + '"/>';
    if (o.xLabel)
      s += '<text x="' + (L + W - R) / 2 + '" y="' + (H - 6) + '" text-anchor="middle">' + esc(o.xLabel) + '</text>';
    if (o.yLabel)
      s +=
        '<text x="12" y="' +
        (T + H - B) / 2 +
        '" text-anchor="middle" transform="rotate(-90 12 ' +
        (T + H - B) / 2 +
        ')">' +
        esc(o.yLabel) +
        '</text>';
    return s + '</svg>';
  }

  /** @param {string[][]} items [label, colour, border colour?] each @returns {string} */
  function legend(items) {
    var h = '<div class="legend">';
    for (var i = 0; i < items.length; i++)
      h +=
        '<span><i style="background:' +
        items[i][1] +
        (items[i][2] ? ';border:2px solid ' + items[i][2] : '') +
        '"></i>' +
        esc(items[i][0]) +
        '</span>';
    return h + '</div>';
  }

  /**
   * Rates with intervals, one row each.
   * @param {Array<{ label: string, value: number, lo?: number, hi?: number, cls?: string, ciCls?: string, title?: string }>} rows
   * @param {{ width?: number, x?: number[], vlines?: Array<{ x: number, cls: string }> } & Record<string, any>} [o]
   * @returns {string}
   */
  function dotPlot(rows, o) {
    o = o || {};
    var W = o.width || 560,
      row = 24,
      T = 10,
      B = 34,
      L = Math.min(
        200,
        16 +
          7 *
            Math.max.apply(
              null,
              rows
                .map(function (r) {
                  return String(r.label).length;
                })
                .concat([4]),
            ),
      );
    var H = T + B + row * rows.length,
      R = 16;
    var x0 = o.x ? o.x[0] : 0,
      x1 = o.x ? o.x[1] : 1;
    function sx(x) {
      return r1(L + ((x - x0) / (x1 - x0)) * (W - L - R));
    }
    var s =
      '<svg class="chart" viewBox="0 0 ' +
      W +
      ' ' +
      H +
      '" width="' +
      W +
      '" height="' +
      H +
      '" role="img" aria-label="' +
      esc(o.label || '') +
      '">';
    var xt = ticks(x0, x1, 5);
    for (var i = 0; i < xt.length; i++)
      s +=
        '<line class="grid" x1="' +
        sx(xt[i]) +
        '" x2="' +
        sx(xt[i]) +
        '" y1="' +
        T +
        '" y2="' +
        (H - B) +
        '"/><text x="' +
        sx(xt[i]) +
        '" y="' +
        (H - B + 16) +
        '" text-anchor="middle">' +
        (o.xFmt ? o.xFmt(xt[i]) : xt[i]) +
        '</text>';
    (o.vlines || []).forEach(function (v) {
      s +=
        '<line class="' + v.cls + '" x1="' + sx(v.x) + '" x2="' + sx(v.x) + '" y1="' + T + '" y2="' + (H - B) + '"/>';
    });
    for (i = 0; i < rows.length; i++) {
      var r = rows[i],
        y = T + row * i + row / 2;
      s += '<text x="' + (L - 8) + '" y="' + (y + 4) + '" text-anchor="end">' + esc(r.label) + '</text>';
      if (r.lo !== null && r.lo !== undefined)
        s +=
          '<line class="ci ' +
          (r.ciCls || '') +
          '" x1="' +
          sx(r.lo) +
          '" x2="' +
          sx(r.hi) +
          '" y1="' +
          y +
          '" y2="' +
          y +
          '"/>';
      if (r.value !== null && r.value !== undefined)
        s +=
          '<circle class="pt ' +
          (r.cls || 'rate') +
          '" cx="' +
          sx(r.value) +
          '" cy="' +
          y +
          '" r="5"><title>' +
          esc(r.title || '') +
          '</title></circle>';
    }
    if (o.xLabel)
      s += '<text x="' + (L + W - R) / 2 + '" y="' + (H - 4) + '" text-anchor="middle">' + esc(o.xLabel) + '</text>';
    return s + '</svg>';
  }

  // ── table: filter, sort, paginate, open a row ────────────────────────────────────────────────────
  /**
   * @typedef {any} Row a case row (an array, indexed by its columns) or a step record
   * @typedef {{ key: string, label: string, get: (row: Row) => unknown, num?: boolean, cls?: string, title?: string,
   *   render?: (row: Row) => string, sortGet?: (row: Row) => unknown, sortable?: boolean }} Column
   * @typedef {{ id: string, rows: Row[], columns: Column[], search: Array<(row: Row) => unknown>,
   *   searchLabel?: string, selects?: Array<{ key: string, label: string, get: (row: Row) => unknown, always?: boolean }>, sort?: { key: string, dir: number },
   *   pageSize?: number, detail?: (row: Row, index: number) => string, rowClass?: (row: Row) => string, note?: string }} TableSpec
   */
  /** @constructor @param {TableSpec} spec */
  function Table(spec) {
    this.spec = spec;
    this.sortKey = spec.sort ? spec.sort.key : null;
    this.sortDir = spec.sort ? spec.sort.dir : 1;
    this.page = 0;
    this.query = '';
    this.filters = {};
    this.text = null;
    this.view = null;
  }
  Table.prototype.html = function () {
    var sp = this.spec,
      h = '<div class="tbl" id="' + sp.id + '"><div class="controls">';
    if (sp.search)
      h +=
        '<input type="search" data-role="search" placeholder="' +
        esc(sp.searchLabel || 'filter…') +
        '" aria-label="filter rows">';
    (sp.selects || []).forEach(function (f) {
      var seen = {},
        vals = [];
      for (var i = 0; i < sp.rows.length; i++) {
        var v = f.get(sp.rows[i]);
        v = v === null || v === undefined ? '—' : String(v);
        if (!seen[v]) {
          seen[v] = 1;
          vals.push(v);
        }
      }
      if (vals.length < 2 && !f.always) return;
      vals.sort();
      h += '<label>' + esc(f.label) + ' <select data-filter="' + f.key + '"><option value="">all</option>';
      for (var j = 0; j < vals.length; j++) h += '<option value="' + esc(vals[j]) + '">' + esc(vals[j]) + '</option>';
      h += '</select></label>';
    });
    h += '<span class="count" data-role="count"></span></div><div class="scroll"><table><thead><tr>';
    sp.columns.forEach(function (c) {
      h +=
        '<th data-key="' +
        c.key +
        '" class="' +
        (c.sortable === false ? '' : 'sortable ') +
        (c.num ? 'num' : '') +
        '"' +
        (c.title ? ' title="' + esc(c.title) + '"' : '') +
        '>' +
        esc(c.label) +
        '</th>';
    });
    h +=
      '</tr></thead><tbody></tbody></table></div><div class="pager"><button data-role="prev">‹ prev</button><span data-role="page"></span><button data-role="next">next ›</button></div>';
    if (sp.note) h += '<p class="muted small">' + sp.note + '</p>';
    return h + '</div>';
  };
  Table.prototype.mount = function () {
    var self = this,
      sp = this.spec;
    this.el = document.getElementById(sp.id);
    this.tbody = this.el.querySelector('tbody');
    var timer = null;
    var search = /** @type {HTMLInputElement | null} */ (this.el.querySelector('[data-role=search]'));
    if (search)
      search.addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () {
          self.query = search.value.trim().toLowerCase();
          self.page = 0;
          self.refresh();
        }, 80);
      });
    this.el.querySelectorAll('select[data-filter]').forEach(
      /** @param {HTMLSelectElement} sel */ function (sel) {
        sel.addEventListener('change', function () {
          self.filters[sel.getAttribute('data-filter')] = sel.value;
          self.page = 0;
          self.refresh();
        });
      },
    );
    this.el.querySelectorAll('th.sortable').forEach(function (th) {
      th.addEventListener('click', function () {
        var k = th.getAttribute('data-key');
        if (self.sortKey === k) self.sortDir = -self.sortDir;
        else {
          self.sortKey = k;
          self.sortDir = 1;
        }
        self.page = 0;
        self.refresh();
      });
    });
    this.el.querySelector('[data-role=prev]').addEventListener('click', function () {
      if (self.page > 0) {
        self.page--;
        self.draw();
      }
    });
    this.el.querySelector('[data-role=next]').addEventListener('click', function () {
      if ((self.page + 1) * self.size() < self.view.length) {
        self.page++;
        self.draw();
      }
    });
    this.tbody.addEventListener('click', function (ev) {
      var tr = /** @type {Element} */ (ev.target).closest('tr.row');
      if (!tr || !sp.detail) return;
      var next = tr.nextElementSibling;
      if (next?.classList.contains('detail')) {
        next.remove();
        tr.classList.remove('open');
        return;
      }
      var i = Number(tr.getAttribute('data-i'));
      var d = document.createElement('tr');
      d.className = 'detail';
      d.innerHTML = '<td colspan="' + sp.columns.length + '">' + sp.detail(sp.rows[i], i) + '</td>';
      tr.after(d);
      tr.classList.add('open');
    });
    this.refresh();
  };
  Table.prototype.size = function () {
    return this.spec.pageSize || 100;
  };
  Table.prototype.col = function (key) {
    for (var i = 0; i < this.spec.columns.length; i++)
      if (this.spec.columns[i].key === key) return this.spec.columns[i];
    return null;
  };
  Table.prototype.refresh = function () {
    var sp = this.spec,
      rows = sp.rows,
      self = this,
      out = [],
      i;
    if (this.query && !this.text) {
      this.text = new Array(rows.length);
      for (i = 0; i < rows.length; i++)
        this.text[i] = sp.search
          .map(function (g) {
            var v = g(rows[i]);
            return v === null || v === undefined ? '' : String(v);
          })
          .join('\u0001')
          .toLowerCase();
    }
    var active = (sp.selects || []).filter(function (f) {
      return self.filters[f.key];
    });
    for (i = 0; i < rows.length; i++) {
      if (this.query && this.text[i].indexOf(this.query) < 0) continue;
      var ok = true;
      for (var j = 0; j < active.length; j++) {
        var v = active[j].get(rows[i]);
        if ((v === null || v === undefined ? '—' : String(v)) !== this.filters[active[j].key]) {
          ok = false;
          break;
        }
      }
      if (ok) out.push(i);
    }
    var c = this.sortKey && this.col(this.sortKey);
    if (c) {
      var get = c.sortGet || c.get,
        dir = this.sortDir;
      var keys = new Array(rows.length);
      for (i = 0; i < out.length; i++) keys[out[i]] = get(rows[out[i]]);
      out.sort(function (a, b) {
        var x = keys[a],
          y = keys[b];
        var xn = x === null || x === undefined || x === '',
          yn = y === null || y === undefined || y === '';
        if (xn || yn) return xn === yn ? a - b : xn ? 1 : -1;
        if (typeof x === 'boolean') {
          x = x ? 1 : 0;
          y = y ? 1 : 0;
        }
        return (x < y ? -1 : x > y ? 1 : a - b) * dir;
      });
    }
    this.el.querySelectorAll('th').forEach(function (th) {
      var k = th.getAttribute('data-key');
      if (k === self.sortKey) th.setAttribute('aria-sort', self.sortDir > 0 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    });
    this.view = out;
    this.draw();
  };
  Table.prototype.draw = function () {
    var sp = this.spec,
      n = this.view.length,
      size = this.size();
    var start = this.page * size,
      end = Math.min(n, start + size),
      h = '';
    for (var k = start; k < end; k++) {
      var i = this.view[k],
        row = sp.rows[i];
      h += '<tr class="row' + (sp.rowClass ? ' ' + sp.rowClass(row) : '') + '" data-i="' + i + '">';
      for (var c = 0; c < sp.columns.length; c++) {
        var col = sp.columns[c];
        var v = col.render ? col.render(row) : esc(col.get(row));
        h += '<td class="' + (col.num ? 'num ' : '') + (col.cls || '') + '">' + v + '</td>';
      }
      h += '</tr>';
    }
    this.tbody.innerHTML = h;
    var total = sp.rows.length;
    this.el.querySelector('[data-role=count]').textContent =
      n === 0
        ? 'no rows match' + (total ? ' (of ' + int(total) + ')' : '')
        : 'rows ' +
          int(start + 1) +
          '–' +
          int(end) +
          ' of ' +
          int(n) +
          (n !== total ? ' (filtered from ' + int(total) + ')' : '');
    this.el.querySelector('[data-role=page]').textContent =
      n > size ? 'page ' + (this.page + 1) + ' of ' + Math.ceil(n / size) : '';
    /** @type {HTMLButtonElement} */ (this.el.querySelector('[data-role=prev]')).disabled = this.page === 0;
    /** @type {HTMLButtonElement} */ (this.el.querySelector('[data-role=next]')).disabled = end >= n;
  };

  // ── header ───────────────────────────────────────────────────────────────────────────────────────
  function header(verdict) {
    var kindLabel =
      { test: 'test run', eval: 'eval run', optimize: 'optimize run', compare: 'comparison', matrix: 'matrix of runs' }[
        META.kind
      ] || META.kind;
    var h =
      '<header class="top"><h1>' +
      esc(META.title) +
      '</h1><div class="badges"><span class="badge">' +
      esc(kindLabel) +
      '</span>';
    if (verdict)
      h += '<span class="badge ' + esc(verdict.cls) + '" id="verdict-badge">' + esc(verdict.text) + '</span>';
    if (META.simulated) h += '<span class="badge sim">simulated model</span>';
    h +=
      '<span class="muted small">generated ' +
      esc(META.generated_at.replace('T', ' ').slice(0, 19)) +
      ' UTC · skillopt ' +
      esc(META.skillopt_version) +
      '</span></div>';
    var facts = [['folder', '<code>' + esc(META.folder) + '</code>']];
    if (META.command)
      facts.push([
        'command',
        '<span class="cmd"><code id="command">' +
          esc(META.command) +
          '</code><button data-copy="command" title="copy">copy</button></span>',
      ]);
    for (var i = 0; i < META.facts.length; i++) facts.push([META.facts[i][0], esc(META.facts[i][1])]);
    h += '<dl class="facts">';
    for (i = 0; i < facts.length; i++) h += '<dt>' + esc(facts[i][0]) + '</dt><dd>' + facts[i][1] + '</dd>';
    h += '</dl></header>';
    return h;
  }
  function filesSection() {
    if (!META.files.length) return '';
    var h = '<ul class="files">';
    for (var i = 0; i < META.files.length; i++)
      h +=
        '<li><code>' +
        esc(META.folder + '/' + META.files[i][1]) +
        '</code> <span class="muted">— ' +
        esc(META.files[i][0]) +
        '</span></li>';
    return section('files', 'Files', h + '</ul>');
  }
  function cards(list) {
    var h = '<div class="cards">';
    for (var i = 0; i < list.length; i++)
      h +=
        '<div class="card"><div class="k">' +
        esc(list[i][0]) +
        '</div><div class="v">' +
        esc(list[i][1]) +
        '</div><div class="d">' +
        esc(list[i][2]) +
        '</div></div>';
    return h + '</div>';
  }
  function toc(items) {
    var h = '<nav class="toc">';
    for (var i = 0; i < items.length; i++) h += '<a href="#' + items[i][0] + '">' + esc(items[i][1]) + '</a>';
    return h + '</nav>';
  }

  // ── cases (test, eval, an optimize run's evaluation) ────────────────────────────────────────────
  function caseTableSpec(id, cases, extra) {
    var C = {};
    cases.columns.forEach(function (c, i) {
      C[c] = i;
    });
    var multiSuite = false;
    for (var i = 1; i < cases.rows.length; i++)
      if (cases.rows[i][C.suite] !== cases.rows[0][C.suite]) {
        multiSuite = true;
        break;
      }
    var g = function (k) {
      return function (r) {
        return r[C[k]];
      };
    };
    var cols = [];
    if (multiSuite) cols.push({ key: 'suite', label: 'suite', get: g('suite') });
    cols.push({ key: 'id', label: 'id', get: g('id'), cls: 'id' });
    cols.push({ key: 'split', label: 'split', get: g('split') });
    cols.push({ key: 'task_type', label: 'task type', get: g('task_type') });
    cols.push({
      key: 'status',
      label: 'pass',
      get: g('status'),
      render: function (r) {
        return (
          statusBadge(r[C.status]) + (r[C.trials] ? ' <span class="muted small">' + esc(r[C.trials]) + '</span>' : '')
        );
      },
      sortGet: function (r) {
        return r[C.status] === 'errored' ? -1 : r[C.pass];
      },
    });
    if (extra?.baseline)
      cols.push({
        key: 'baseline',
        label: extra.baselineLabel,
        get: function (r) {
          var b = extra.baseline[r[C.suite] + '\n' + r[C.id]];
          return b ? b[0] : null;
        },
        render: function (r) {
          var b = extra.baseline[r[C.suite] + '\n' + r[C.id]];
          return b ? statusBadge(b[0]) : '—';
        },
      });
    cols.push({
      key: 'score',
      label: 'score',
      get: g('score'),
      num: true,
      render: function (r) {
        return f3(r[C.score]);
      },
      title: 'soft score (mean over trials)',
    });
    cols.push({
      key: 'expected',
      label: 'expected',
      get: g('expected'),
      cls: 'clip',
      render: function (r) {
        return '<span title="' + esc(r[C.expected]) + '">' + esc(r[C.expected]) + '</span>';
      },
    });
    cols.push({
      key: 'answer',
      label: 'answer',
      get: g('answer'),
      cls: 'clip',
      render: function (r) {
        return '<span title="' + esc(r[C.answer]) + '">' + esc(r[C.answer]) + '</span>';
      },
    });
    cols.push({
      key: 'feedback',
      label: 'feedback',
      get: g('feedback'),
      cls: 'clip',
      render: function (r) {
        return '<span title="' + esc(r[C.feedback]) + '">' + esc(r[C.feedback]) + '</span>';
      },
    });
    cols.push({
      key: 'latency_ms',
      label: 'latency ms',
      get: g('latency_ms'),
      num: true,
      render: function (r) {
        return int(r[C.latency_ms]);
      },
    });
    cols.push({
      key: 'tokens',
      label: 'tokens',
      get: g('tokens'),
      num: true,
      render: function (r) {
        return int(r[C.tokens]);
      },
    });
    // cost of the case (its trials, target and judge) when prices are set (docs/accounting.md#cost)
    if (
      C.cost !== undefined &&
      cases.rows.some(function (r) {
        return r[C.cost] !== null;
      })
    )
      cols.push({
        key: 'cost',
        label: 'cost ' + (cases.currency || ''),
        get: g('cost'),
        num: true,
        render: function (r) {
          return money(r[C.cost]);
        },
      });
    cols.push({
      key: 'errored',
      label: 'errored',
      get: function (r) {
        return r[C.status] === 'errored';
      },
      render: function (r) {
        return r[C.status] === 'errored' ? '<span class="st b-errored">yes</span>' : '';
      },
    });
    if (cases.trials > 1)
      cols.push({
        key: 'flaky',
        label: 'flaky',
        get: g('flaky'),
        render: function (r) {
          return r[C.flaky] ? '<span class="st b-flaky">flaky</span>' : '';
        },
      });
    var selects = [];
    if (multiSuite) selects.push({ key: 'suite', label: 'suite', get: g('suite') });
    selects.push({ key: 'status', label: 'status', get: g('status'), always: true });
    selects.push({ key: 'split', label: 'split', get: g('split') });
    selects.push({ key: 'task_type', label: 'task type', get: g('task_type') });
    if (cases.trials > 1)
      selects.push({
        key: 'flaky',
        label: 'flaky',
        get: function (r) {
          return r[C.flaky] ? 'flaky' : 'stable';
        },
      });
    if (extra?.baseline)
      selects.push({
        key: 'baseline',
        label: extra.baselineLabel,
        get: function (r) {
          var b = extra.baseline[r[C.suite] + '\n' + r[C.id]];
          return b ? b[0] : null;
        },
      });
    return {
      id: id,
      rows: cases.rows,
      columns: cols,
      search: [g('id'), g('expected'), g('answer'), g('feedback'), g('task_type')],
      searchLabel: 'filter by id, answer, expected, feedback…',
      selects: selects,
      sort: { key: 'status', dir: 1 },
      pageSize: 100,
      rowClass: function (r) {
        return 'r-' + r[C.status];
      },
      note:
        'Click a row for the case in full: its messages, trials and line in ' +
        esc(cases.source) +
        '. Answers, expected values and feedback are clipped to ' +
        cases.clip_chars +
        ' characters; ' +
        esc(cases.messages_note) +
        '.',
      detail: function (r, i) {
        return caseDetail(cases, C, r, i, extra);
      },
    };
  }

  function caseDetail(cases, C, r, i, extra) {
    var pairs = [
      ['case', '<code>' + esc(r[C.suite] + ' / ' + r[C.id]) + '</code>'],
      [
        'outcome',
        statusBadge(r[C.status]) + ' pass ' + f3(r[C.pass]) + ' · soft ' + f3(r[C.score]) + ' · hard ' + f3(r[C.hard]),
      ],
      ['expected', '<pre>' + esc(r[C.expected]) + '</pre>'],
      ['answer', '<pre>' + esc(r[C.answer]) + '</pre>'],
      ['feedback', '<pre>' + esc(r[C.feedback]) + '</pre>'],
      [
        'latency · tokens · cost',
        int(r[C.latency_ms]) +
          ' ms · ' +
          int(r[C.tokens]) +
          ' tokens · ' +
          money(C.cost !== undefined ? r[C.cost] : null, cases.currency),
      ],
      [
        'full record',
        r[C.line]
          ? '<code>' + esc(cases.source) + '</code> line ' + r[C.line]
          : '<code>' + esc(cases.source) + '</code>',
      ],
    ];
    if (extra?.baseline) {
      var b = extra.baseline[r[C.suite] + '\n' + r[C.id]];
      if (b) pairs.push([extra.baselineLabel, statusBadge(b[0]) + ' <pre>' + esc(b[1]) + '</pre>']);
    }
    var h = kv(pairs);
    if (cases.trial_rows) {
      var t = cases.trial_rows[i];
      h +=
        '<h3>Trials</h3><table><thead><tr><th>trial</th><th>pass</th><th class="num">soft</th><th>answer</th><th>feedback</th></tr></thead><tbody>';
      for (var k = 0; k < t.length; k++)
        h +=
          '<tr><td>' +
          t[k][0] +
          '</td><td>' +
          statusBadge(t[k][1] === null ? 'errored' : t[k][1] ? 'pass' : 'fail') +
          '</td><td class="num">' +
          f3(t[k][2]) +
          '</td><td>' +
          esc(t[k][3]) +
          '</td><td>' +
          esc(t[k][4]) +
          '</td></tr>';
      h += '</tbody></table>';
    }
    if (cases.trajectories) h += trajectorySection(cases, r, C, i);
    var m = cases.messages.rows[i];
    h += '<h3>Messages</h3>';
    if (!m) {
      h +=
        '<p class="muted">Not embedded (the report keeps within its size budget): the full record is ' +
        (r[C.line] ? 'line ' + r[C.line] + ' of ' : 'in ') +
        '<code>' +
        esc(cases.source) +
        '</code>.</p>';
    } else {
      for (var j = 0; j < m.length; j += 2) {
        var text = cases.messages.texts[m[j + 1]];
        var role = cases.messages.roles[m[j]] || 'user';
        var clipped = cases.messages.clipped.indexOf(m[j + 1]) >= 0;
        var body =
          '<pre>' +
          esc(text) +
          '</pre>' +
          (clipped ? '<p class="muted small">clipped; the full text is in ' + esc(cases.source) + '</p>' : '');
        h +=
          '<div class="msg"><div class="role">' +
          esc(role) +
          ' · ' +
          int(text.length) +
          ' chars</div>' +
          (role === 'system' && text.length > 600
            ? '<details><summary>show the system message (the skill)</summary>' + body + '</details>'
            : body) +
          '</div>';
      }
    }
    return h;
  }

  /** A case's trajectory (docs/agents.md) as a timeline: each turn, its text, its calls with their arguments, each result (ok or error, ms, clipped). */
  function trajectoryTimeline(steps) {
    var h = '<ol class="traj">';
    var turn = -1;
    steps.forEach(function (st) {
      if (st.t !== turn) {
        if (turn !== -1) h += '</ol></li>';
        turn = st.t;
        h += '<li class="turn"><div class="turn-head">turn ' + esc(st.t) + '</div><ol>';
      }
      if (st.k === 'assistant') {
        if (st.c)
          h +=
            '<li class="step assistant"><span class="tag">assistant' +
            (st.calls ? '' : ' · answer') +
            '</span><pre>' +
            esc(st.c) +
            '</pre></li>';
        (st.calls || []).forEach(function (c) {
          h +=
            '<li class="step call"><span class="tag">call</span> <b class="tool">' +
            esc(c[1]) +
            '</b> <code class="args">' +
            esc(c[2]) +
            '</code> <span class="muted small">' +
            esc(c[0]) +
            '</span></li>';
        });
      } else if (st.r) {
        var r = st.r;
        h +=
          '<li class="step result ' +
          (r[1] ? 'ok' : 'err') +
          '"><span class="tag">result</span> <b class="tool">' +
          esc(r[0]) +
          '</b> ' +
          '<span class="st ' +
          (r[1] ? 'b-pass">ok' : 'b-fail">error') +
          '</span>' +
          ' <span class="muted small">' +
          int(r[3]) +
          ' ms</span>' +
          (r[4] ? ' <span class="st b-flaky clipped">clipped</span>' : '') +
          '<pre>' +
          esc(r[2]) +
          '</pre></li>';
      }
    });
    if (turn !== -1) h += '</ol></li>';
    return h + '</ol>';
  }

  function trajectorySection(cases, r, C, i) {
    var steps = cases.trajectories.rows[i];
    var trial = cases.trajectories.trials[i];
    var h = '<h3>Trajectory</h3>';
    if (!steps)
      return (
        h +
        '<p class="muted small">' +
        (r[C.line]
          ? 'No trajectory embedded for this case (' + esc(cases.trajectories.note) + ').'
          : 'No trajectory.') +
        '</p>'
      );
    var turns = steps.reduce(function (m, st) {
      return Math.max(m, st.t);
    }, 0);
    var calls = steps.reduce(function (n, st) {
      return n + (st.calls ? st.calls.length : 0);
    }, 0);
    return (
      h +
      '<p class="muted small">' +
      turns +
      ' turns · ' +
      calls +
      ' tool calls' +
      (trial !== null && trial !== undefined ? ' · trial ' + trial : '') +
      '</p>' +
      trajectoryTimeline(steps)
    );
  }

  /** A regressed case's first divergent step (compare.json `divergence`). */
  function divergenceText(d) {
    if (d === null) return 'the same calls on both sides';
    var ev = function (e) {
      if (!e) return '(ended)';
      if (e.kind === 'call')
        return 'turn ' + e.turn + ' call ' + e.name + ' ' + (e.args === undefined ? '{}' : JSON.stringify(e.args));
      if (e.kind === 'result') return 'turn ' + e.turn + ' result ' + e.name + ' ' + (e.ok ? 'ok' : 'error');
      return 'turn ' + e.turn + ' answer ' + JSON.stringify(e.text || '');
    };
    return 'step ' + d.event + ': baseline ' + ev(d.baseline) + ' · candidate ' + ev(d.candidate);
  }

  function statsTable(rows, first) {
    var flaky = rows.some(function (r) {
      return r[10] !== null;
    });
    var h =
      '<table class="stats"><thead><tr><th>' +
      esc(first) +
      '</th><th class="num">n</th><th class="num">pass</th><th class="num">fail</th><th class="num">errored</th><th class="num">pass rate</th><th>95% CI</th><th class="num">mean hard</th><th class="num">mean soft</th>' +
      (flaky ? '<th class="num">flaky</th>' : '') +
      '</tr></thead><tbody>';
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      h +=
        '<tr><td>' +
        esc(r[0]) +
        '</td><td class="num">' +
        r[1] +
        '</td><td class="num">' +
        r[2] +
        '</td><td class="num">' +
        r[3] +
        '</td><td class="num">' +
        r[4] +
        '</td><td class="num">' +
        f3(r[5]) +
        '</td><td>' +
        (r[6] === null ? '—' : f3(r[6]) + '–' + f3(r[7])) +
        '</td><td class="num">' +
        f3(r[8]) +
        '</td><td class="num">' +
        f3(r[9]) +
        '</td>' +
        (flaky ? '<td class="num">' + (r[10] === null ? '—' : r[10]) + '</td>' : '') +
        '</tr>';
    }
    return h + '</tbody></table>';
  }

  function ratePlot(suite) {
    var rows = [
      {
        label: 'all',
        value: suite.all[5],
        lo: suite.all[6],
        hi: suite.all[7],
        cls: 'rate',
        title: 'all: ' + f3(suite.all[5]),
      },
    ];
    suite.by_split.forEach(function (r) {
      rows.push({
        label: 'split ' + r[0],
        value: r[5],
        lo: r[6],
        hi: r[7],
        cls: 'rate',
        title: 'split ' + r[0] + ': ' + f3(r[5]) + ' (n ' + r[1] + ')',
      });
    });
    suite.by_task_type.slice(0, 40).forEach(function (r) {
      rows.push({
        label: r[0],
        value: r[5],
        lo: r[6],
        hi: r[7],
        cls: 'rate',
        title: r[0] + ': ' + f3(r[5]) + ' (n ' + r[1] + ')',
      });
    });
    return dotPlot(rows, {
      label: 'pass rate with 95% intervals',
      xLabel: 'pass rate (dot) and its 95% interval (line)',
      width: 430,
    });
  }

  function renderRun(D) {
    var S = D.scores,
      v = S.verdict;
    var h = header(v ? { text: v.verdict.toUpperCase(), cls: v.verdict } : null);
    h += toc([
      ['overview', 'overview'],
      ['breakdown', 'per split and task type'],
      ['costs', 'cost and tokens'],
      ['cases', 'cases (' + int(S.cases.rows.length) + ')'],
      ['files', 'files'],
    ]);
    var o = '';
    if (v)
      o +=
        '<div class="verdict ' +
        esc(v.verdict) +
        '"><b>' +
        esc(v.verdict.toUpperCase()) +
        '</b>' +
        (v.reason ? ' — ' + esc(v.reason) : '') +
        (v.next ? '<div class="muted small">next: ' + esc(v.next) + '</div>' : '') +
        '</div>';
    o += cards(S.cards);
    h += section('overview', 'Overview', o);
    var b = '';
    S.suites.forEach(function (s) {
      b +=
        '<h3>' +
        esc(s.suite) +
        (s.selection ? ' <span class="muted small">' + esc(s.selection) + '</span>' : '') +
        '</h3>';
      if (s.gate) b += '<p class="' + (s.gate.ok ? 'o-accepted' : 'o-rejected') + '">' + esc(s.gate.text) + '</p>';
      b +=
        '<div class="grid-bd"><div class="panel">' +
        ratePlot(s) +
        '</div><div class="panel">' +
        statsTable(s.by_split.concat([s.all]), 'split') +
        (s.by_task_type.length ? '<h3>per task type</h3>' + statsTable(s.by_task_type, 'task type') : '') +
        '</div></div>';
    });
    h += section('breakdown', 'Per split and task type', b);
    if (S.cost) h += section('costs', 'Cost and tokens per split', splitCostCharts(S.cost));
    var t = new Table(caseTableSpec('cases-table', S.cases));
    h += section('cases', 'Cases', t.html());
    h += filesSection();
    app.innerHTML = h;
    t.mount();
    openLinkedCase(t, S.cases);
  }

  /**
   * `report.html#case=<suite>/<id>` (the per-case grid of matrix.html links there): the cases table filtered
   * to that id, its row opened and scrolled to.
   * @param {Table} t @param {Record<string, any>} cases
   */
  function openLinkedCase(t, cases) {
    var m = /^#case=(.+)$/.exec(location.hash);
    if (!m) return;
    var want = decodeURIComponent(m[1]);
    var C = {};
    cases.columns.forEach(function (c, i) {
      C[c] = i;
    });
    var search = /** @type {HTMLInputElement | null} */ (t.el.querySelector('[data-role=search]'));
    var slash = want.indexOf('/');
    var id = slash >= 0 ? want.slice(slash + 1) : want;
    if (search) search.value = id;
    t.query = id.toLowerCase();
    t.page = 0;
    t.refresh();
    var rows = t.tbody.querySelectorAll('tr.row');
    for (var i = 0; i < rows.length; i++) {
      var r = cases.rows[Number(rows[i].getAttribute('data-i'))];
      if (r[C.suite] + '/' + r[C.id] !== want) continue;
      /** @type {HTMLElement} */ (rows[i]).click();
      rows[i].scrollIntoView();
      rows[i].setAttribute('id', 'linked-case');
      return;
    }
  }

  /** Tokens (uncached prompt, cached prompt, completion) and cost per split: [split, uncached, cached, completion, cost, rows]. */
  function splitCostCharts(c) {
    var cats = c.by_split.map(function (r) {
      return r[0] + ' (' + r[5] + ')';
    });
    var tok = barChart({
      label: 'tokens per split',
      categories: cats,
      xLabel: 'split (rows)',
      yLabel: 'tokens',
      stacks: [
        {
          name: 'prompt, uncached',
          values: c.by_split.map(function (r) {
            return r[1];
          }),
        },
        {
          name: 'prompt, cached',
          values: c.by_split.map(function (r) {
            return r[2];
          }),
        },
        {
          name: 'completion',
          values: c.by_split.map(function (r) {
            return r[3];
          }),
        },
      ],
    });
    var priced = c.by_split.some(function (r) {
      return r[4] !== null;
    });
    var cost = priced
      ? barChart({
          label: 'cost per split',
          categories: cats,
          xLabel: 'split (rows)',
          yLabel: 'cost ' + c.currency,
          fmt: function (v) {
            return money(v);
          },
          stacks: [
            {
              name: 'cost ' + c.currency,
              values: c.by_split.map(function (r) {
                return r[4] || 0;
              }),
            },
          ],
        })
      : '<p class="muted">No prices are set (<code>model.pricing</code>): cost is unknown, tokens are counted.</p>';
    var legendItems = [
      ['prompt, uncached', PALETTE[0]],
      ['prompt, cached', PALETTE[1]],
      ['completion', PALETTE[2]],
    ];
    return (
      '<div class="grid2"><div class="panel">' +
      tok +
      legend(legendItems) +
      '</div><div class="panel">' +
      cost +
      '</div></div>'
    );
  }

  // ── optimize ─────────────────────────────────────────────────────────────────────────────────────
  function renderOptimize(D) {
    var ok = D.stopped && D.stopped.reason === 'target_reached';
    var badge = D.stopped
      ? {
          text: 'stopped: ' + D.stopped.reason.replace(/_/g, ' '),
          cls: ok
            ? 'pass'
            : D.stopped.reason === 'infrastructure'
              ? 'inconclusive'
              : D.stopped.reason === 'budget'
                ? 'fail'
                : '',
        }
      : null;
    var h = header(badge);
    h += toc(
      [['overview', 'overview']].concat(D.models ? [['models', 'models']] : [], [
        ['curve', 'validation per step'],
        ['size', 'skill size'],
        ['schedule', 'edit budget'],
        ['costs', 'calls, tokens and cost'],
        ['steps', 'steps and edits'],
        ['diff', 'skill diff'],
        ['eval', 'cases'],
        ['files', 'files'],
      ]),
    );
    var o = cards(D.cards);
    if (D.stopped) o += '<p class="muted">stopped at step ' + D.stopped.step + ': ' + esc(D.stopped.detail) + '</p>';
    if (D.ungated.length)
      o +=
        '<details><summary>' +
        D.ungated.length +
        ' change(s) entered the skill without the validation gate</summary><ul>' +
        D.ungated
          .map(function (u) {
            return (
              '<li>step ' + u.step + ' (epoch ' + u.epoch + '): <b>' + esc(u.kind) + '</b> — ' + esc(u.detail) + '</li>'
            );
          })
          .join('') +
        '</ul></details>';
    h += section('overview', 'Overview', o);
    if (D.models) h += section('models', 'Models', modelsTable(D));

    // validation (and train) per step
    var steps = D.steps,
      T = Math.max(D.total_steps, steps.length ? steps[steps.length - 1].step : 0, 1);
    var cand = [],
      cur = [
        {
          x: 0,
          y: D.baseline.val,
          cls: 'baseline',
          title: 'baseline (initial skill): val pass rate ' + f3(D.baseline.val),
        },
      ],
      train = [];
    var curVal = D.baseline.val;
    steps.forEach(function (s) {
      if (s.val !== null)
        cand.push({
          x: s.step,
          y: s.val,
          cls: s.outcome,
          key: s.step,
          title:
            'step ' +
            s.step +
            ' · ' +
            s.action +
            ' · candidate val pass rate ' +
            f3(s.val) +
            (s.val_cached ? ' (cached)' : '') +
            ' · ' +
            s.why,
        });
      if (s.outcome === 'accepted' && s.val !== null) curVal = s.val;
      cur.push({
        x: s.step,
        y: curVal,
        cls: 'skipped',
        title: 'after step ' + s.step + ': current skill val pass rate ' + f3(curVal),
      });
      if (s.train !== null)
        train.push({
          x: s.step,
          y: s.train,
          cls: 'train',
          title: 'step ' + s.step + ' train batch mean hard ' + f3(s.train),
        });
    });
    var hl = [];
    if (D.target !== null) hl.push({ y: D.target, cls: 'target', label: 'target ' + D.target });
    var curve = lineChart({
      label: 'validation pass rate per step',
      x: [0, T],
      y: [0, 1],
      xInt: true,
      xLabel: 'step (0 = the initial skill)',
      yLabel: 'pass rate',
      hlines: hl,
      series: [
        { cls: 's-train', line: true, points: train, r: 3 },
        { cls: 's-cur', line: true, step: true, points: cur, dots: false },
        { cls: 's-val', line: false, points: cur.slice(0, 1) },
        { cls: 's-val', line: false, points: cand },
      ],
    });
    var epochNote = D.epoch_events.length
      ? '<details><summary>epoch-end stages (' +
        D.epoch_events.length +
        ')</summary><ul>' +
        D.epoch_events
          .map(function (e) {
            return (
              '<li>epoch ' +
              e.epoch +
              ' · ' +
              esc(e.stage) +
              ': <b>' +
              esc(e.action) +
              '</b>' +
              (e.detail ? ' — ' + esc(e.detail) : '') +
              '</li>'
            );
          })
          .join('') +
        '</ul></details>'
      : '';
    h += section(
      'curve',
      'Validation pass rate per step',
      '<div class="panel">' +
        curve +
        legend([
          ['candidate accepted', 'var(--pass)'],
          ['candidate rejected', 'var(--panel)', 'var(--fail)'],
          ['initial skill', 'var(--accent)'],
          ['current skill (line)', 'var(--pass)'],
          ['train batch (dashed)', 'var(--panel)', 'var(--skip)'],
        ]) +
        '<p class="muted small">gate metric: ' +
        esc(D.gate_metric) +
        '. Best: step ' +
        (D.best.step === null ? '—' : D.best.step) +
        ', val ' +
        f3(D.best.val) +
        ', test ' +
        f3(D.best.test) +
        ' (initial: val ' +
        f3(D.baseline.val) +
        ', test ' +
        f3(D.baseline.test) +
        ').</p>' +
        epochNote +
        '</div>',
    );

    // the skill's size per step (estimated tokens, chars / 4): the current skill, and each step's candidate
    var sizeCur = [
        {
          x: 0,
          y: D.skill_size.initial,
          cls: 'baseline',
          title: 'initial skill: ~' + int(D.skill_size.initial) + ' tokens (estimate)',
        },
      ],
      sizeCand = [];
    steps.forEach(function (s) {
      if (s.candidate_tokens !== null)
        sizeCand.push({
          x: s.step,
          y: s.candidate_tokens,
          cls: s.outcome,
          key: s.step,
          title:
            'step ' +
            s.step +
            ' · ' +
            s.action +
            ' · candidate ~' +
            int(s.candidate_tokens) +
            ' tokens (estimate)' +
            (s.mean_tokens !== null
              ? ' · ' + int(Math.round(s.mean_tokens)) + ' tokens per val case, as the replies reported them'
              : ''),
        });
      if (s.skill_tokens !== null)
        sizeCur.push({
          x: s.step,
          y: s.skill_tokens,
          cls: 'skipped',
          title: 'after step ' + s.step + ': current skill ~' + int(s.skill_tokens) + ' tokens (estimate)',
        });
    });
    var sizeMax = Math.max.apply(
      null,
      [1].concat(
        sizeCur.concat(sizeCand).map(function (p) {
          return p.y === null ? 0 : p.y;
        }),
      ),
    );
    var sizeChart = lineChart({
      label: 'skill size per step (estimated tokens)',
      x: [0, T],
      y: [0, Math.ceil(sizeMax * 1.1)],
      xInt: true,
      xLabel: 'step (0 = the initial skill)',
      yLabel: 'tokens (chars / 4)',
      hlines:
        D.skill_size.best !== null
          ? [{ y: D.skill_size.best, cls: 'target', label: 'best skill ~' + int(D.skill_size.best) }]
          : [],
      series: [
        { cls: 's-cur', line: true, step: true, points: sizeCur, dots: false },
        { cls: 's-val', line: false, points: sizeCur.slice(0, 1) },
        { cls: 's-val', line: false, points: sizeCand },
      ],
    });
    var rule = D.best_rule
      ? 'best_skill.md was chosen by <b>' +
        esc(D.best_rule.rule) +
        '</b>' +
        (D.best_rule.rule === 'cheapest_within'
          ? ': the fewest tokens per val case among the candidates within ' +
            esc(D.best_rule.tolerance) +
            ' of the highest val pass rate'
          : ': the highest gate score') +
        '. '
      : '';
    h += section(
      'size',
      'Skill size per step',
      '<div class="panel">' +
        sizeChart +
        legend([
          ['candidate accepted', 'var(--pass)'],
          ['candidate rejected', 'var(--panel)', 'var(--fail)'],
          ['initial skill', 'var(--accent)'],
          ['current skill (line)', 'var(--pass)'],
        ]) +
        '<p class="muted small">' +
        rule +
        'Sizes are estimates (characters / 4); a skill is a prefix of every request, so each token here is paid on every call.</p></div>',
    );

    // schedule
    var planned = D.schedule.planned.map(function (b, i) {
      return { x: i + 1, y: b, title: 'step ' + (i + 1) + ': planned budget ' + b };
    });
    var used = [],
      applied = [];
    steps.forEach(function (s) {
      if (s.selected !== null)
        used.push({
          x: s.step,
          y: s.selected,
          cls: 'used',
          title:
            'step ' +
            s.step +
            ': ' +
            s.selected +
            ' edit(s) selected of ' +
            (s.merged === null ? '—' : s.merged) +
            ' merged (budget ' +
            (s.budget === null ? '—' : s.budget) +
            ')',
        });
      if (s.applied !== null)
        applied.push({
          x: s.step,
          y: s.applied,
          cls: 'applied',
          title: 'step ' + s.step + ': ' + s.applied + ' edit(s) applied',
        });
    });
    var ymax = Math.max.apply(
      null,
      [1].concat(
        D.schedule.planned.filter(function (b) {
          return b < 999;
        }),
        used.map(function (p) {
          return p.y;
        }),
      ),
    );
    var sched = lineChart({
      label: 'edit budget per step',
      x: [1, Math.max(T, 2)],
      y: [0, ymax + 1],
      xInt: true,
      xLabel: 'step',
      yLabel: 'edits',
      series: [
        {
          cls: 's-plan',
          line: true,
          step: true,
          points: planned.filter(function (p) {
            return p.y < 999;
          }),
          dots: false,
        },
        { cls: '', line: false, points: used },
        { cls: '', line: false, points: applied, r: 3 },
      ],
    });
    h += section(
      'schedule',
      'Learning rate (edit budget) schedule',
      '<div class="panel">' +
        sched +
        legend([
          [
            'planned budget (' +
              D.schedule.kind +
              ', ' +
              D.schedule.max +
              (D.schedule.kind !== 'constant' ? ' → ' + D.schedule.min : '') +
              ')',
            'var(--accent)',
          ],
          ['edits selected', 'var(--accent)'],
          ['edits applied', 'var(--pass)'],
        ]) +
        (D.schedule.mode === 'autonomous'
          ? '<p class="muted small">lr_control_mode autonomous: the optimizer chose each step\'s budget.</p>'
          : '') +
        '</div>',
    );

    // costs
    var tokStacks = D.stage_names.map(function (n, k) {
      return {
        name: n,
        values: steps.map(function (s) {
          return s.tokens[k];
        }),
      };
    });
    var costs = barChart({
      label: 'tokens per step by stage',
      categories: steps.map(function (s) {
        return String(s.step);
      }),
      stacks: tokStacks,
      xLabel: 'step',
      yLabel: 'tokens',
    });
    var st =
      '<table><thead><tr><th>stage</th><th class="num">calls</th><th class="num">HTTP attempts</th><th class="num">prompt tokens</th><th class="num">completion tokens</th><th class="num">errors</th></tr></thead><tbody>';
    var tot = [0, 0, 0, 0, 0];
    D.stages.forEach(function (s, k) {
      st +=
        '<tr><td><i style="display:inline-block;width:10px;height:10px;background:' +
        PALETTE[k % PALETTE.length] +
        ';margin-right:6px"></i>' +
        esc(s[0]) +
        '</td><td class="num">' +
        int(s[1]) +
        '</td><td class="num">' +
        int(s[2]) +
        '</td><td class="num">' +
        int(s[3]) +
        '</td><td class="num">' +
        int(s[4]) +
        '</td><td class="num">' +
        int(s[5]) +
        '</td></tr>';
      for (var q = 0; q < 5; q++) tot[q] += s[q + 1];
    });
    st +=
      '<tr><td><b>total</b></td>' +
      tot
        .map(function (x) {
          return '<td class="num"><b>' + int(x) + '</b></td>';
        })
        .join('') +
      '</tr></tbody></table>';
    var stepCost = D.priced
      ? '<div class="panel">' +
        barChart({
          label: 'cost per step',
          categories: steps.map(function (s) {
            return String(s.step);
          }),
          stacks: [
            {
              name: 'cost ' + D.currency,
              values: steps.map(function (s) {
                return s.cost || 0;
              }),
            },
          ],
          xLabel: 'step',
          yLabel: 'cost ' + D.currency,
          fmt: function (v) {
            return money(v);
          },
        }) +
        '<p class="muted small">What each step\'s requests cost (every stage, priced by its role\'s model; replies from the model-call cache cost nothing).</p></div>'
      : '<p class="muted small">No prices are set (<code>model.pricing</code>): cost is unknown, tokens are counted.</p>';
    h += section(
      'costs',
      'Calls, tokens and cost per stage',
      '<div class="grid2"><div class="panel">' +
        costs +
        '</div><div class="panel">' +
        st +
        '<p class="muted small">Totals over the whole run, the final test evaluations included; the chart shows what each step spent.</p></div></div>' +
        stepCost,
    );

    // steps and edits
    var stepRows = steps;
    var stepTable = new Table({
      id: 'steps-table',
      rows: stepRows,
      columns: [
        {
          key: 'step',
          label: 'step',
          get: function (s) {
            return s.step;
          },
          num: true,
        },
        {
          key: 'epoch',
          label: 'epoch',
          get: function (s) {
            return s.epoch;
          },
          num: true,
        },
        {
          key: 'outcome',
          label: 'outcome',
          get: function (s) {
            return s.outcome;
          },
          render: function (s) {
            return (
              '<span class="o-' +
              s.outcome +
              '">' +
              esc(s.outcome) +
              '</span> <span class="muted small">' +
              esc(s.action) +
              '</span>'
            );
          },
        },
        {
          key: 'train',
          label: 'train',
          get: function (s) {
            return s.train;
          },
          num: true,
          render: function (s) {
            return f3(s.train);
          },
          title: 'train batch mean hard score',
        },
        {
          key: 'val',
          label: 'val',
          get: function (s) {
            return s.val;
          },
          num: true,
          render: function (s) {
            return f3(s.val) + (s.val_cached ? '*' : '');
          },
          title: 'candidate validation pass rate (* cached)',
        },
        {
          key: 'mean_tokens',
          label: 'tok/case',
          get: function (s) {
            return s.mean_tokens;
          },
          num: true,
          render: function (s) {
            return s.mean_tokens === null ? '—' : int(Math.round(s.mean_tokens));
          },
          title: "the candidate's mean tokens per val case (prompt + completion, as the replies reported them)",
        },
        {
          key: 'budget',
          label: 'budget',
          get: function (s) {
            return s.budget;
          },
          num: true,
          render: function (s) {
            return s.budget === null ? '—' : s.budget;
          },
        },
        {
          key: 'edits',
          label: 'patches → merged → selected → applied',
          get: function (s) {
            return s.selected;
          },
          render: function (s) {
            return (
              s.patches +
              ' → ' +
              (s.merged === null ? '—' : s.merged) +
              ' → ' +
              (s.selected === null ? '—' : s.selected) +
              ' → ' +
              (s.applied === null ? '—' : s.applied)
            );
          },
        },
        {
          key: 'calls',
          label: 'calls',
          get: function (s) {
            return s.calls.reduce(function (a, b) {
              return a + b;
            }, 0);
          },
          num: true,
          render: function (s) {
            return int(
              s.calls.reduce(function (a, b) {
                return a + b;
              }, 0),
            );
          },
        },
        {
          key: 'tokens',
          label: 'tokens',
          get: function (s) {
            return s.tokens.reduce(function (a, b) {
              return a + b;
            }, 0);
          },
          num: true,
          render: function (s) {
            return kTok(
              s.tokens.reduce(function (a, b) {
                return a + b;
              }, 0),
            );
          },
        },
        {
          key: 'why',
          label: 'why',
          get: function (s) {
            return s.why;
          },
          cls: 'clip',
          render: function (s) {
            return '<span title="' + esc(s.why) + '">' + esc(s.why) + '</span>';
          },
        },
      ],
      search: [
        function (s) {
          return s.action;
        },
        function (s) {
          return s.why;
        },
        function (s) {
          return s.edits
            .map(function (e) {
              return e[2];
            })
            .join(' ');
        },
      ],
      searchLabel: 'filter steps by action, reason or edit text…',
      selects: [
        {
          key: 'outcome',
          label: 'outcome',
          get: function (s) {
            return s.outcome;
          },
          always: true,
        },
        {
          key: 'epoch',
          label: 'epoch',
          get: function (s) {
            return s.epoch;
          },
        },
      ],
      sort: { key: 'step', dir: 1 },
      pageSize: 50,
      note: 'Click a step for its edits: accepted, rejected (with the candidate that the gate discarded), not applied (and why), not selected (beyond the edit budget).',
      detail: stepDetail,
    });
    h += section('steps', 'Steps and their edits', stepTable.html());

    // diff
    var d = D.diff;
    var dh =
      '<p class="muted small">' +
      esc(d.from) +
      ' → ' +
      esc(d.to) +
      (d.clipped ? ' (clipped; the full diff is best_skill.diff)' : '') +
      '. Apply it with <code>git apply ' +
      esc(META.folder) +
      '/best_skill.diff</code>.</p>';
    dh += d.text
      ? '<div class="diff" id="skill-diff">' +
        d.text
          .split('\n')
          .map(function (l) {
            var c =
              l.indexOf('+++') === 0 || l.indexOf('---') === 0
                ? 'file'
                : l[0] === '+'
                  ? 'add'
                  : l[0] === '-'
                    ? 'del'
                    : l.indexOf('@@') === 0
                      ? 'hunk'
                      : '';
            return '<div class="' + c + '">' + (esc(l) || ' ') + '</div>';
          })
          .join('') +
        '</div>'
      : '<p class="muted">The best skill is the initial skill: no diff.</p>';
    if (D.best_skill.text)
      dh +=
        '<details><summary>the best skill in full (' +
        int(D.best_skill.text.length) +
        ' chars)</summary><pre>' +
        esc(D.best_skill.text) +
        '</pre></details>';
    h += section('diff', 'Initial → best skill', dh);

    var evalTable = null;
    if (D.eval) {
      evalTable = new Table(
        caseTableSpec(
          'cases-table',
          D.eval.cases,
          D.eval.baseline ? { baseline: D.eval.baseline, baselineLabel: D.eval.baseline_label } : null,
        ),
      );
      h += section('eval', 'Cases: ' + D.eval.label, evalTable.html());
    }
    h += filesSection();
    app.innerHTML = h;
    stepTable.mount();
    if (evalTable) evalTable.mount();
  }

  /** A run over several models: each model's seed → best on val and test with intervals, the paired verdict, calls and cost. */
  function modelsTable(D) {
    var ci = function (c) {
      return c ? ' <span class="muted small">[' + f3(c[0]) + ', ' + f3(c[1]) + ']</span>' : '';
    };
    var side = function (s) {
      return s ? f3(s[0]) + ci(s[1]) + ' → ' + f3(s[2]) + ci(s[3]) : '—';
    };
    var signed = function (x) {
      return (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(3);
    };
    var paired = function (p) {
      return p && p.delta !== null
        ? '<span title="' +
            esc(p.reason) +
            '">' +
            signed(p.delta) +
            (p.interval
              ? ' <span class="muted small">[' + signed(p.interval[0]) + ', ' + signed(p.interval[1]) + ']</span>'
              : '') +
            ' <b>' +
            esc(p.verdict) +
            '</b></span>'
        : '—';
    };
    var t =
      '<table id="models-table"><thead><tr><th>model</th><th>val: seed → best</th><th>val Δ</th><th>test: seed → best</th><th>test Δ (paired)</th><th class="num">calls (train · val · test)</th><th class="num">cost</th></tr></thead><tbody>';
    D.models.forEach(function (m) {
      t +=
        '<tr><td>' +
        esc(m.name) +
        (m.role === 'transfer' ? ' <span class="muted small">transfer</span>' : '') +
        '</td><td>' +
        side(m.val) +
        '</td><td>' +
        paired(m.val_paired) +
        '</td><td>' +
        side(m.test) +
        '</td><td>' +
        paired(m.test_paired) +
        '</td><td class="num">' +
        int(m.calls.total) +
        ' <span class="muted small">(' +
        int(m.calls.train) +
        ' · ' +
        int(m.calls.val) +
        ' · ' +
        int(m.calls.test) +
        ')</span></td><td class="num">' +
        (m.cost === null ? '—' : money(m.cost)) +
        '</td></tr>';
    });
    return (
      '<div class="panel">' +
      t +
      '</tbody></table><p class="muted small">Optimized for the training models with the <b>' +
      esc(D.objective) +
      '</b> objective (the gate and the best skill: ' +
      (D.objective === 'mean' ? "the mean of the models' val scores" : "the worst model's val score first") +
      '); transfer models were scored once at the end, on test. Δ is the best skill against the seed on the same cases, with its 95% interval and the paired verdict, adjusted over the models; <a href="matrix.html">matrix.html</a> has every case on every model.</p></div>'
    );
  }

  function stepDetail(s) {
    var h = kv(
      [
        ['decision', '<span class="o-' + s.outcome + '">' + esc(s.action) + '</span> — ' + esc(s.why)],
        [
          'scores',
          'train ' +
            f3(s.train) +
            ' · candidate val ' +
            f3(s.val) +
            ' · gate ' +
            f3(s.gate) +
            ' (before ' +
            f3(s.before) +
            ') · current ' +
            f3(s.current) +
            ' · best ' +
            f3(s.best),
        ],
        ['time', s.wall_s === null ? '—' : s.wall_s + ' s'],
      ].concat(
        s.val_models
          ? [
              [
                'val per model',
                s.val_models
                  .map(function (v) {
                    return esc(v[0]) + ' ' + f3(v[1]);
                  })
                  .join(' · '),
              ],
            ]
          : [],
        s.gate_models
          ? [
              [
                'gate per model',
                s.gate_models
                  .map(function (g) {
                    return '<b>' + esc(g[0]) + '</b> ' + esc(g[1]) + ' — ' + esc(g[2]);
                  })
                  .join('<br>'),
              ],
            ]
          : [],
      ),
    );
    if (s.patterns.length)
      h +=
        '<h3>Failure patterns</h3><ul>' +
        s.patterns
          .map(function (p) {
            return '<li>' + esc(p) + '</li>';
          })
          .join('') +
        '</ul>';
    if (s.warnings.length)
      h +=
        '<h3>Warnings</h3><ul class="warn">' +
        s.warnings
          .map(function (p) {
            return '<li>' + esc(p) + '</li>';
          })
          .join('') +
        '</ul>';
    h += '<h3>Edits (' + s.edits.length + ')</h3>';
    if (!s.edits.length) return h + '<p class="muted">none</p>';
    h +=
      '<table class="edits"><thead><tr><th>status</th><th>op</th><th>edit</th><th class="num">support</th><th>why</th></tr></thead><tbody>';
    s.edits.forEach(function (e) {
      var cls = e[0] === 'accepted' ? 'e-accepted' : e[0] === 'rejected' ? 'e-rejected' : 'e-not';
      h +=
        '<tr><td class="' +
        cls +
        '">' +
        esc(e[0]) +
        '</td><td>' +
        esc(e[1]) +
        '</td><td>' +
        (e[3] ? '<div class="muted small">target: ' + esc(e[3]) + '</div>' : '') +
        '<code>' +
        esc(e[2]) +
        '</code></td><td class="num">' +
        e[4] +
        '</td><td class="small">' +
        esc(e[5]) +
        '</td></tr>';
    });
    return h + '</tbody></table>';
  }

  // ── compare ──────────────────────────────────────────────────────────────────────────────────────
  /** compare.json's paired changes of tokens, cost and latency per case, one row each (absent in older files). */
  function usageChangeTable(c) {
    var specs = [
      {
        key: 'token_change',
        label: 'tokens / case',
        unit: function (v) {
          return v.toFixed(1);
        },
      },
      {
        key: 'cost_change',
        label: 'cost / case',
        unit: function (v) {
          return v === 0 ? '0' : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
        },
      },
      {
        key: 'latency_change',
        label: 'latency / case',
        unit: function (v) {
          return Math.round(v) + ' ms';
        },
      },
    ];
    var pc = function (v) {
      return (v >= 0 ? '+' : '−') + (Math.abs(v) * 100).toFixed(1) + '%';
    };
    var rows = specs.filter(function (s) {
      return c[s.key];
    });
    if (!rows.length) return '';
    var t =
      '<table class="usage-change"><thead><tr><th>per case (paired)</th><th class="num">baseline</th><th class="num">candidate</th><th class="num">change</th><th>relative, 95% interval</th><th class="num">p(increase)</th><th>bound</th></tr></thead><tbody>';
    rows.forEach(function (s) {
      var x = c[s.key],
        u = s.unit;
      var change =
        x.mean === null || x.mean === undefined
          ? s.key === 'cost_change'
            ? '— (no prices)'
            : '—'
          : (x.mean >= 0 ? '+' : '−') + u(Math.abs(x.mean));
      var rel =
        x.relative === null || x.relative === undefined
          ? '—'
          : pc(x.relative) +
            (x.relative_interval ? ' [' + pc(x.relative_interval[0]) + ', ' + pc(x.relative_interval[1]) + ']' : '');
      var bound =
        x.bound === null || x.bound === undefined
          ? '<span class="muted">none</span>'
          : (x.exceeded ? '<b class="o-rejected">exceeded</b> ' : '') + '≤ +' + (x.bound * 100).toFixed(1) + '%';
      t +=
        '<tr><td>' +
        esc(s.label) +
        '</td><td class="num">' +
        (x.baseline_mean === null || x.baseline_mean === undefined ? '—' : esc(u(x.baseline_mean))) +
        '</td><td class="num">' +
        (x.candidate_mean === null || x.candidate_mean === undefined ? '—' : esc(u(x.candidate_mean))) +
        '</td><td class="num">' +
        esc(change) +
        '</td><td>' +
        esc(rel) +
        '</td><td class="num">' +
        (x.p === null ? '—' : Number(x.p).toPrecision(3)) +
        '</td><td>' +
        bound +
        '</td></tr>';
    });
    return t + '</tbody></table>';
  }

  function renderCompare(D) {
    var c = D.compare;
    var vcls =
      c.verdict === 'regressed'
        ? 'fail'
        : c.verdict === 'improved'
          ? 'pass'
          : c.verdict === 'inconclusive'
            ? 'inconclusive'
            : '';
    var h = header({ text: String(c.verdict).toUpperCase(), cls: vcls });
    var A = c.attribution || null;
    h += toc(
      [['overview', 'overview']].concat(A ? [['attribution', 'which change did it']] : [], [
        ['changes', 'regressed and fixed'],
        ['all', 'all cases'],
        ['files', 'files'],
      ]),
    );
    var b = c.baseline || {},
      k = c.candidate || {},
      n = c.counts || {};
    var U = c.usage_bounds || null;
    var ucls = U ? (U.exceeded.length ? 'fail' : U.unchecked.length ? 'inconclusive' : 'pass') : '';
    var o =
      '<div class="verdict ' +
      vcls +
      '"><b>' +
      esc(String(c.verdict).toUpperCase()) +
      '</b> — ' +
      esc(c.reason) +
      (c.different_tasks ? '<div class="warn small">' + esc(c.different_tasks) + '</div>' : '') +
      '</div>';
    if (U)
      o +=
        '<div class="verdict ' +
        ucls +
        '"><b>cost bounds ' +
        (U.exceeded.length ? 'EXCEEDED' : U.unchecked.length ? 'UNCHECKED' : 'HELD') +
        '</b> — ' +
        esc(U.reason) +
        '</div>';
    o += cards([
      [
        'baseline',
        f3(b.pass_rate),
        b.interval
          ? '95% CI ' +
            f3(b.interval[0]) +
            '–' +
            f3(b.interval[1]) +
            ' · ' +
            b.scored +
            ' scored, ' +
            b.errored +
            ' errored'
          : '',
      ],
      [
        'candidate',
        f3(k.pass_rate),
        k.interval
          ? '95% CI ' +
            f3(k.interval[0]) +
            '–' +
            f3(k.interval[1]) +
            ' · ' +
            k.scored +
            ' scored, ' +
            k.errored +
            ' errored'
          : '',
      ],
      [
        'change',
        c.delta === null ? '—' : (c.delta >= 0 ? '+' : '−') + Math.abs(c.delta).toFixed(3),
        c.interval
          ? '95% interval ' +
            f3(c.interval[0]) +
            ' … ' +
            f3(c.interval[1]) +
            ' · p(worse) ' +
            (c.p_value === null ? '—' : Number(c.p_value).toPrecision(3))
          : '',
      ],
      [
        'cases',
        int(c.n_paired) + ' paired',
        n.regressed + ' regressed · ' + n.fixed + ' fixed · ' + n.flaky + ' flaky · ' + n.errored + ' errored',
      ],
    ]);
    var rows = [
      {
        label: 'baseline',
        value: b.pass_rate,
        lo: b.interval ? b.interval[0] : null,
        hi: b.interval ? b.interval[1] : null,
        cls: 'rate',
        title: 'baseline ' + f3(b.pass_rate),
      },
      {
        label: 'candidate',
        value: k.pass_rate,
        lo: k.interval ? k.interval[0] : null,
        hi: k.interval ? k.interval[1] : null,
        cls: 'pass',
        ciCls: 'cand',
        title: 'candidate ' + f3(k.pass_rate),
      },
    ];
    var span =
      Math.max(
        0.05,
        Math.abs(c.delta || 0),
        c.interval ? Math.max(Math.abs(c.interval[0]), Math.abs(c.interval[1])) : 0,
        c.max_regression || 0,
      ) * 1.25;
    var deltaPlot = dotPlot(
      [
        {
          label: 'change',
          value: c.delta,
          lo: c.interval ? c.interval[0] : null,
          hi: c.interval ? c.interval[1] : null,
          cls: c.delta < 0 ? 'rejected' : 'pass',
          ciCls: c.delta < 0 ? 'neg' : 'cand',
          title: 'change ' + f3(c.delta),
        },
      ],
      {
        x: [-span, span],
        vlines: [{ x: 0, cls: 'zero' }].concat(c.max_regression ? [{ x: -c.max_regression, cls: 'target' }] : []),
        xLabel: 'candidate − baseline (dashed: −max_regression)',
        width: 560,
        xFmt: function (v) {
          return (v > 0 ? '+' : '') + v;
        },
      },
    );
    o +=
      '<div class="grid2"><div class="panel">' +
      dotPlot(rows, {
        label: 'pass rates',
        xLabel: 'pass rate over the paired cases, 95% Wilson interval',
        width: 560,
      }) +
      '</div><div class="panel">' +
      deltaPlot +
      '</div></div>';
    o += usageChangeTable(c);
    o += '<p class="muted small">' + esc(c.method_detail || '') + '</p>';
    h += section('overview', 'Overview', o);
    // the rows of the regressed and fixed tables are the anchors the attribution links to
    var anchored = {};
    (c.regressed || [])
      .slice(0, 500)
      .concat((c.fixed || []).slice(0, 500))
      .forEach(function (x) {
        anchored[x.suite + '\u0000' + x.id] = true;
      });
    var explainedBy = A ? attributionIndex(A) : null;
    if (A)
      h += section(
        'attribution',
        'Which change did it',
        attributionHtml(A, anchored, { regressed: n.regressed, fixed: n.fixed }),
      );
    var ch = '';
    [
      ['regressed', c.regressed || []],
      ['fixed', c.fixed || []],
    ].forEach(function (pair) {
      var list = pair[1];
      ch +=
        '<h3 class="' +
        (pair[0] === 'regressed' ? 'o-rejected' : 'o-accepted') +
        '">' +
        pair[0] +
        ' (' +
        list.length +
        ')</h3>';
      if (!list.length) {
        ch += '<p class="muted">none</p>';
        return;
      }
      ch +=
        '<table id="' +
        pair[0] +
        '-table"><thead><tr><th>case</th><th>expected</th><th>baseline answer</th><th>candidate answer</th>' +
        (explainedBy ? '<th>which change</th>' : '') +
        '</tr></thead><tbody>';
      list.slice(0, 500).forEach(function (x) {
        var side = function (s) {
          return (s.trials > 1 ? s.passes + '/' + s.scored_trials + ' ' : '') + '<code>' + esc(s.output) + '</code>';
        };
        var by = explainedBy
          ? '<td class="by">' +
            (explainedBy[x.suite + '\u0000' + x.id] || '<span class="muted small">unexplained</span>') +
            '</td>'
          : '';
        ch +=
          '<tr' +
          (explainedBy ? ' id="' + esc(caseAnchor(x)) + '"' : '') +
          '><td class="id">' +
          esc(x.id) +
          '</td><td><code>' +
          esc(typeof x.expected === 'string' ? x.expected : JSON.stringify(x.expected)) +
          '</code></td><td>' +
          statusBadge(x.baseline.pass_fraction >= 0.5 ? 'pass' : 'fail') +
          ' ' +
          side(x.baseline) +
          '</td><td>' +
          statusBadge(x.candidate.pass_fraction >= 0.5 ? 'pass' : 'fail') +
          ' ' +
          side(x.candidate) +
          '</td>' +
          by +
          '</tr>';
        if (x.divergence !== undefined)
          ch +=
            '<tr class="divergence"><td></td><td colspan="' +
            (explainedBy ? 4 : 3) +
            '"><span class="muted small">trajectories part at</span> <code>' +
            esc(divergenceText(x.divergence)) +
            '</code></td></tr>';
      });
      ch +=
        '</tbody></table>' +
        (list.length > 500 ? '<p class="muted small">… ' + (list.length - 500) + ' more in compare.json</p>' : '');
    });
    h += section('changes', 'Regressed and fixed', ch);
    var t = null;
    if (D.cases) {
      var C = {};
      D.cases.columns.forEach(function (x, i) {
        C[x] = i;
      });
      var g = function (key) {
        return function (r) {
          return r[C[key]];
        };
      };
      var order = {
        regressed: 0,
        fixed: 1,
        errored: 2,
        flaky: 3,
        'still failing': 4,
        'only baseline': 5,
        'only candidate': 6,
        'still passing': 7,
      };
      t = new Table({
        id: 'cases-table',
        rows: D.cases.rows,
        columns: [
          { key: 'id', label: 'id', get: g('id'), cls: 'id' },
          {
            key: 'status',
            label: 'change',
            get: g('status'),
            render: function (r) {
              return statusBadge(r[C.status]);
            },
            sortGet: function (r) {
              return order[r[C.status]];
            },
          },
          { key: 'expected', label: 'expected', get: g('expected'), cls: 'clip' },
          {
            key: 'baseline',
            label: 'baseline',
            get: g('baseline'),
            num: true,
            render: function (r) {
              return f3(r[C.baseline]);
            },
          },
          {
            key: 'candidate',
            label: 'candidate',
            get: g('candidate'),
            num: true,
            render: function (r) {
              return f3(r[C.candidate]);
            },
          },
          { key: 'baseline_answer', label: 'baseline answer', get: g('baseline_answer'), cls: 'clip' },
          { key: 'candidate_answer', label: 'candidate answer', get: g('candidate_answer'), cls: 'clip' },
        ],
        search: [g('id'), g('expected'), g('baseline_answer'), g('candidate_answer')],
        selects: [{ key: 'status', label: 'change', get: g('status'), always: true }],
        sort: { key: 'status', dir: 1 },
        pageSize: 100,
        note: esc(D.cases.note) + '. Click a row for both answers and feedback side by side.',
        detail: function (r) {
          return (
            '<div class="side"><div><b>baseline</b> ' +
            f3(r[C.baseline]) +
            '<pre>' +
            esc(r[C.baseline_answer]) +
            '</pre><div class="muted small">' +
            esc(r[C.baseline_feedback]) +
            '</div></div><div><b>candidate</b> ' +
            f3(r[C.candidate]) +
            '<pre>' +
            esc(r[C.candidate_answer]) +
            '</pre><div class="muted small">' +
            esc(r[C.candidate_feedback]) +
            '</div></div></div>'
          );
        },
      });
      h += section('all', 'All cases', t.html());
    } else {
      h += section(
        'all',
        'All cases',
        '<p class="muted">The results files of the two sides were not found next to compare.json; the lists above come from compare.json.</p>',
      );
    }
    h += filesSection();
    app.innerHTML = h;
    if (t) t.mount();
  }

  // ── a matrix of runs (matrix.json, docs/matrix.md) ──────────────────────────────────────────────
  /** Background of a heatmap cell for a pass rate (red → green), null: none. @param {number | null} x @returns {string} */
  function heat(x) {
    return x === null || x === undefined ? '' : 'background:hsla(' + Math.round(120 * x) + ',70%,50%,0.28)';
  }
  function signed3(x) {
    return x === null || x === undefined ? '—' : (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(3);
  }
  function verdictCls(v) {
    return v === 'helps' || v === 'better'
      ? 'b-pass'
      : v === 'hurts' || v === 'worse'
        ? 'b-fail'
        : v === 'inconclusive'
          ? 'b-errored'
          : '';
  }

  function renderMatrix(D) {
    var M = D.matrix;
    var skills = M.skills.map(function (s) {
      return s.label;
    });
    var at = {};
    M.cells.forEach(function (c, i) {
      at[c.model + '\u0000' + c.skill] = i;
    });
    var liftOf = {};
    M.lifts.forEach(function (l) {
      liftOf[l.model + '\u0000' + l.skill] = l;
    });
    var noSkill = {};
    M.skills.forEach(function (s) {
      if (s.kind === 'none') noSkill[s.label] = true;
    });
    var words = function (r) {
      return noSkill[r.skill] ? r.model + ' without a skill' : r.model + ' with ' + r.skill;
    };
    var n = function (v) {
      return M.lifts.filter(function (l) {
        return l.verdict === v;
      }).length;
    };
    var badge = M.lifts.length
      ? { text: n('helps') + ' helps · ' + n('hurts') + ' hurts', cls: n('hurts') ? 'fail' : n('helps') ? 'pass' : '' }
      : null;
    var h = header(badge);
    h += toc([
      ['heatmap', 'pass rate per cell'],
      ['lifts', 'lifts'],
      ['frontier', 'cost and frontier'],
      ['models', 'models compared'],
      ['grid', 'cases (' + int(M.cases.length) + ')'],
      ['files', 'files'],
    ]);
    var metric =
      M.frontier.metric === 'cost_per_pass'
        ? 'cost per passing case' + (M.frontier.currency ? ' (' + M.frontier.currency + ')' : '')
        : 'tokens per passing case';
    var perPass = function (c) {
      var v = M.frontier.metric === 'cost_per_pass' ? c.cost_per_pass : c.tokens_per_pass;
      return v === null ? null : v;
    };
    var perPassText = function (c) {
      var v = perPass(c);
      return v === null ? '—' : M.frontier.metric === 'cost_per_pass' ? money(v) : int(Math.round(v));
    };
    var cc = M.case_counts;
    h += section(
      'overview',
      'Overview',
      cards([
        [
          'cells',
          M.models.length + ' × ' + M.skills.length,
          M.kind + ' runs · split ' + M.split + ' · ' + M.trials + ' trial(s) per case',
        ],
        [
          'lifts over ' + M.baseline_skill,
          String(M.lifts.length),
          n('helps') +
            ' helps · ' +
            n('hurts') +
            ' hurts · ' +
            n('no detectable change') +
            ' no detectable change (adjusted)',
        ],
        ['frontier', String(M.frontier.cells.length) + ' cell(s)', M.frontier.cells.map(words).join(' · ')],
        [
          'cases',
          int(cc.cases),
          cc.fails_everywhere +
            ' fail on every model · ' +
            cc.model_specific +
            ' model-specific · ' +
            cc.helped +
            ' helped · ' +
            cc.hurt +
            ' hurt',
        ],
      ]),
    );

    // the model × skill heatmap with intervals (and each lift under its cell)
    var hm = '<div class="panel"><table id="heatmap" class="heatmap"><thead><tr><th>model</th>';
    skills.forEach(function (s) {
      hm += '<th>' + esc(s) + '</th>';
    });
    hm += '</tr></thead><tbody>';
    M.models.forEach(function (m) {
      hm += '<tr><th>' + esc(m.name) + '</th>';
      skills.forEach(function (s) {
        var i = at[m.name + '\u0000' + s];
        if (i === undefined) {
          hm += '<td></td>';
          return;
        }
        var c = M.cells[i],
          l = liftOf[m.name + '\u0000' + s];
        var inner =
          '<b>' +
          f3(c.pass_rate) +
          '</b> <span class="muted small">' +
          (c.pass_rate_ci ? '[' + f3(c.pass_rate_ci[0]) + ', ' + f3(c.pass_rate_ci[1]) + ']' : '') +
          '</span>';
        if (l)
          inner +=
            '<div class="small"><span class="st ' +
            verdictCls(l.verdict) +
            '">' +
            esc(signed3(l.delta) + ' ' + l.verdict) +
            '</span></div>';
        inner +=
          '<div class="muted small">' +
          esc(perPassText(c)) +
          ' per pass · ' +
          c.n +
          ' scored' +
          (c.errored ? ', ' + c.errored + ' errored' : '') +
          '</div>';
        var link = D.reports[i] ? '<a class="cell-report" href="' + esc(D.reports[i]) + '">report</a>' : '';
        hm += '<td style="' + heat(c.pass_rate) + '" data-cell="' + i + '">' + inner + ' ' + link + '</td>';
      });
      hm += '</tr>';
    });
    hm +=
      '</tbody></table><p class="muted small">Pass rate per cell and its ' +
      Math.round(M.confidence * 100) +
      '% interval; under it the lift over ' +
      esc(M.baseline_skill) +
      ' on the same cases (paired), its verdict adjusted over the ' +
      M.lifts.length +
      ' lifts; then the ' +
      esc(metric) +
      '.</p></div>';
    h += section('heatmap', 'Pass rate per model and skill', hm);

    // the lift per model with intervals
    if (M.lifts.length) {
      var span = 0.05;
      M.lifts.forEach(function (l) {
        span = Math.max(
          span,
          Math.abs(l.delta || 0),
          l.interval ? Math.max(Math.abs(l.interval[0]), Math.abs(l.interval[1])) : 0,
        );
      });
      span = Math.min(1, span * 1.1);
      var rows = M.lifts.map(function (l) {
        return {
          label: l.model + ' · ' + l.skill,
          value: l.delta,
          lo: l.interval ? l.interval[0] : null,
          hi: l.interval ? l.interval[1] : null,
          cls: l.verdict === 'helps' ? 'pass' : l.verdict === 'hurts' ? 'rejected' : 'rate',
          ciCls: l.verdict === 'hurts' ? 'neg' : l.verdict === 'helps' ? 'cand' : '',
          title:
            l.model +
            ' · ' +
            l.skill +
            ': ' +
            signed3(l.delta) +
            ' ' +
            l.verdict +
            ' (adjusted p ' +
            (l.p_adjusted === null ? '—' : Number(l.p_adjusted).toPrecision(3)) +
            ')',
        };
      });
      var lt =
        '<table id="lifts-table"><thead><tr><th>model</th><th>skill</th><th class="num">Δ</th><th>' +
        Math.round(M.confidence * 100) +
        '% interval</th><th class="num">p</th><th class="num">p adjusted</th><th class="num" title="the true drop caught 80% of the time">could miss</th><th>verdict</th></tr></thead><tbody>';
      M.lifts.forEach(function (l) {
        lt +=
          '<tr><td>' +
          esc(l.model) +
          '</td><td>' +
          esc(l.skill) +
          '</td><td class="num">' +
          signed3(l.delta) +
          '</td><td>' +
          (l.interval ? signed3(l.interval[0]) + ' … ' + signed3(l.interval[1]) : '—') +
          '</td><td class="num">' +
          pText(l.p) +
          '</td><td class="num">' +
          pText(l.p_adjusted) +
          '</td><td class="num">' +
          f3(l.mde_80) +
          '</td><td><span class="st ' +
          verdictCls(l.verdict) +
          '">' +
          esc(l.verdict) +
          '</span></td></tr>';
      });
      lt += '</tbody></table>';
      h += section(
        'lifts',
        'Lift over ' + M.baseline_skill + ' per model',
        '<div class="grid2"><div class="panel">' +
          dotPlot(rows, {
            label: 'lift per model with intervals',
            x: [-span, span],
            vlines: [{ x: 0, cls: 'zero' }],
            xLabel: 'lift: skill − ' + M.baseline_skill + ' (dot) and its interval (line)',
            width: 560,
            xFmt: function (v) {
              return (v > 0 ? '+' : '') + v;
            },
          }) +
          '</div><div class="panel">' +
          lt +
          '<p class="muted small">One-sided p in the direction of Δ; adjusted over the lifts with the one multiplicity rule (Benjamini–Hochberg). A verdict needs the adjusted p below ' +
          (1 - M.confidence).toFixed(2) +
          '.</p></div></div>',
      );
    }

    // cost per passing case against pass rate: the frontier and the tie groups
    var group = {};
    M.frontier.tie_groups.forEach(function (g, gi) {
      g.forEach(function (r) {
        group[r.model + '\u0000' + r.skill] = gi;
      });
    });
    var onFrontier = {};
    M.frontier.cells.forEach(function (r) {
      onFrontier[r.model + '\u0000' + r.skill] = true;
    });
    var plotted = M.cells.filter(function (c) {
      return c.pass_rate !== null && perPass(c) !== null && perPass(c) > 0;
    });
    var xs = plotted.map(perPass);
    var lo = Math.min.apply(null, xs.concat([Infinity])),
      hi = Math.max.apply(null, xs.concat([-Infinity]));
    var log = plotted.length > 1 && hi / lo > 20;
    var X = function (v) {
      return log ? Math.log10(v) : v;
    };
    var sc = '';
    if (plotted.length) {
      var x0 = X(lo),
        x1 = X(hi),
        pad = (x1 - x0 || Math.abs(x0) || 1) * 0.08;
      var pts = plotted.map(function (c) {
        var k = c.model + '\u0000' + c.skill;
        return {
          x: X(perPass(c)),
          y: c.pass_rate,
          cls: 'tg' + ((group[k] || 0) % 8) + (onFrontier[k] ? ' front' : ''),
          key: k,
          title:
            words(c) +
            ': pass rate ' +
            f3(c.pass_rate) +
            ' · ' +
            perPassText(c) +
            ' per pass' +
            (onFrontier[k] ? ' · on the frontier' : '') +
            ' · tie group ' +
            ((group[k] || 0) + 1),
        };
      });
      var front = M.frontier.cells
        .map(function (r) {
          return M.cells[at[r.model + '\u0000' + r.skill]];
        })
        .filter(function (c) {
          return perPass(c) !== null && perPass(c) > 0;
        })
        .map(function (c) {
          return { x: X(perPass(c)), y: c.pass_rate };
        })
        .sort(function (a, b) {
          return a.x - b.x;
        });
      sc = lineChart({
        label: 'pass rate against ' + metric,
        x: [x0 - pad, x1 + pad],
        y: [0, 1],
        xLabel: metric + (log ? ' (log scale)' : ''),
        yLabel: 'pass rate',
        xFmt: function (v) {
          var a = log ? 10 ** v : v;
          return M.frontier.metric === 'cost_per_pass'
            ? a >= 1
              ? a.toFixed(2)
              : a.toPrecision(2)
            : String(Math.round(a));
        },
        series: [
          { cls: 's-front', line: true, dots: false, points: front },
          { cls: '', line: false, points: pts, r: 6 },
        ],
      });
    }
    var notPlotted = M.cells.filter(function (c) {
      return plotted.indexOf(c) < 0;
    });
    var fr =
      '<div class="grid2"><div class="panel" id="scatter">' +
      (sc || '<p class="muted">No cell passed a case at a known cost.</p>') +
      legend(
        M.frontier.tie_groups
          .map(function (g, gi) {
            return ['tie group ' + (gi + 1) + ': ' + g.map(words).join(', '), PALETTE[gi % 8]];
          })
          .concat([['frontier (line; ringed dots)', 'var(--fg)']]),
      ) +
      (notPlotted.length
        ? '<p class="muted small">Not plotted (nothing passed, or no cost): ' +
          esc(notPlotted.map(words).join(', ')) +
          '.</p>'
        : '') +
      '</div><div class="panel">';
    fr +=
      '<p><b>Frontier</b> (cheapest first): ' +
      esc(
        M.frontier.cells
          .map(function (r) {
            var c = M.cells[at[r.model + '\u0000' + r.skill]];
            return words(r) + ' (' + f3(c.pass_rate) + ', ' + perPassText(c) + ' per pass)';
          })
          .join(' · ') || 'none',
      ) +
      '</p>';
    if (M.frontier.statements.length)
      fr +=
        '<ul id="frontier-statements">' +
        M.frontier.statements
          .map(function (s) {
            return '<li>' + esc(s) + '</li>';
          })
          .join('') +
        '</ul>';
    if (M.frontier.dominated.length)
      fr +=
        '<details><summary>' +
        M.frontier.dominated.length +
        ' dominated cell(s)</summary><ul>' +
        M.frontier.dominated
          .map(function (d) {
            return '<li>' + esc(words(d)) + ': by ' + esc(d.by.map(words).join(', ')) + '</li>';
          })
          .join('') +
        '</ul></details>';
    fr +=
      '<p class="muted small">A cell is dominated only when another is significantly better on pass rate (paired, adjusted) and no more expensive per passing case. Cells whose pass-rate intervals overlap the best remaining cell\'s form its tie group.</p></div></div>';
    h += section('frontier', 'Cost and the frontier', fr);

    // models compared with the same skill
    var mc =
      '<table id="models-table"><thead><tr><th>skill</th><th>model</th><th>against</th><th class="num">Δ</th><th>interval</th><th class="num">p adjusted</th><th>verdict</th></tr></thead><tbody>';
    M.model_comparisons.forEach(function (c) {
      mc +=
        '<tr><td>' +
        esc(c.skill) +
        '</td><td>' +
        esc(c.model) +
        '</td><td>' +
        esc(c.vs) +
        '</td><td class="num">' +
        signed3(c.delta) +
        '</td><td>' +
        (c.interval ? signed3(c.interval[0]) + ' … ' + signed3(c.interval[1]) : '—') +
        '</td><td class="num">' +
        pText(c.p_adjusted) +
        '</td><td><span class="st ' +
        verdictCls(c.verdict) +
        '">' +
        esc(c.verdict) +
        '</span></td></tr>';
    });
    mc += '</tbody></table>';
    h += section(
      'models',
      'Models compared with the same skill',
      M.model_comparisons.length
        ? '<div class="panel">' +
            mc +
            '<p class="muted small">Each model against each earlier one, on the same cases, paired; adjusted over every pair.</p></div>'
        : '<p class="muted">One model: nothing to compare.</p>',
    );

    // every case in every cell, linked to the cell's report
    var multiSuite = M.cases.some(function (c) {
      return M.cases.length && c.suite !== M.cases[0].suite;
    });
    var cols = [];
    if (multiSuite)
      cols.push({
        key: 'suite',
        label: 'suite',
        get: function (r) {
          return r.suite;
        },
      });
    cols.push({
      key: 'id',
      label: 'id',
      get: function (r) {
        return r.id;
      },
      cls: 'id',
    });
    cols.push({
      key: 'classes',
      label: 'class',
      get: function (r) {
        return r.classes.join(', ');
      },
      render: function (r) {
        return r.classes
          .map(function (k) {
            return (
              '<span class="st ' +
              (k === 'hurt' || k === 'fails_everywhere' ? 'b-fail' : k === 'helped' ? 'b-pass' : 'b-flaky') +
              '">' +
              esc(k.replace('_', ' ')) +
              '</span>'
            );
          })
          .join(' ');
      },
    });
    M.cells.forEach(function (c, i) {
      cols.push({
        key: 'c' + i,
        label: c.model + ' × ' + c.skill,
        num: true,
        sortable: true,
        cls: 'gridcell',
        get: function (r) {
          return r.outcomes[i];
        },
        render: function (r) {
          var f = r.outcomes[i];
          var b =
            '<span class="st ' +
            (f === null ? 'b-errored' : f >= 0.5 ? 'b-pass' : 'b-fail') +
            '">' +
            (f === null ? '—' : M.trials > 1 ? Number(f).toFixed(2) : f >= 0.5 ? 'pass' : 'fail') +
            '</span>';
          return D.reports[i]
            ? '<a class="case-cell" data-cell="' +
                i +
                '" href="' +
                esc(D.reports[i]) +
                '#case=' +
                encodeURIComponent(r.suite + '/' + r.id) +
                '" title="' +
                esc(c.model + ' × ' + c.skill + ': open ' + r.id + " in this cell's report") +
                '">' +
                b +
                '</a>'
            : b;
        },
      });
    });
    var grid = new Table({
      id: 'grid-table',
      rows: M.cases,
      columns: cols,
      search: [
        function (r) {
          return r.id;
        },
        function (r) {
          return r.suite;
        },
      ],
      searchLabel: 'filter by id…',
      selects: [
        {
          key: 'differs',
          label: 'cases',
          get: function (r) {
            return r.differs ? 'different only' : 'the same in every cell';
          },
          always: true,
        },
        {
          key: 'classes',
          label: 'class',
          get: function (r) {
            return r.classes.join(', ') || 'none';
          },
        },
      ],
      sort: { key: 'id', dir: 1 },
      pageSize: 100,
      rowClass: function (r) {
        return r.differs ? 'differs' : '';
      },
      note:
        "Each case's pass " +
        (M.trials > 1 ? 'fraction' : 'outcome') +
        ' in every cell (model × skill); click one to open the case in that cell\'s report. "different only" keeps the cases that pass in some cells and fail in others.',
    });
    h += section('grid', 'Cases in every cell', grid.html());
    h += filesSection();
    app.innerHTML = h;
    grid.mount();
  }

  // ── attribution (compare.json `attribution`, docs/attribution.md) ─────────────────────────────────
  /** The id of a changed case's row in the regressed / fixed table. */
  function caseAnchor(x) {
    return 'case-' + encodeURIComponent(x.suite) + '--' + encodeURIComponent(x.id);
  }

  /** Links to the cases' rows (a case without a row, beyond the table's first 500, stays plain text). */
  function caseLinks(list, anchored) {
    return list
      .map(function (x) {
        return anchored[x.suite + '\u0000' + x.id]
          ? '<a class="case-link" href="#' + esc(caseAnchor(x)) + '">' + esc(x.id) + '</a>'
          : '<span class="id">' + esc(x.id) + '</span>';
      })
      .join(', ');
  }

  function pText(p) {
    return p === null || p === undefined ? '—' : p < 0.001 ? p.toExponential(1) : p.toFixed(3);
  }

  /** Per changed case, the links to what explains it (its unit or its combo), or why nothing does. */
  function attributionIndex(A) {
    var by = {};
    var add = function (list, html) {
      list.forEach(function (x) {
        var k = x.suite + '\u0000' + x.id;
        by[k] = (by[k] ? by[k] + ', ' : '') + html;
      });
    };
    A.units.forEach(function (u) {
      var link = '<a href="#unit-' + esc(u.id) + '">' + esc(u.kind) + ' ' + esc(u.id.slice(1)) + '</a>';
      add(u.breaks, link);
      add(u.fixes, link);
    });
    A.combos.forEach(function (cb, i) {
      var link =
        '<a href="#combo-' +
        i +
        '">' +
        esc(
          cb.units
            .map(function (x) {
              return x.slice(1);
            })
            .join(' + '),
        ) +
        ' together</a>';
      add(cb.breaks, link);
      add(cb.fixes, link);
    });
    add(A.noise, '<span class="muted small">noise: did not reproduce</span>');
    A.unexplained.forEach(function (x) {
      add([x], '<span class="muted small">unexplained: ' + esc(REASONS[x.reason] || x.reason) + '</span>');
    });
    return by;
  }

  var REASONS = {
    budget: 'the budget ran out',
    errored: 'its samples errored',
    outside_units: 'reverting every unit does not restore it',
    no_small_set: 'only a large set of units restores it',
    not_confirmed: "the search's suspect was not confirmed",
  };

  /** The largest adjusted p of a unit's (or combo's) blames, or a dash (a deterministic target gives none). */
  function worstP(list) {
    var ps = list
      .map(function (b) {
        return b.p_adjusted;
      })
      .filter(function (p) {
        return p !== null && p !== undefined;
      });
    return ps.length ? pText(Math.max.apply(null, ps)) : '—';
  }

  /** Links to the blamed cases, each titled with its confirmation's counts and p-values. */
  function blameLinks(list, anchored) {
    return list
      .map(function (b) {
        var title =
          'reverted ' +
          b.reverted.passes +
          '/' +
          b.reverted.scored +
          ' pass, candidate ' +
          b.candidate.passes +
          '/' +
          b.candidate.scored +
          (b.p_adjusted === null ? '' : '; p = ' + pText(b.p) + ', adjusted ' + pText(b.p_adjusted));
        return '<span title="' + esc(title) + '">' + caseLinks([b], anchored) + '</span>';
      })
      .join(', ');
  }

  function attributionHtml(A, anchored, totals) {
    var inCombo = {};
    A.combos.forEach(function (cb) {
      cb.units.forEach(function (x) {
        inCombo[x] = true;
      });
    });
    var shown = A.units.filter(function (u) {
      return u.breaks.length + u.fixes.length > 0 || inCombo[u.id];
    });
    var samples = A.deterministic
      ? 'one sample a question: the target runs at temperature 0, so noise cannot be told from the change'
      : esc(A.samples.join(' / ')) + ' fresh samples an arm';
    var h =
      '<p class="muted small">' +
      esc(A.units.length) +
      ' ' +
      esc(A.granularity) +
      ' unit(s) of the skill change; each flipped case was re-run on fresh samples (' +
      samples +
      '; ' +
      int(A.calls) +
      ' model calls of a budget of ' +
      int(A.budget) +
      '). A unit is blamed for a case when the flip reproduces and reverting the unit gives the case its baseline outcome back, confirmed by an exact test whose p is adjusted over the ' +
      int(A.tested) +
      ' confirmation(s) tested (α = ' +
      esc(A.alpha) +
      ').' +
      (A.skills
        ? ' Baseline skill <code>' +
          esc(A.skills.baseline) +
          '</code>, candidate skill <code>' +
          esc(A.skills.candidate) +
          '</code>.'
        : '') +
      '</p>';
    if (!shown.length) h += '<p class="muted">No unit is confirmed to explain a changed case.</p>';
    if (shown.length) {
      h +=
        '<table id="attribution-table"><thead><tr><th>unit</th><th>lines</th><th>text</th><th>breaks</th><th>fixes</th><th class="num" title="the largest adjusted p of its confirmations">adjusted p</th></tr></thead><tbody>';
      shown.forEach(function (u) {
        var lines = u.lines[0] === u.lines[1] ? String(u.lines[0]) : u.lines[0] + '–' + u.lines[1];
        // its added lines, or (a deletion) its removed lines each prefixed "-": shown as written, uncoloured,
        // since a markdown list item starts with "-" too
        var text = '<pre class="unit-text">' + esc(u.text) + '</pre>';
        h +=
          '<tr id="unit-' +
          esc(u.id) +
          '" class="unit"><td class="id">' +
          esc(u.kind) +
          ' ' +
          esc(u.id.slice(1)) +
          '</td><td class="num">' +
          esc(lines) +
          '</td><td>' +
          text +
          '</td>' +
          '<td class="breaks">' +
          (u.breaks.length
            ? '<span class="o-rejected">' +
              u.breaks.length +
              ' of ' +
              totals.regressed +
              '</span> ' +
              blameLinks(u.breaks, anchored)
            : '') +
          '</td>' +
          '<td class="fixes">' +
          (u.fixes.length
            ? '<span class="o-accepted">' +
              u.fixes.length +
              ' of ' +
              totals.fixed +
              '</span> ' +
              blameLinks(u.fixes, anchored)
            : '') +
          '</td>' +
          '<td class="num">' +
          worstP(u.breaks.concat(u.fixes)) +
          '</td></tr>';
      });
      h += '</tbody></table>';
    }
    if (A.combos.length) {
      h +=
        '<h3>Units that explain a case only together</h3><ul id="attribution-combos">' +
        A.combos
          .map(function (cb, i) {
            return (
              '<li id="combo-' +
              i +
              '">' +
              cb.units
                .map(function (x) {
                  return '<a href="#unit-' + esc(x) + '">' + esc(x.slice(1)) + '</a>';
                })
                .join(' + ') +
              ' together: ' +
              [
                cb.breaks.length ? 'breaks ' + blameLinks(cb.breaks, anchored) : '',
                cb.fixes.length ? 'fixes ' + blameLinks(cb.fixes, anchored) : '',
              ]
                .filter(Boolean)
                .join('; ') +
              ' (adjusted p ' +
              worstP(cb.breaks.concat(cb.fixes)) +
              ')</li>'
            );
          })
          .join('') +
        '</ul>';
    }
    if (A.noise.length)
      h +=
        '<p id="attribution-noise"><b>Noise</b> <span class="muted small">(the flip did not reproduce on fresh samples of both skills; no unit is blamed)</span>: ' +
        caseLinks(A.noise, anchored) +
        '</p>';
    if (A.unexplained.length) {
      h +=
        '<p id="attribution-unexplained"><b>Unexplained</b>: ' +
        Object.keys(REASONS)
          .map(function (r) {
            var of = A.unexplained.filter(function (x) {
              return x.reason === r;
            });
            return of.length
              ? '<span class="muted small">' + esc(REASONS[r]) + ':</span> ' + caseLinks(of, anchored)
              : '';
          })
          .filter(Boolean)
          .join('; ') +
        '</p>';
    }
    return h;
  }

  // ── start ────────────────────────────────────────────────────────────────────────────────────────
  try {
    if (DATA.kind === 'optimize') renderOptimize(DATA);
    else if (DATA.kind === 'compare') renderCompare(DATA);
    else if (DATA.kind === 'matrix') renderMatrix(DATA);
    else renderRun(DATA);
    app.addEventListener('click', function (ev) {
      var btn = /** @type {Element} */ (ev.target).closest('button[data-copy]');
      if (!btn) return;
      var text = document.getElementById(btn.getAttribute('data-copy')).textContent;
      if (navigator.clipboard)
        navigator.clipboard.writeText(text).then(
          function () {
            btn.textContent = 'copied';
          },
          function () {},
        );
    });
    document.body.setAttribute('data-ready', String(Math.round(performance.now())));
    // after the first paint of the drawn page
    requestAnimationFrame(function () {
      setTimeout(function () {
        document.body.setAttribute('data-painted', String(Math.round(performance.now())));
      }, 0);
    });
  } catch (e) {
    app.innerHTML = '<p class="warn">This report could not be drawn: ' + esc(e?.message) + '</p>';
    document.body.setAttribute('data-error', String(e?.message));
    throw e;
  }
})();
