// The GM controls of a session page (bridge/log/controls.py): choosing a row of the rulings table (a click,
// or Enter or Space on the focused row) puts that ruling in the "Override a ruling" form — its id in the
// hidden field, its description above the fields, which it enables. The page carries no list of its rows
// for the form; without script, the form's link reloads the page with one (override=list), whose select
// this script leaves alone but for choosing the clicked row in it.
"use strict";
(() => {
  const form = document.getElementById("override-form");
  const table = document.getElementById("rulings");
  if (!form || !table) return;
  const record = form.elements.namedItem("record");
  const described = document.getElementById("override-ruling");
  const fields = form.querySelector("fieldset");
  // How to choose, said only where it works (with this script); without it the form's link says what to do.
  if (described && !record.value) described.textContent = described.dataset.choose || "";
  const text = (row, name) => (row.querySelector(`td.${name}`)?.textContent || "").trim();
  // "time · actor → target · action · verdict", from the row's own cells (its local time, its words).
  const description = (row) => {
    const target = text(row, "target");
    const who = target ? `${text(row, "actor")} → ${target}` : text(row, "actor");
    const denied = row.querySelector("td.allowed .denied");
    const verdict = denied ? form.dataset.noLof : text(row, "mod") || "0";
    return [text(row, "time"), who, text(row, "action"), verdict].join(" · ");
  };
  const choose = (row) => {
    const id = row?.dataset?.record;
    if (!id || row.classList.contains("override")) return; // overrides are not overridden again
    if (record instanceof HTMLSelectElement) {
      if ([...record.options].some((o) => o.value === id)) record.value = id;
      return;
    }
    record.value = id;
    if (described) described.textContent = description(row);
    if (fields) fields.disabled = false;
  };
  table.addEventListener("click", (event) => choose(event.target.closest("tr.ruling")));
  table.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") choose(event.target.closest("tr.ruling"));
  });
})();
