/**
 * The GM's side of the module as a test drives it over a real WebSocket: the module's `Sightline`
 * service in a one-scene world whose Foundry globals are the stubs (foundry-stubs.js), dialling a bridge
 * with the `ws` client; and the waiting such tests do. Nothing of the module is stood in for.
 */
import WebSocket from "ws";
import { Sightline } from "../../scripts/adapters/sightline.js";
import { gameStub, hooksStub, notificationsStub, socketBus } from "./foundry-stubs.js";
import { startRealBridge } from "./bridge.js";
import * as F from "./fixtures.js";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Wait until `check()` is true (polling), or fail naming what was awaited. */
export async function until(check, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** The scene with each of its tokens, regions, walls and lights knowing it as its parent, as Foundry's do. */
export function parentedScene(scene = F.scene()) {
  for (const coll of [scene.tokens, scene.regions, scene.walls, scene.lights]) for (const d of coll) d.parent = scene;
  return scene;
}

/**
 * A GM client of a one-scene world, dialling `url` with the real `ws` client once told to
 * (`s.refreshHolder()`); its connection is closed by `closers` (run after each test).
 * @param {string} url
 * @param {{closers: (() => Promise<void> | void)[], scene?: any, settings?: Record<string, unknown>, system?: string}} opts
 *   `settings` beside the Bridge URL (the stubs' secret is `s3cret`)
 */
export function gmClient(url, { closers, scene = parentedScene(), settings = {}, system = "dnd5e" }) {
  const gm = { id: "gm1", name: "GM", isGM: true, active: true };
  const { log, notifications } = notificationsStub();
  const game = gameStub({ user: gm, users: [gm], settings: { bridgeUrl: url, ...settings }, scenes: [scene], socket: socketBus().client("gm1"), system });
  const canvas = { scene, tokens: { controlled: [] } };
  const s = new Sightline({ game, Hooks: hooksStub(), ui: { notifications }, getCanvas: () => canvas, WebSocket, batchDelayMs: 20 });
  closers.push(async () => s.connection?.close());
  return { s, game, log, scene, canvas };
}

/**
 * A GM client connected to the real `sightline serve --max-walls 1`, which has refused its scene (two
 * walls) and told the GM so: the bridge and the connection are closed by `closers`.
 * @param {(() => Promise<void> | void)[]} closers
 */
export async function refusedSceneClient(closers) {
  const bridge = await startRealBridge("s3cret", ["--max-walls", "1"]);
  closers.push(() => bridge.close());
  const gm = gmClient(bridge.url, { closers });
  gm.s.refreshHolder();
  await until(() => gm.log.some(([, m]) => /SIGHTLINE\.Error\.sync/.test(m)), "the refusal told");
  await until(() => gm.log.some(([, m]) => /Connected/.test(m)), "connected");
  return gm;
}
