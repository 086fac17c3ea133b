// The script report.html runs in the browser: reads the embedded chart data, draws one uPlot
// chart per signal and shades the fault windows (and marks the phases) behind every chart as
// DOM elements in uPlot's `under` layer, so they stay aligned when the user zooms. Zoom and
// cursor are synced across charts. Plain ES2017 in a string: it is inlined, never imported,
// and the browser test fails on any error it throws.
//
//   <script id="report-data"> ─▶ JSON ─▶ new uPlot(opts, [x, ...lines], el) ─▶ fault bands

export const reportClientScript = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  var faultHues = {};
  data.faults.forEach(function (f) {
    if (!(f.fault in faultHues)) faultHues[f.fault] = [0, 28, 300, 45, 330, 15][Object.keys(faultHues).length % 6];
  });
  var charts = [];
  var syncing = false;

  function fmtValue(v, unit) {
    if (v == null) return '\u2013';
    var abs = Math.abs(v);
    var s = abs >= 100 ? v.toFixed(0) : abs >= 10 ? v.toFixed(1) : v.toFixed(2);
    return s + ' ' + unit;
  }

  function drawMarks(u) {
    var layer = u.under.querySelector('.marks');
    if (!layer) {
      layer = document.createElement('div');
      layer.className = 'marks';
      u.under.appendChild(layer);
    }
    layer.textContent = '';
    var width = u.under.clientWidth;
    var pos = function (s) { return Math.min(width, Math.max(0, u.valToPos(s, 'x'))); };
    data.faults.forEach(function (f, i) {
      var from = pos(f.fromS);
      var to = pos(f.toS == null ? data.endS : f.toS);
      var band = document.createElement('div');
      band.className = 'fault-band' + (f.toS == null ? ' never-healed' : '');
      band.dataset.fault = f.fault;
      band.dataset.index = String(i);
      band.style.left = from + 'px';
      band.style.width = Math.max(0, to - from) + 'px';
      band.style.background = 'hsla(' + faultHues[f.fault] + ', 85%, 55%, 0.16)';
      band.style.borderLeftColor = 'hsla(' + faultHues[f.fault] + ', 85%, 45%, 0.8)';
      var label = document.createElement('span');
      label.className = 'fault-label';
      label.style.top = (2 + (i % 3) * 13) + 'px';
      label.textContent = f.label;
      band.appendChild(label);
      layer.appendChild(band);
    });
    data.phases.forEach(function (p) {
      var mark = document.createElement('div');
      mark.className = 'phase-mark';
      mark.dataset.phase = p.label;
      mark.style.left = pos(p.atS) + 'px';
      mark.title = p.label + ' at ' + p.atS.toFixed(2) + ' s';
      layer.appendChild(mark);
    });
  }

  function syncX(u, key) {
    if (key !== 'x' || syncing) return;
    syncing = true;
    charts.forEach(function (c) {
      if (c.u !== u) c.u.setScale('x', { min: u.scales.x.min, max: u.scales.x.max });
    });
    syncing = false;
  }

  data.charts.forEach(function (spec) {
    var el = document.getElementById('chart-' + spec.id);
    if (!el) return;
    if (spec.lines.length === 0) {
      el.classList.add('empty');
      el.textContent = 'No samples of ' + spec.source + ' in this run.';
      return;
    }
    var series = [{ label: 'time', value: function (u, v) { return v == null ? '\u2013' : v.toFixed(2) + ' s'; } }];
    spec.lines.forEach(function (line, i) {
      series.push({
        label: line.label,
        stroke: palette[i % palette.length],
        width: 1.5,
        points: { show: false },
        value: function (u, v) { return fmtValue(v, spec.unit); },
      });
    });
    var opts = {
      width: Math.max(320, el.clientWidth),
      height: 220,
      scales: { x: { time: false } },
      series: series,
      axes: [
        { values: function (u, vals) { return vals.map(function (v) { return v + ' s'; }); } },
        { label: spec.unit, size: 56 },
      ],
      cursor: { sync: { key: 'limbo' }, drag: { x: true, y: false } },
      hooks: {
        ready: [drawMarks],
        setSize: [drawMarks],
        setScale: [function (u, key) { drawMarks(u); syncX(u, key); }],
      },
    };
    var u = new uPlot(opts, [spec.x].concat(spec.lines.map(function (l) { return l.values; })), el);
    charts.push({ u: u, el: el });
  });

  var resizeTimer = 0;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      charts.forEach(function (c) { c.u.setSize({ width: Math.max(320, c.el.clientWidth), height: 220 }); });
    }, 100);
  });
  document.body.dataset.chartsReady = String(charts.length);
})();
`;
