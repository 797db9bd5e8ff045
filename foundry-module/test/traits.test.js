/**
 * The token traits editor (scripts/adapters/traits.js): the form's values to a clean trait list,
 * the dialog body per ruleset in English and Spanish, and — in real headless Chromium with
 * Foundry's DialogV2 and token document from the test helpers — the editor saving to the token's
 * flag and the GM's Token HUD button.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { traitsFormHtml, traitsFromForm } from "../scripts/adapters/traits.js";
import { RULESETS } from "../scripts/vocabulary.js";
import { chromiumSkipReason, openModulePage } from "./helpers/browser.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const lang = (code) => JSON.parse(readFileSync(resolve(root, `lang/${code}.json`), "utf8"));
/** Foundry's localize over one of the module's language files: a key it lacks comes back as the key. */
const localizer = (code) => {
  const words = lang(code);
  return (key) => key.split(".").reduce((o, k) => o?.[k], words) ?? key;
};
const boxes = (html) => [...html.matchAll(/<input type="checkbox" name="trait" value="([^"]*)" (checked)?>/g)].map(([, v, c]) => (c ? `${v}*` : v));

describe("traitsFromForm", () => {
  test("a night-vision level outside 1–9, or not a whole number, adds no night-vision trait", () => {
    for (const nightVision of [0, "0", 10, "-1", "2.5", "abc", "", null, undefined]) {
      assert.deepEqual(traitsFromForm({ checked: ["blind"], nightVision }), ["blind"], String(nightVision));
    }
    assert.deepEqual(traitsFromForm({ nightVision: 9 }), ["night-vision-9"]);
    assert.deepEqual(traitsFromForm({ nightVision: "1" }), ["night-vision-1"]);
  });

  test("free text splits on commas and spaces, drops blanks and repeats, and a checked trait typed again counts once", () => {
    assert.deepEqual(traitsFromForm({ checked: ["radar", "", "night-vision-N"], other: " radar,, ladar  custom-x,\ncustom-x ," }), ["radar", "ladar", "custom-x"]);
    assert.deepEqual(traitsFromForm({}), []);
  });
});

describe("traitsFormHtml", () => {
  test("one box per trait of the ruleset, checked for the token's own; the night-vision-N placeholder is a number field, not a box", () => {
    const html = traitsFormHtml("gurps-4e", ["dark-vision", "night-vision-4", "custom-x"], (k) => k);
    assert.deepEqual(boxes(html), ["blind", "accustomed-to-blindness", "invisible", "dark-vision*", "infravision"]);
    assert.match(html, /<input type="number" name="nightVision" min="0" max="9" value="4">/);
    assert.match(html, /<input type="text" name="other" value="custom-x">/, "neither a listed trait nor the night-vision level goes to Other");
    assert.equal(traitsFormHtml("gurps-4e", [], (k) => k).match(/name="nightVision"[^>]*value="(\d)"/)[1], "0");
  });

  test("a ruleset without night vision has no level field; traits of another ruleset stay in Other, so saving keeps them", () => {
    const html = traitsFormHtml("traveller", ["radar", "marksmanship", "dark-vision"], (k) => k);
    assert.deepEqual(boxes(html), RULESETS.traveller.traits.map((t) => (t === "radar" ? "radar*" : t)));
    assert.doesNotMatch(html, /nightVision/);
    assert.match(html, /name="other" value="marksmanship, dark-vision"/);
    assert.deepEqual(boxes(traitsFormHtml("no-such-ruleset", [], (k) => k)), [...RULESETS["infinity-n4"].traits], "an unknown ruleset offers Infinity's");
  });

  test("a night-vision trait under a ruleset without the level field stays in Other, so saving the dialog unchanged keeps it", () => {
    for (const ruleset of ["traveller", "infinity-n4"]) {
      const html = traitsFormHtml(ruleset, ["radar", "night-vision-3"], (k) => k);
      const other = html.match(/name="other" value="([^"]*)"/)[1];
      const saved = traitsFromForm({ checked: boxes(html).filter((b) => b.endsWith("*")).map((b) => b.slice(0, -1)), other });
      assert.deepEqual(saved.sort(), ["night-vision-3", "radar"], ruleset);
    }
  });

  test("free-text traits and labels are escaped into the form, never markup", () => {
    const html = traitsFormHtml("infinity-n4", ['x"><script>alert(1)</script>'], () => "<b>&</b>");
    assert.doesNotMatch(html, /<script>|<b>/);
    assert.match(html, /value="x&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
    assert.match(html, /&lt;b&gt;&amp;&lt;\/b&gt;/);
  });

  for (const [code, other, nv] of [["en", "Other traits (comma separated)", "Night Vision level (0 = none)"], ["es", "Otros rasgos (separados por comas)", "Nivel de Visión Nocturna (0 = ninguno)"]]) {
    test(`${code}: every box, the level and Other read by their ${code} labels, never by a key or an id`, () => {
      const words = lang(code).SIGHTLINE.Trait;
      for (const ruleset of Object.keys(RULESETS)) {
        const html = traitsFormHtml(ruleset, [], localizer(code));
        for (const t of RULESETS[ruleset].traits.filter((x) => !x.endsWith("-N"))) assert.ok(html.includes(`value="${t}" > ${words[t]}</label>`), `${ruleset} ${t}`);
        assert.ok(html.includes(`<label>${other} <input type="text"`), ruleset);
        assert.doesNotMatch(html, /SIGHTLINE\./);
      }
      assert.ok(traitsFormHtml("gurps-4e", [], localizer(code)).includes(`<label>${nv} <input type="number"`));
    });
  }
});

const browserSkip = chromiumSkipReason();

describe("the editor and the HUD button in headless Chromium", { skip: browserSkip, timeout: 60_000 }, () => {
  let opened;
  let page;
  before(async () => {
    opened = await openModulePage(
      root,
      { traits: "/scripts/adapters/traits.js", stubs: "/test/helpers/foundry-stubs.js", F: "/test/helpers/fixtures.js" },
      { es: lang("es") },
    );
    page = opened.page;
  });
  after(async () => {
    await opened?.close();
  });

  test("a GM's edits in the Spanish dialog are saved to the token's traits flag, what they left alone kept", async () => {
    const out = await page.evaluate(async () => {
      const { traits, stubs, F, es } = /** @type {any} */ (window);
      const tokenDoc = stubs.withFlags(F.token({ name: "Ana", flags: { "sightline-bridge": { traits: ["dark-vision", "night-vision-2", "custom-x"] } } }));
      let before = null;
      const { DialogV2, shown } = stubs.dialogV2Stub((form) => {
        before = { checked: [...form.querySelectorAll("input[name=trait]:checked")].map((i) => i.value), nv: form.elements.nightVision.value, other: form.elements.other.value };
        form.querySelector('input[value="dark-vision"]').checked = false;
        form.querySelector('input[value="infravision"]').checked = true;
        form.elements.nightVision.value = "5";
        form.elements.other.value = "custom-x, custom-y";
      });
      const game = stubs.gameStub({ user: { id: "u-gm", isGM: true } });
      game.i18n = { ...game.i18n, lang: "es", localize: (k) => k.split(".").reduce((o, p) => o?.[p], es) ?? k };
      const result = await traits.editTraits({ DialogV2, game, tokenDoc, ruleset: "gurps-4e" });
      const { config } = shown[0];
      return { result, saved: tokenDoc.getFlag("sightline-bridge", "traits"), before, title: config.window.title, ok: config.ok.label, rejectClose: config.rejectClose };
    });
    assert.deepEqual(out.before, { checked: ["dark-vision"], nv: "2", other: "custom-x" });
    assert.deepEqual(out.result, ["infravision", "night-vision-5", "custom-x", "custom-y"]);
    assert.deepEqual(out.saved, out.result);
    assert.equal(out.title, "Rasgos de Sightline: Ana");
    assert.equal(out.ok, "Guardar");
    assert.equal(out.rejectClose, false);
  });

  test("closing the dialog saves nothing and a token without traits opens with none checked; level 0 clears night vision", async () => {
    const out = await page.evaluate(async () => {
      const { traits, stubs, F } = /** @type {any} */ (window);
      const game = stubs.gameStub({ user: { id: "u-gm", isGM: true } });
      const kept = stubs.withFlags(F.token({ flags: { "sightline-bridge": { traits: ["night-vision-3"] } } }));
      const closed = await traits.editTraits({ DialogV2: stubs.dialogV2Stub(() => false).DialogV2, game, tokenDoc: kept, ruleset: "gurps-4e" });
      const afterClose = structuredClone(kept.flags);
      const bare = stubs.withFlags(F.token({ flags: {} }));
      let checked = null;
      const { DialogV2 } = stubs.dialogV2Stub((form) => {
        checked = form.querySelectorAll("input[name=trait]:checked").length;
      });
      const empty = await traits.editTraits({ DialogV2, game, tokenDoc: bare, ruleset: "infinity-n4" });
      const cleared = await traits.editTraits({ DialogV2: stubs.dialogV2Stub((form) => (form.elements.nightVision.value = "0")).DialogV2, game, tokenDoc: kept, ruleset: "gurps-4e" });
      return { closed, afterClose, checked, empty, bare: bare.flags, cleared, after: kept.getFlag("sightline-bridge", "traits") };
    });
    assert.equal(out.closed, null);
    assert.deepEqual(out.afterClose, { "sightline-bridge": { traits: ["night-vision-3"] } });
    assert.equal(out.checked, 0);
    assert.deepEqual(out.empty, []);
    assert.deepEqual(out.bare, { "sightline-bridge": { traits: [] } });
    assert.deepEqual(out.cleared, []);
    assert.deepEqual(out.after, []);
  });

  test("the Token HUD gets one button for a GM (HTMLElement or jQuery-wrapped); clicking it opens the token's document; players get none", async () => {
    const out = await page.evaluate(() => {
      const { traits } = /** @type {any} */ (window);
      const hudHtml = () => {
        const el = document.createElement("form");
        el.id = "token-hud";
        el.innerHTML = '<div class="col left"></div><div class="col middle"></div><div class="col right"><button type="button" class="control-icon" data-action="combat"></button></div>';
        document.body.append(el);
        return el;
      };
      const opened = [];
      const doc = { id: "t-ana" };
      const gm = hudHtml();
      traits.addTraitsHudButton({ object: { document: doc } }, gm, { isGM: true, onClick: (d) => opened.push(d), title: "Rasgos de Sightline" });
      const button = gm.querySelector('.col.right [data-action="sightline-traits"]');
      button.click();
      const wrapped = hudHtml();
      traits.addTraitsHudButton({ document: doc }, [wrapped], { isGM: true, onClick: (d) => opened.push(d), title: "t" });
      wrapped.querySelector('[data-action="sightline-traits"]').click();
      const player = hudHtml();
      traits.addTraitsHudButton({ object: { document: doc } }, player, { isGM: false, onClick: () => opened.push("player"), title: "t" });
      const bare = document.createElement("div");
      traits.addTraitsHudButton({ object: { document: doc } }, bare, { isGM: true, onClick: () => {}, title: "t" });
      return {
        count: gm.querySelectorAll('[data-action="sightline-traits"]').length,
        last: gm.querySelector(".col.right").lastElementChild === button,
        title: button.title, type: button.type, icon: button.innerHTML, cls: button.className,
        opened: opened.map((d) => d === doc),
        wrapped: wrapped.querySelectorAll('[data-action="sightline-traits"]').length,
        player: player.querySelectorAll('[data-action="sightline-traits"]').length,
        bare: bare.innerHTML,
      };
    });
    assert.equal(out.count, 1);
    assert.ok(out.last);
    assert.deepEqual([out.title, out.type, out.cls], ["Rasgos de Sightline", "button", "control-icon"], "a plain button: clicking it does not submit the HUD's form");
    assert.match(out.icon, /fa-eye-low-vision/);
    assert.deepEqual(out.opened, [true, true]);
    assert.equal(out.wrapped, 1);
    assert.equal(out.player, 0);
    assert.equal(out.bare, "");
  });
});
