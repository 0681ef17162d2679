// bulkhead dashboard: live figures. Every page works without this file; with it, elements marked
// data-live="KEY" get the value of KEY from one small JSON request (BASE/live.json) every 5 s
// while the tab is visible, and "select all" boxes toggle a list's checkboxes.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="bulkhead-base"]');
  var base = meta ? meta.getAttribute("content") : "";
  var PERIOD_MS = 5000;

  function refresh() {
    if (document.hidden) return;
    fetch(base + "/live.json", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (figures) {
        if (!figures) return;
        document.querySelectorAll("[data-live]").forEach(function (el) {
          var key = el.getAttribute("data-live");
          if (Object.prototype.hasOwnProperty.call(figures, key)) {
            el.textContent = String(figures[key]);
          }
        });
      })
      .catch(function () {});
  }

  document.querySelectorAll("input[data-select-all]").forEach(function (box) {
    box.addEventListener("change", function () {
      var form = box.closest("form");
      if (!form) return;
      form.querySelectorAll('input[type=checkbox][name="jid"]').forEach(function (c) {
        c.checked = box.checked;
      });
    });
  });

  if (document.querySelector("[data-live]")) setInterval(refresh, PERIOD_MS);
})();
