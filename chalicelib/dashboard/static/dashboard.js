// The Dashboard's own progressive enhancements (the pages work without them; CSP: script-src 'self').
// 1. Local times: every <time datetime="ISO 8601 UTC"> shows the reader's local time; the ISO text
//    it replaces stays in the title (and is what a page without JavaScript shows).
// 2. Copy buttons: an element with data-copy gets a "Copy <data-copy-label>" button after it; the
//    outcome is announced in a polite live region.
// 3. Focus: on a page with a refused form, the first field with aria-invalid="true" is focused
//    (autofocus does it without JavaScript too; this covers pages restored from the cache).
// 4. Rich text: a <textarea data-rich> (a rich-text field, HTML) becomes a small editor: a toolbar
//    (Bold, Italic, Bulleted list, Numbered list, Link) over a contenteditable box whose HTML, cut
//    down to the tags below (all kept by the server's sanitiser, nh3), is copied into the textarea
//    the form posts. Without JavaScript the textarea is the editor.
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

  // Tags the editor keeps (a subset of what nh3 keeps on write); anything else is unwrapped to its text.
  var RICH_TAGS = { P: "p", BR: "br", STRONG: "strong", B: "strong", EM: "em", I: "em", UL: "ul", OL: "ol", LI: "li", A: "a", DIV: "p" };
  // Blocks of pasted documents (Word, Google Docs, web pages) become paragraphs, so their words stay
  // apart; a table's row is a paragraph and its cells are separated by a space.
  var BLOCKS = /^(H[1-6]|BLOCKQUOTE|PRE|TR|SECTION|ARTICLE|HEADER|FOOTER|ASIDE|FIGCAPTION|ADDRESS|DT|DD)$/;
  var CELLS = /^(TD|TH)$/;

  // The kept tags of an element, outermost first. Pasted HTML says bold and italic with styles as
  // often as with tags: Google Docs wraps a whole paste in <b style="font-weight:normal"> and marks
  // real bold as <span style="font-weight:700">.
  // A declaration of an element's style attribute, read from its text: an inert document (DOMParser)
  // under the page's CSP parses no inline style into node.style.
  function declared(node, property) {
    var found = new RegExp("(?:^|;)\\s*" + property + "\\s*:\\s*([^;!]+)", "i").exec(node.getAttribute("style") || "");
    return found ? found[1].trim().toLowerCase() : "";
  }

  function richTags(node) {
    var name = node.tagName, weight = declared(node, "font-weight"), slant = declared(node, "font-style");
    var bold = /^(bold|bolder|[6-9]00)$/.test(weight), plain = /^(normal|lighter|[1-5]00)$/.test(weight);
    if (name === "B" || name === "STRONG") { bold = !plain; }
    var italic = slant === "italic" || slant === "oblique" || ((name === "I" || name === "EM") && slant !== "normal");
    var kept = BLOCKS.test(name) ? "p" : RICH_TAGS[name];
    var outer = kept && kept !== "strong" && kept !== "em" ? [kept] : [];
    if (/^(ul|ol|br)$/.test(outer[0])) { return outer; }  // marks go on the items and text inside, not on a list
    return outer.concat(bold ? ["strong"] : [], italic ? ["em"] : []);
  }

  function cleaned(source) {
    var out = document.createDocumentFragment();
    source.childNodes.forEach(function (node) {
      // contenteditable writes a no-break space where a typed space would collapse; stored HTML keeps a plain one
      if (node.nodeType === Node.TEXT_NODE) { out.appendChild(document.createTextNode(node.textContent.replace(/\u00a0/g, " "))); return; }
      if (node.nodeType !== Node.ELEMENT_NODE) { return; }
      var tags = richTags(node);
      if (tags[0] === "a" && !/^(https?:|mailto:)/i.test(node.getAttribute("href") || "")) { tags = []; }
      if (!tags.length) {
        out.appendChild(cleaned(node));
        if (CELLS.test(node.tagName) && node.nextElementSibling) { out.appendChild(document.createTextNode(" ")); }
        return;
      }
      var outer = document.createElement(tags[0]), inner = outer;
      if (tags[0] === "a") { outer.setAttribute("href", node.getAttribute("href")); }
      tags.slice(1).forEach(function (tag) { inner = inner.appendChild(document.createElement(tag)); });
      inner.appendChild(cleaned(node));
      // A paragraph with nothing in it (pasted documents leave them between blocks) adds nothing.
      if (tags[0] === "p" && !outer.textContent.trim() && !outer.querySelector("br")) { return; }
      out.appendChild(outer);
    });
    return out;
  }

  function htmlOf(fragment) {
    var box = document.createElement("div");
    box.appendChild(fragment);
    return box.innerHTML;
  }

  var RICH_BUTTONS = [["Bold", "bold"], ["Italic", "italic"], ["Bulleted list", "insertUnorderedList"],
                      ["Numbered list", "insertOrderedList"], ["Link", "createLink"]];

  function richEditors(root) {
    root.querySelectorAll("textarea[data-rich]").forEach(function (area) {
      if (area.dataset.richReady) { return; }
      area.dataset.richReady = "1";
      var label = document.querySelector('label[for="' + area.id + '"]');
      var editor = document.createElement("div");
      editor.id = area.id + "-editor";
      editor.className = "rich-editor";
      editor.contentEditable = "true";
      editor.setAttribute("role", "textbox");
      editor.setAttribute("aria-multiline", "true");
      if (label) {
        label.id = label.id || area.id + "-label";
        editor.setAttribute("aria-labelledby", label.id);
      }
      ["aria-describedby", "aria-invalid"].forEach(function (name) {
        if (area.hasAttribute(name)) { editor.setAttribute(name, area.getAttribute(name)); }
      });
      if (area.required) { editor.setAttribute("aria-required", "true"); area.required = false; }
      // The stored value was sanitised on write; parsing it inertly and keeping the allowed tags is for
      // a refused form, whose textarea holds what was typed.
      editor.appendChild(cleaned(new DOMParser().parseFromString(area.value, "text/html").body));
      var toolbar = document.createElement("div");
      toolbar.className = "rich-toolbar";
      toolbar.setAttribute("role", "toolbar");
      toolbar.setAttribute("aria-label", "Formatting" + (label ? " of " + label.textContent.replace(/\s*\(required\)\s*$/, "").trim() : ""));
      toolbar.setAttribute("aria-controls", editor.id);
      RICH_BUTTONS.forEach(function (spec) {
        var button = document.createElement("button");
        button.type = "button";
        button.textContent = spec[0];
        button.addEventListener("click", function () {
          editor.focus();
          if (spec[1] === "createLink") {
            var url = window.prompt("Link address (https://…)");
            if (!url || !/^(https?:|mailto:)/i.test(url)) { return; }
            document.execCommand("createLink", false, url);
          } else {
            document.execCommand(spec[1], false);
          }
          sync();
        });
        toolbar.appendChild(button);
      });
      function sync() { area.value = htmlOf(cleaned(editor)); }
      editor.addEventListener("input", sync);
      // A pasted document is cleaned from the clipboard's HTML, where its styles still say what is
      // bold: the browser's own paste drops style attributes the page's CSP does not allow, and a
      // Google Docs paste (wrapped in <b style="font-weight:normal">) then read as bold throughout.
      editor.addEventListener("paste", function (event) {
        var pasted = event.clipboardData ? event.clipboardData.getData("text/html") : "";
        if (!pasted) { return; }  // plain text: the browser inserts it as text
        event.preventDefault();
        var body = new DOMParser().parseFromString(pasted, "text/html").body;
        document.execCommand("insertHTML", false, htmlOf(cleaned(body)));
        sync();
      });
      if (area.form) { area.form.addEventListener("submit", sync); }
      area.hidden = true;
      area.parentNode.insertBefore(toolbar, area);
      area.parentNode.insertBefore(editor, area);
    });
  }

  function focusFirstInvalid() {
    var first = document.querySelector('[aria-invalid="true"]');
    if (first && document.activeElement !== first) { first.focus(); }
  }

  function enhance(root) {
    localTimes(root);
    copyButtons(root);
    richEditors(root);
  }

  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
    focusFirstInvalid();
  });
  // htmx swaps (load more, attempt details) bring new times and ids.
  document.addEventListener("htmx:afterSettle", function (event) { enhance(event.target); });
})();
