// The GM controls of a session page (bridge/log/controls.py): choosing a row of the rulings table (a click,
// or Enter on the focused row) chooses that ruling in the "Override a ruling" form, so the GM need not find
// it again in the list. Nothing else: the form works without this script.
"use strict";
(() => {
  const select = document.querySelector("#override-form select[name=record]");
  const table = document.getElementById("rulings");
  if (!select || !table) return;
  const choose = (row) => {
    const id = row?.dataset?.record;
    if (id && [...select.options].some((o) => o.value === id)) select.value = id;
  };
  table.addEventListener("click", (event) => choose(event.target.closest("tr.ruling")));
  table.addEventListener("keydown", (event) => {
    if (event.key === "Enter") choose(event.target.closest("tr.ruling"));
  });
})();
