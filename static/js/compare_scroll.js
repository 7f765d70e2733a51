// Result page: the original and the anonymized tables scroll sideways together (by the same share of
// their widths, as their columns differ), so a row's cells stay side by side.
(function () {
  "use strict";
  var box = document.getElementById("compare-tables");
  if (!box) return;
  var wraps = box.querySelectorAll(".table-wrap");
  if (wraps.length !== 2) return;
  var syncing = null;
  function follow(from, to) {
    from.addEventListener("scroll", function () {
      if (syncing === to) { syncing = null; return; }  // the scroll this handler caused on the other side
      var range = from.scrollWidth - from.clientWidth;
      var share = range > 0 ? from.scrollLeft / range : 0;
      syncing = from;
      to.scrollLeft = share * (to.scrollWidth - to.clientWidth);
    }, {passive: true});
  }
  follow(wraps[0], wraps[1]);
  follow(wraps[1], wraps[0]);
})();
