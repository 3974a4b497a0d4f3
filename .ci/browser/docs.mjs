// The reference page of a running service, as a person meets it in a browser: Debian's
// Chromium, headless, driven by playwright-core.
//
//   node docs.mjs BASE_URL TOKEN SCREENSHOT
//
// Every page (`/docs` and each version's) must load without a console error, a page
// error, a refused request or a Content-Security-Policy violation, and list every
// operation of its document. On `/docs`, a person signs in with a bearer token through
// "Authorize" and calls the first list operation from the page: it must answer 200, with
// the token sent. A screenshot of that page is kept at SCREENSHOT.
import { chromium } from "playwright-core";

const [base, token, screenshot] = process.argv.slice(2);
if (!base || !token || !screenshot) {
  console.error("usage: node docs.mjs BASE_URL TOKEN SCREENSHOT");
  process.exit(2);
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// As the machine's notes say: no sandbox as root, and nothing of Chromium's own reaching
// for a network this machine does not have.
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

const failures = [];
let checked = 0;

/** Opens `path`, collecting everything that went wrong while it loaded and ran. */
async function open(path) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`answer ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  const answer = await page.goto(base + path);
  if (!answer || answer.status() !== 200) problems.push(`${path} answered ${answer?.status()}`);
  return { page, problems };
}

/** The operations a document has, as "METHOD path", its webhooks as "METHOD name". */
function operationsOf(document) {
  const ops = [];
  for (const items of [document.paths, document.webhooks]) {
    for (const [path, item] of Object.entries(items || {})) {
      for (const method of METHODS) if (item[method]) ops.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return ops.sort();
}

/** The operations the page lists, once Swagger UI has drawn them. */
async function operationsShown(page) {
  await page.waitForSelector(".opblock", { timeout: 30000 });
  return (
    await page.$$eval(".opblock", (blocks) =>
      blocks.map((b) => {
        const method = b.querySelector(".opblock-summary-method")?.textContent.trim();
        // A deprecated operation's path is drawn struck through, under a class of its own.
        const path = b.querySelector(".opblock-summary [data-path]")?.getAttribute("data-path");
        return `${method} ${path}`;
      }),
    )
  ).sort();
}

function compare(path, expected, shown) {
  const missing = expected.filter((o) => !shown.includes(o));
  const extra = shown.filter((o) => !expected.includes(o));
  if (missing.length) failures.push(`${path}: the page does not list ${missing.join(", ")}`);
  if (extra.length) failures.push(`${path}: the page lists ${extra.join(", ")}, which its document has not`);
}

// Every page the service links from `/docs`, each with its own document.
const { page: first, problems: firstProblems } = await open("/docs");
const pages = ["/docs", ...(await first.$$eval("nav a", (as) => as.map((a) => a.getAttribute("href"))))];
for (const path of pages) {
  const { page, problems } = path === "/docs" ? { page: first, problems: firstProblems } : await open(path);
  const documentPath = await page.getAttribute("#reference", "data-document");
  const document = await (await fetch(base + documentPath)).json();
  const expected = operationsOf(document);
  compare(path, expected, await operationsShown(page));
  checked += expected.length;
  if (path !== "/docs") {
    failures.push(...problems.map((p) => `${path}: ${p}`));
    await page.close();
  }
}

// Signed in through "Authorize" with the bearer token, a list called from the page.
const page = first;
await page.click("button.authorize");
const bearer = page.locator(".auth-container", { hasText: "bearer" });
await bearer.locator("input").fill(token);
await bearer.locator("button.authorize").click();
await page.click("button.btn-done");
const document = await (await fetch(base + "/openapi.json")).json();
const [listPath] = Object.entries(document.paths).find(
  ([path, item]) => item.get && !path.includes("{") && item.get.parameters?.some((p) => p.name === "sort"),
);
const block = page.locator(".opblock-get", { has: page.locator(`[data-path="${listPath}"]`) }).first();
await block.locator(".opblock-summary").first().click();
const sent = page.waitForRequest((r) => r.url().startsWith(base + listPath) && r.method() === "GET");
await block.locator("button.execute").click();
const request = await sent;
if (request.headers()["authorization"] !== `Bearer ${token}`) {
  failures.push(`GET ${listPath} from the page did not carry the token`);
}
const status = (await block.locator(".live-responses-table tr.response .response-col_status").first().textContent()).trim();
if (status !== "200") failures.push(`GET ${listPath} from the page answered ${status}`);
await page.screenshot({ path: screenshot, fullPage: false });
failures.push(...firstProblems.map((p) => `/docs: ${p}`));

await browser.close();
if (failures.length) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log(
  `${pages.length} pages listed all ${checked} operations of their documents; GET ${listPath} from /docs, signed in, answered 200; screenshot: ${screenshot}`,
);
