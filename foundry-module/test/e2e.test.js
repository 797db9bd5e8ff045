/**
 * End to end: the module's connection.js running in a real headless Chromium, against
 * (1) a scripted bridge in this process — proves the harness and the browser path on any machine —
 * and (2) the real bridge, `sightline serve --port 0`, started by the test from SIGHTLINE_BIN
 * (default ../.venv/bin/sightline), doing hello → scene.sync → adjudicate.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocketServer } from "ws";
import { serializeScene } from "../scripts/serialize.js";
import * as F from "./helpers/fixtures.js";
import { chromiumSkipReason, launchBrowser, serveStatic } from "./helpers/browser.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";
import { SIGHTLINE_BIN, startRealBridge } from "./helpers/bridge.js";

const here = dirname(fileURLToPath(import.meta.url));
const moduleRoot = resolve(here, "..");
const browserSkip = chromiumSkipReason();
const scene = serializeScene(F.scene(), { ruleset: "infinity-n4", edition: "current", locale: "en" });

let browser;
let site;
let page;

/** Start the static site and the browser once, for whichever suite runs first. */
async function openPage() {
  if (page) return;
  site = await serveStatic({ "/scripts/": join(moduleRoot, "scripts"), "/": join(here, "e2e") });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`${site.url}/page.html`);
  await page.waitForFunction(() => typeof window.runSession === "function");
}

async function closePage() {
  await browser?.close();
  await site?.close();
  browser = site = page = undefined;
}

/** A bridge that answers as the contract says, recording what it receives. */
async function scriptedBridge({ secret }) {
  const received = [];
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws" });
  await new Promise((r) => wss.on("listening", r));
  wss.on("connection", (sock) => {
    sock.on("message", (data) => {
      const m = JSON.parse(String(data));
      received.push(m);
      const send = (a) => sock.send(JSON.stringify(a));
      if (m.type === "hello") {
        if (m.secret !== secret) {
          send({ type: "error", code: "unauthorized", message: "wrong secret" });
          sock.close(4401, "unauthorized");
        } else send({ type: "welcome", protocol: 1, bridge: { version: "scripted" }, rulesets: [{ id: "infinity-n4", editions: ["current"] }] });
      } else if (m.type === "scene.sync") send({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: m.scene.regions.length, tokens: m.scene.tokens.length, walls: m.scene.walls.length });
      else if (m.type === "adjudicate") send({ type: "adjudication", id: m.id, scene: m.scene, actor: m.actor, target: m.target, action: m.action, ruleset: "infinity-n4", edition: "current", allowed: false, modifier: null, crossings: [{ region: "r-smoke", zone: "zero", kind: "through" }], modifiers: [], notes: [], citations: [] });
    });
  });
  return { url: `ws://127.0.0.1:${wss.address().port}/ws`, received, close: () => new Promise((r) => wss.close(r)) };
}

describe("browser against a scripted bridge", { skip: browserSkip, timeout: 30_000 }, () => {
  before(openPage, { timeout: 30_000 });
  after(closePage);
  test("hello → welcome → scene.sync → adjudicate from connection.js in Chromium", async () => {
    const bridge = await scriptedBridge({ secret: "pw" });
    try {
      const out = await page.evaluate(([url, s]) => window.runSession(url, "pw", s, "t-fus", "t-tgt", "bs-attack"), [bridge.url, scene]);
      assert.deepEqual(bridge.received.map((m) => m.type), ["hello", "scene.sync", "adjudicate"]);
      assert.equal(out.synced.tokens, 2);
      assert.equal(out.ruling.allowed, false);
      assert.deepEqual(out.statuses.slice(0, 3), ["connecting", "handshaking", "ready"]);
      if (!schemaSkipReason()) bridge.received.forEach(assertConforms);
    } finally {
      await bridge.close();
    }
  });

  test("a wrong secret is classified as unauthorized; a closed port as unreachable", async () => {
    const bridge = await scriptedBridge({ secret: "pw" });
    try {
      const wrong = await page.evaluate((url) => window.tryUrl(url, "nope"), bridge.url);
      assert.equal(wrong.state, "error");
      assert.equal(wrong.error.code, "unauthorized");
    } finally {
      await bridge.close();
    }
    const dead = await page.evaluate(() => window.tryUrl("ws://127.0.0.1:9/ws", "x"));
    assert.equal(dead.state, "reconnecting");
    assert.equal(dead.error.code, "unreachable");
  });
});

const realSkip = browserSkip || (!existsSync(SIGHTLINE_BIN) && `bridge binary not found at ${SIGHTLINE_BIN} (set SIGHTLINE_BIN, or merge main and install the bridge into ../.venv)`);

describe("browser against the real bridge", { skip: realSkip, timeout: 60_000 }, () => {
  before(openPage, { timeout: 30_000 });
  after(closePage);
  test("hello → scene.sync → adjudicate against sightline serve", async () => {
    const bridge = await startRealBridge("e2e-secret");
    try {
      const out = await page.evaluate(([url, s]) => window.runSession(url, "e2e-secret", s, "t-fus", "t-tgt", "bs-attack"), [bridge.url, scene]);
      assert.equal(out.welcome.type, "welcome");
      assert.equal(out.welcome.protocol, 1);
      assert.equal(out.synced.type, "scene.synced");
      assert.equal(out.synced.scene, "s-docks");
      assert.equal(out.ruling.type, "adjudication");
      assert.equal(typeof out.ruling.allowed, "boolean");
      if (!schemaSkipReason()) [out.welcome, out.synced, out.ruling].forEach(assertConforms);
      const wrong = await page.evaluate((url) => window.tryUrl(url, "wrong"), bridge.url);
      assert.equal(wrong.error.code, "unauthorized");
    } finally {
      await bridge.close();
    }
  });
});
