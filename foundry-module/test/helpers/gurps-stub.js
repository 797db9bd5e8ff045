/**
 * A stand-in for the GURPS Game Aid's Modifier Bucket with the behaviour of its source
 * (crnormand/gurps, module/modifier-bucket/bucket-app.js): `addModifier(mod, reason)` → 
 * `ModifierStack._add`, which ADDS `mod` onto an entry whose `desc` equals the reason;
 * `modifierStack.removeIndex(i)`; `applyMods()` as `_doRoll` calls it, emptying the bucket into
 * the roll (AUTO_EMPTY). Only the parts the module reaches are modelled.
 */
export function gurpsStub() {
  const calls = [];
  const modifierStack = {
    /** @type {{mod: string, modint: number, desc: string, plus: boolean, tagged: boolean}[]} */
    modifierList: [],
    get currentSum() {
      return this.modifierList.reduce((sum, m) => sum + m.modint, 0);
    },
    add(mod, reason = "") {
      const desc = reason.trim();
      const old = this.modifierList.find((e) => e.desc === desc && !/\* *Cost/i.test(e.desc));
      const n = Number.parseInt(String(mod), 10);
      if (old) {
        old.modint += n;
        old.mod = old.modint >= 0 ? `+${old.modint}` : String(old.modint);
      } else {
        this.modifierList.push({ mod: n >= 0 ? `+${n}` : String(n), modint: n, desc, plus: n >= 0, tagged: false });
      }
    },
    removeIndex(index) {
      calls.push(["removeIndex", index]);
      this.modifierList.splice(index, 1);
    },
    reset() {
      this.modifierList = [];
    },
  };
  const ModifierBucket = {
    modifierStack,
    addModifier(mod, reason) {
      calls.push(["addModifier", mod, reason]);
      modifierStack.add(String(mod), reason);
    },
    refresh() {
      calls.push(["refresh"]);
    },
    /** What `_doRoll` does when the roll starts: the bucket's modifiers go into the roll. */
    applyMods(targetmods = []) {
      const answer = [...targetmods, ...modifierStack.modifierList];
      modifierStack.reset();
      return answer;
    },
  };
  return { GURPS: { ModifierBucket }, calls, list: () => modifierStack.modifierList.map((m) => [m.modint, m.desc]), sum: () => modifierStack.currentSum };
}

/**
 * The content of a Game Aid roll message as `_doRoll` renders die-roll-chat-message.hbs
 * (Handlebars escapes the quotes of the on-the-fly text).
 */
export function gurpsRollContent(chatthing, { origtarget = 12 } = {}) {
  const escaped = chatthing.replace(/"/g, "&quot;");
  return `<div class='roll-message gga-chat-message'>\n  <div class='prefix'>\n    \n    <div class='roll-result'>${escaped}</div> (${origtarget})\n  </div>\n</div>`;
}
