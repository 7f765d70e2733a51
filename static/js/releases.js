// Releases side by side: one plotly scatter (utility against privacy, one point per release) from the
// server-built figure (json_script). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("releases-data");
  var el = document.getElementById("chart-releases");
  if (!dataEl || !el || typeof window.Plotly === "undefined") return;
  var fig = JSON.parse(dataEl.textContent);
  window.Plotly.react(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
})();
