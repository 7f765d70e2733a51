// Comparison page: three plotly line charts (NCP, discernibility, time against k) from
// server-built figures (json_script). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("comparison-data");
  if (!dataEl || typeof window.Plotly === "undefined") return;
  var charts = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  ["ncp", "discernibility", "seconds"].forEach(function (key) {
    var el = document.getElementById("chart-" + key);
    var fig = charts[key];
    if (!el || !fig) return;
    // the card's heading names the chart: the figure's own title (kept for the standalone HTML export) would
    // only repeat it where the toolbar shows
    var layout = Object.assign({}, fig.layout, { title: { text: "" } });
    layout.margin = Object.assign({}, layout.margin, { t: 60 });
    window.Plotly.react(el, fig.data, layout, config);
  });
})();
