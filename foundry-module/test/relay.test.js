import { test } from "node:test";
import assert from "node:assert/strict";
import { SocketRelay } from "../scripts/adapters/socket.js";
import { socketBus } from "./helpers/foundry-stubs.js";

function pair({ gmOnline = true } = {}) {
  const bus = socketBus();
  const forwarded = [];
  const gm = new SocketRelay({
    socket: bus.client(), channel: "module.sightline-bridge", userId: "gm1",
    activeGMId: () => "gm1", isHolder: () => true,
    forward: async (m) => {
      forwarded.push(m);
      if (m.actor === "bad") throw Object.assign(new Error("no token bad"), { code: "unknown-token" });
      return { type: "adjudication", allowed: true, modifier: -3 };
    },
  });
  const applied = [];
  const player = new SocketRelay({
    socket: bus.client(), channel: "module.sightline-bridge", userId: "p1",
    activeGMId: () => (gmOnline ? "gm1" : null), isHolder: () => false, forward: async () => assert.fail("players never forward"),
    onApply: (r) => applied.push(r),
  });
  gm.start();
  player.start();
  return { gm, player, forwarded, applied };
}

test("a player's adjudicate goes through the GM's client and the answer comes back", async () => {
  const { player, forwarded } = pair();
  const answer = await player.request({ type: "adjudicate", id: "", scene: "s", actor: "t1", target: "t2", action: "bs-attack", reaction: false, log: false });
  assert.deepEqual(answer, { type: "adjudication", allowed: true, modifier: -3 });
  assert.equal(forwarded.length, 1);
  assert.equal("id" in forwarded[0], false, "the holder assigns its own request id");
});

test("bridge errors reach the player with their code", async () => {
  const { player } = pair();
  await assert.rejects(player.request({ type: "adjudicate", scene: "s", actor: "bad", action: "bs-attack" }), { code: "unknown-token" });
});

test("players cannot relay scene.sync (or anything but adjudicate/ping)", async () => {
  const { player, forwarded } = pair();
  await assert.rejects(player.request({ type: "scene.sync", scene: {} }), { code: "invalid-message" });
  assert.equal(forwarded.length, 0);
});

test("with no GM online the player is told so at once", async () => {
  const { player } = pair({ gmOnline: false });
  await assert.rejects(player.request({ type: "ping" }), { code: "no-gm" });
});

test("a GM's confirmation reaches the roller's client", async () => {
  const { gm, applied } = pair();
  gm.sendApply("p1", { modifier: -6 });
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(applied, [{ modifier: -6 }]);
});
