/**
 * Headless Debian chromium for the end-to-end tests, launched by the test itself with the flags
 * this machine needs (no background networking) and a fresh user-data-dir; plus a static server
 * for the module's files.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, resolve } from "node:path";

export const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";
export const CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export function chromiumSkipReason() {
  return existsSync(CHROMIUM) ? false : `${CHROMIUM} not found (apt-get install -y chromium)`;
}

export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  const userDataDir = mkdtempSync(join(tmpdir(), "sightline-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html", ".json": "application/json", ".css": "text/css" };

/** Serve `routes` (url prefix → directory) on 127.0.0.1 at a free port. */
export async function serveStatic(routes) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    for (const [prefix, dir] of Object.entries(routes)) {
      if (!path.startsWith(prefix)) continue;
      const file = resolve(dir, `.${path.slice(prefix.length - 1)}`);
      if (!file.startsWith(resolve(dir)) || !existsSync(file)) break;
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(readFileSync(file));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * A headless Chromium page on the module's own files (served from `root`, the module's folder): each of
 * `modules` (a window global's name → a path under `root`, e.g. `{ traits: "/scripts/adapters/traits.js" }`)
 * imported as that global, and `values` set on `window`. `close()` ends the browser and the server.
 */
export async function openModulePage(root, modules, values = {}) {
  const server = await serveStatic({ "/": root });
  const browser = await launchBrowser();
  const page = await browser.context.newPage();
  await page.goto(`${server.url}/module.json`);
  await page.evaluate(async ({ modules, values }) => {
    const w = /** @type {any} */ (window);
    for (const [name, path] of Object.entries(modules)) w[name] = await import(path);
    Object.assign(w, values);
  }, { modules, values });
  return {
    page,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
