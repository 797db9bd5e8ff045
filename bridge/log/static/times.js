// Every <time datetime> of a log page in the reader's own time zone and language. The pages write times
// in UTC, marked so; without script that text stays. In the rulings table, short dates (it is narrow);
// elsewhere, medium ones. A file of its own: the pages' Content-Security-Policy (script-src 'self')
// refuses inline scripts.
"use strict";
(() => {
  for (const node of document.querySelectorAll("time[datetime]")) {
    const when = new Date(node.dateTime);
    if (isNaN(when)) continue;
    const dateStyle = node.closest("#rulings") ? "short" : "medium";
    node.textContent = when.toLocaleString(document.documentElement.lang || undefined, { dateStyle, timeStyle: "medium" });
    node.title = node.dateTime;
  }
})();
