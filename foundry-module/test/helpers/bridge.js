/**
 * The real bridge for end-to-end tests: `sightline serve --port 0` from SIGHTLINE_BIN (default
 * ../.venv/bin/sightline, the repository's venv), started by the test with a fresh data dir.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const moduleRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SIGHTLINE_BIN = resolve(moduleRoot, process.env.SIGHTLINE_BIN ?? "../.venv/bin/sightline");

/** Why real-bridge tests are skipped, or false when the binary is there. */
export function bridgeSkipReason() {
  return existsSync(SIGHTLINE_BIN) ? false : `bridge binary not found at ${SIGHTLINE_BIN} (set SIGHTLINE_BIN, or install the bridge into ../.venv)`;
}

/** Start `sightline serve --port 0` (with `options` added) and read the URL it prints. */
export async function startRealBridge(secret, options = []) {
  const dataDir = mkdtempSync(join(tmpdir(), "sightline-data-"));
  const args = ["serve", "--host", "127.0.0.1", "--port", "0", `--secret=${secret}`, "--data-dir", dataDir, ...options];
  const child = spawn(SIGHTLINE_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      // Never leave a bridge behind: it would keep the test process alive.
      child.kill("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
      reject(new Error(`no ws:// URL printed within 60 s:\n${output}`));
    }, 60_000);
    const onData = (chunk) => {
      output += chunk;
      const m = output.match(/wss?:\/\/[^\s"'<>]+/);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[0].replace(/[.,;)]+$/, ""));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`sightline serve exited with ${code}:\n${output}`)));
  });
  return {
    url,
    async close() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r() : child.on("exit", r)));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

