// The Dashboard's own progressive enhancements (the pages work without them; CSP: script-src 'self').
// 1. Local times: every <time datetime="ISO 8601 UTC"> shows the reader's local time; the ISO text
//    it replaces stays in the title (and is what a page without JavaScript shows).
// 2. Copy buttons: an element with data-copy gets a "Copy <data-copy-label>" button after it; the
//    outcome is announced in a polite live region.
// 3. Focus: on a page with a refused form, the first field with aria-invalid="true" is focused
//    (autofocus does it without JavaScript too; this covers pages restored from the cache).
(function () {
  "use strict";

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      if (el.dataset.local) { return; }
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when.getTime())) { return; }
      el.title = el.getAttribute("datetime");
      el.textContent = when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
      el.dataset.local = "1";
    });
  }

  function announcer() {
    var region = document.getElementById("copy-status");
    if (!region) {
      region = document.createElement("p");
      region.id = "copy-status";
      region.className = "visually-hidden";
      region.setAttribute("aria-live", "polite");
      document.body.appendChild(region);
    }
    return region;
  }

  function copyButtons(root) {
    if (!navigator.clipboard) { return; }
    root.querySelectorAll("[data-copy]").forEach(function (el) {
      if (el.dataset.copyReady) { return; }
      el.dataset.copyReady = "1";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy";
      button.textContent = "Copy " + (el.dataset.copyLabel || "");
      button.addEventListener("click", function () {
        var text = el.dataset.copy || el.textContent.trim();
        navigator.clipboard.writeText(text).then(function () {
          announcer().textContent = "Copied " + (el.dataset.copyLabel || "") + " to the clipboard.";
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy " + (el.dataset.copyLabel || ""); }, 2000);
        }, function () {
          announcer().textContent = "Could not copy; select the text and copy it by hand.";
        });
      });
      el.insertAdjacentElement("afterend", button);
    });
  }

  function focusFirstInvalid() {
    var first = document.querySelector('[aria-invalid="true"]');
    if (first && document.activeElement !== first) { first.focus(); }
  }

  function enhance(root) {
    localTimes(root);
    copyButtons(root);
  }

  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
    focusFirstInvalid();
  });
  // htmx swaps (load more, attempt details) bring new times and ids.
  document.addEventListener("htmx:afterSettle", function (event) { enhance(event.target); });
})();
