// Every <time datetime> of a log page in the reader's own time zone and language. The pages write times
// in UTC, marked so; without script that text stays. In a table, under a header that names the zone (short
// dates in the rulings table, which is narrow); elsewhere, followed by the zone's short name ("GMT+1"). Every
// [data-tz] label ("(UTC)" in the markup) then names the reader's zone, and the filter form's hidden tz
// field carries it, so the From/To a GM types are read in the zone the table shows. A file of its own: the
// pages' Content-Security-Policy (script-src 'self') refuses inline scripts.
"use strict";
(() => {
  const lang = document.documentElement.lang || undefined;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const zoned = { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit",
    second: "2-digit", timeZoneName: "short" };
  for (const node of document.querySelectorAll("time[datetime]")) {
    const when = new Date(node.dateTime);
    if (isNaN(when)) continue;
    node.textContent = node.closest("table")
      ? when.toLocaleString(lang, { dateStyle: node.closest("#rulings") ? "short" : "medium", timeStyle: "medium" })
      : when.toLocaleString(lang, zoned);
    node.title = node.dateTime;
  }
  for (const label of document.querySelectorAll("[data-tz]")) label.textContent = ` (${zone})`;
  for (const input of document.querySelectorAll("input[name=tz]")) if (!input.value) input.value = zone;
})();
