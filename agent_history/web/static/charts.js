// Usage charts for `agent-history web`: every element with class "chart" and a data-src
// attribute is drawn with uPlot from that JSON endpoint; data-series names the key of the
// series object to plot, data-unit the y-axis label. Shape of the endpoint (see web/usage.py):
//   {"days": ["2025-11-20", ...], "<key>": {"<series label>": [value | null, ...]}, ...}
// After drawing, the element gets data-points = number of non-null values plotted (the browser
// test reads it). No inline script anywhere: the page's CSP is script-src 'self'.
(function () {
  "use strict";
  var COLOURS = ["#2456b3", "#d9480f", "#2b8a3e", "#862e9c", "#c78a00", "#0b7285", "#5c5f66", "#e64980"];

  function draw(el, payload) {
    var key = el.getAttribute("data-series");
    var series = payload[key] || {};
    var labels = Object.keys(series);
    var xs = payload.days.map(function (d) { return Date.parse(d + "T00:00:00Z") / 1000; });
    var data = [xs];
    var opts = {
      width: Math.max(320, el.clientWidth || 560),
      height: 240,
      series: [{}],
      axes: [{}, { label: el.getAttribute("data-unit") || "", size: 70 }],
      scales: { x: { time: true } },
    };
    var points = 0;
    labels.forEach(function (label, i) {
      var values = series[label];
      values.forEach(function (v) { if (v !== null) { points += 1; } });
      data.push(values);
      opts.series.push({ label: label, stroke: COLOURS[i % COLOURS.length], width: 2, points: { show: true, size: 5 } });
    });
    el.textContent = "";
    if (!xs.length || !labels.length) {
      el.textContent = "no data in this range";
      el.setAttribute("data-points", "0");
      return;
    }
    new uPlot(opts, data, el);
    el.setAttribute("data-points", String(points));
  }

  function load(el) {
    fetch(el.getAttribute("data-src"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.json();
      })
      .then(function (payload) { draw(el, payload); })
      .catch(function (e) { el.textContent = "chart unavailable: " + e.message; el.setAttribute("data-points", "error"); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll(".chart[data-src]"), load);
  });
})();
