// Drives Debian's chromium or Firefox ESR (headless, through playwright-core: CDP for
// chromium, WebDriver BiDi for Firefox) against a running `ferry inspect --no-browser`, the
// way a person would use the page, and prints one JSON line on stdout:
// {"verdicts": [{name, ok, detail}], "metrics": {...}, "wireExport": PATH,
// "wireExportReconnected": PATH (stdio only)}.
//
// Usage: node driver.mjs URL MODE ARTIFACTS_DIR [BROWSER]
//   MODE: `reference` (the in-process reference server: every check, the performance
//         measurements, the conformance report) or `stdio` (a `ferry serve` child: the
//         same exchanges, and a second server connected from the page, confirmed first).
//   BROWSER: `chromium` (default; $FERRY_CHROMIUM or /usr/bin/chromium) or `firefox`
//         ($FERRY_FIREFOX or /usr/lib/firefox-esr/firefox-esr).
// The wire panel's export is saved as ARTIFACTS_DIR/[BROWSER-]MODE-wire.jsonl (and, in the
// stdio mode, after a reconnection and a second server, as ...-wire-reconnected.jsonl).

import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, firefox } from 'playwright-core';

const [url, mode, artifacts, browserName = 'chromium'] = process.argv.slice(2);
// Files of this run: chromium's keep the names they always had.
const tag = browserName === 'chromium' ? mode : `${browserName}-${mode}`;
let wireExport = null;
let wireExportReconnected = null;
const origin = new URL(url).origin;
const port = Number(new URL(url).port);
// The session's cookie, once the launch URL has been opened (it works once).
let session = null;
const auth = (more = {}) => ({ cookie: `ferry-inspect=${session}`, ...more });
// What `ferry inspect` wrote on stderr, where it shows the codes that allow a connection.
const inspectLog = process.env.FERRY_INSPECT_LOG;
const verdicts = [];
const metrics = {};
const TIMEOUT = 20_000;

await mkdir(artifacts, { recursive: true });
// This run's screenshots replace the last run's (a failure's shot included).
for (const name of await readdir(artifacts)) {
  if (name.startsWith(`${tag}-`) && name.endsWith('.png')) await rm(path.join(artifacts, name));
}

/** Run one check; a thrown error is its failure. */
async function check(name, body) {
  try {
    const detail = await body();
    verdicts.push({ name, ok: true, detail: String(detail ?? '').replace(/\s+/g, ' ') });
  } catch (error) {
    verdicts.push({ name, ok: false, detail: String(error?.stack || error) });
    await shot(`failed-${name.replace(/\W+/g, '-')}`).catch(() => {});
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

let page;
async function shot(name) {
  await page.screenshot({ path: path.join(artifacts, `${tag}-${name}.png`), fullPage: false });
}

/** A raw HTTP request to the inspector (Node sets whatever Host and Origin we say). */
function raw(method, pathname, headers, body) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path: pathname, headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => { text += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, text }));
    });
    request.on('error', reject);
    if (body) request.write(body);
    request.end();
  });
}

/** The last code `ferry inspect` showed in its terminal to allow a connection. */
async function terminalCode() {
  assert(inspectLog, 'FERRY_INSPECT_LOG names the file of ferry inspect\'s stderr');
  for (let waited = 0; waited < TIMEOUT; waited += 100) {
    const text = await readFile(inspectLog, 'utf8').catch(() => '');
    const codes = [...text.matchAll(/type this code in the page: (\d{6})/g)];
    if (codes.length > seenCodes) {
      seenCodes = codes.length;
      return codes[codes.length - 1][1];
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('ferry inspect showed no code');
}
let seenCodes = 0;

async function view(name) {
  await page.click(`#views button[data-view=${name}]`);
  await page.waitForSelector(`#view-${name}:not([hidden])`);
}

async function chooseTool(name) {
  await view('tools');
  await page.click(`#tool-list button[data-name="${name}"]`);
  await page.waitForSelector('#call-button');
}

/** Fill the generated form's fields ({path: value}) and call; the result's text. */
async function call(name, fields, { wait = true } = {}) {
  await chooseTool(name);
  for (const [field, value] of Object.entries(fields)) {
    await page.fill(`#tool-detail [data-path="${field}"]`, String(value));
  }
  await page.click('#call-button');
  if (!wait) return '';
  await page.waitForSelector('#call-result .result, #call-result .card', { timeout: TIMEOUT });
  return page.innerText('#call-result');
}

async function readInfo() {
  await view('resources');
  await page.click('#resource-list button[data-name="info"]');
  await page.waitForFunction(() => /countdowns_cancelled/.test(document.querySelector('#read-result')?.textContent || ''), null, { timeout: TIMEOUT });
  const text = await page.textContent('#read-result');
  return Number(/countdowns_cancelled: (\d+)/.exec(text)[1]);
}

/**
 * Click what downloads a file, and read the file. Firefox ESR's WebDriver BiDi announces a
 * download without the id playwright-core's `download` event needs (`navigation: null`),
 * so with Firefox the file is looked for where the browser was told to save downloads.
 */
async function downloaded(click) {
  if (!downloads) {
    const [download] = await Promise.all([page.waitForEvent('download'), click()]);
    return readFile(await download.path(), 'utf8');
  }
  const before = new Set(await readdir(downloads));
  await click();
  for (let i = 0; i < 200; i += 1) {
    // Firefox writes NAME.part and renames it to NAME when the download is complete.
    const added = (await readdir(downloads)).filter((n) => !before.has(n) && !n.endsWith('.part'));
    if (added.length) return readFile(path.join(downloads, added[0]), 'utf8');
    await new Promise((resolve) => { setTimeout(resolve, 100); });
  }
  throw new Error(`nothing was downloaded to ${downloads}`);
}

// The style element playwright-core's screenshots add for a moment (`body {}`, to let
// animations settle): Firefox reports the page's CSP refusing it as a page error, naming
// its hash. That refusal is the CSP working, and the element is the harness's, not the page's.
const harnessStyle = `sha256-${createHash('sha256').update('body {}').digest('base64')}`;

let downloads = null;
let browser;
if (browserName === 'firefox') {
  downloads = await mkdtemp(path.join(os.tmpdir(), 'ferry-inspect-downloads-'));
  browser = await firefox.launch({
    // A `moz-` channel is what makes playwright-core speak WebDriver BiDi to a stock Firefox.
    channel: 'moz-firefox-esr',
    executablePath: process.env.FERRY_FIREFOX || '/usr/lib/firefox-esr/firefox-esr',
    downloadsPath: downloads,
    // Firefox opens its downloads panel when a download starts, which takes the focus from
    // the page: keys pressed after the wire's export would then not activate its buttons.
    firefoxUserPrefs: { 'browser.download.alwaysOpenPanel': false },
  });
} else {
  browser = await chromium.launch({ executablePath: process.env.FERRY_CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
}
metrics.browser = `${browserName} ${browser.version()}`;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  page = await context.newPage();
  const errors = [];
  page.on('pageerror', (error) => {
    if (!error.message.includes(harnessStyle)) errors.push(error.message);
  });

  await check('page loads and is interactive', async () => {
    await page.goto(url);
    await page.waitForFunction(() => window.ferryInspector?.ready, null, { timeout: TIMEOUT });
    session = (await context.cookies()).find((c) => c.name === 'ferry-inspect')?.value;
    assert(session && session.length >= 32, 'the page got its session cookie');
    assert(!page.url().includes('launch='), `the page's own URL holds no code: ${page.url()}`);
    // The first load starts the browser's caches; the measure is the reload's.
    await page.reload();
    await page.waitForFunction(() => window.ferryInspector?.ready, null, { timeout: TIMEOUT });
    metrics.timeToInteractiveMs = await page.evaluate(() => window.ferryInspector.ready);
    const revision = await page.textContent('#protocol-version');
    assert(/^\d{4}-\d{2}-\d{2}$/.test(revision), `revision shown: ${revision}`);
    const era = await page.textContent('#era');
    // The reference run negotiates (the newest, stateless era); the stdio run is pinned to
    // 2025-11-25 (`--protocol-version`), so both eras go through the page.
    const expected = mode === 'reference' ? /^2026-07-28$/ : /^2025-11-25$/;
    assert(expected.test(revision), `revision shown: ${revision}`);
    assert((mode === 'reference' ? /stateless/ : /session/).test(era), `era shown: ${era}`);
    assert(/ferry/.test(await page.textContent('#server-info')), 'server info shown');
    assert((await page.textContent('#instructions')).length > 0, 'instructions shown');
    await shot('server');
    return `${revision}, ${era}`;
  });

  await check('tools are listed', async () => {
    await view('tools');
    await page.waitForSelector('#tool-list button[data-name="calculate"]');
    const names = await page.$$eval('#tool-list button[data-name]', (b) => b.map((x) => x.dataset.name));
    for (const name of ['calculate', 'countdown', 'image', 'elicit', 'sample', 'echo']) assert(names.includes(name), `${name} missing from ${names}`);
    return `${names.length} tools`;
  });

  await check('tools are searched; what hosts handle badly in a schema is pointed out', async () => {
    await view('tools');
    await page.fill('#tool-search', 'count DOWN');
    const found = await page.$$eval('#tool-list button[data-name]', (b) => b.map((x) => x.dataset.name));
    assert(found.length === 1 && found[0] === 'countdown', `found ${found}`);
    await page.fill('#tool-search', 'no-such-tool-anywhere');
    await page.waitForSelector('#tool-list li.muted:has-text("no match")');
    await page.fill('#tool-search', '');
    const all = await page.$$eval('#tool-list button[data-name]', (b) => b.length);
    assert(all > 10, `${all} tools after clearing the search`);
    // The reference server's tools are all clean; a bad one is told apart.
    assert(await page.$$eval('#tool-list .badge.warn', (b) => b.filter((x) => /schema/.test(x.textContent)).length) === 0, 'no warning on a clean tool');
    const warned = await page.evaluate(() => window.ferryInspector.schemaWarnings({ name: 'bad name!', inputSchema: { anyOf: [{ type: 'object' }], $defs: { a: {} }, properties: { x: { $ref: '#/$defs/a' } } } }));
    assert(warned.length === 4, warned.join(' | '));
    return `${all} tools; ${warned.length} warnings for a bad one`;
  });

  await check('calculate: the form is filled and the answer shown', async () => {
    const text = await call('calculate', { expression: '2 + 3 * 4' });
    assert(/\b14\b/.test(text), `result: ${text}`);
    const json = await page.inputValue('#tool-detail textarea.mono');
    assert(JSON.parse(json).expression === '2 + 3 * 4', `the JSON editor follows the form: ${json}`);
    await shot('tools-calculate');
    return text.trim().slice(0, 80);
  });

  await check('a required field left empty is refused by the form', async () => {
    await chooseTool('calculate');
    await page.click('#call-button');
    await page.waitForSelector('#tool-detail .error-text li');
    const text = await page.textContent('#tool-detail .error-text li');
    assert(/expression is required/.test(text), text);
  });

  await check('the raw JSON editor drives the call', async () => {
    await chooseTool('echo');
    await page.fill('#tool-detail textarea.mono', '{"text": "from the JSON editor"}');
    assert(await page.inputValue('#tool-detail [data-path="text"]') === 'from the JSON editor', 'the form follows the JSON');
    await page.click('#call-button');
    await page.waitForSelector('#call-result .result');
    const text = await page.textContent('#call-result');
    assert(/from the JSON editor/.test(text), text);
  });

  await check('countdown: progress shown, Cancel stops it, the server counts it', async () => {
    const before = await readInfo();
    await call('countdown', { steps: 100, interval_ms: 100 }, { wait: false });
    await page.waitForFunction(() => {
      const bar = document.querySelector('#call-progress');
      return bar && !bar.hidden && bar.value >= 3 && /step \d+ of 100/.test(document.querySelector('#call-progress-text').textContent);
    }, null, { timeout: TIMEOUT });
    const shown = await page.textContent('#call-progress-text');
    await shot('tools-countdown-progress');
    await page.click('#cancel-button');
    await page.waitForSelector('#call-result [data-kind="cancelled"]', { timeout: TIMEOUT });
    let after = before;
    for (let i = 0; i < 20 && after <= before; i += 1) {
      await page.waitForTimeout(100);
      after = await readInfo();
    }
    assert(after === before + 1, `countdowns_cancelled went from ${before} to ${after}`);
    return `${shown}; cancelled countdowns ${before} -> ${after}`;
  });

  if (mode === 'stdio') {
    await check('countdown as a task: its state and result shown; Cancel cancels the task', async () => {
      // Pinned to 2025-11-25, where tasks are: the form offers to run as one.
      await chooseTool('countdown');
      await page.fill('#tool-detail [data-path="steps"]', '3');
      await page.fill('#tool-detail [data-path="interval_ms"]', '50');
      await page.check('#task-toggle');
      await page.click('#call-button');
      await page.waitForSelector('#call-result .result', { timeout: TIMEOUT });
      const done = await page.textContent('#call-task');
      assert(/^Task [0-9a-f]+: completed/.test(done), `task line: ${done}`);
      assert(/counted 3 steps/.test(await page.innerText('#call-result')), 'the task\'s result shown');
      await page.fill('#tool-detail [data-path="steps"]', '100');
      await page.fill('#tool-detail [data-path="interval_ms"]', '100');
      await page.click('#call-button');
      await page.waitForFunction(() => /: working/.test(document.querySelector('#call-task')?.textContent || ''), null, { timeout: TIMEOUT });
      await shot('tools-countdown-task');
      await page.click('#cancel-button');
      await page.waitForSelector('#call-result [data-kind="cancelled"]', { timeout: TIMEOUT });
      const cancelled = await page.textContent('#call-result');
      assert(/tasks\/cancel/.test(cancelled), cancelled);
      return done;
    });

    await check('the tasks panel lists the tasks, shows a result and cancels a running one', async () => {
      await chooseTool('countdown');
      await page.fill('#tool-detail [data-path="steps"]', '100');
      await page.fill('#tool-detail [data-path="interval_ms"]', '100');
      await page.check('#task-toggle');
      await page.click('#call-button');
      await page.waitForFunction(() => /: working/.test(document.querySelector('#call-task')?.textContent || ''), null, { timeout: TIMEOUT });
      await view('tasks');
      await page.waitForSelector('#view-tasks tr[data-status="working"]', { timeout: TIMEOUT });
      const statuses = await page.$$eval('#view-tasks tr[data-task]', (rows) => rows.map((r) => r.dataset.status));
      assert(statuses.includes('completed') && statuses.includes('cancelled'), `statuses: ${statuses}`);
      await page.click('#view-tasks tr[data-status="completed"] button.task-result');
      await page.waitForSelector('#task-result .result', { timeout: TIMEOUT });
      assert(/counted 3 steps/.test(await page.innerText('#task-result')), 'the completed task\'s result');
      await shot('tasks-panel');
      const running = await page.getAttribute('#view-tasks tr[data-status="working"]', 'data-task');
      await page.click('#view-tasks tr[data-status="working"] button.task-cancel');
      await page.waitForSelector(`#view-tasks tr[data-task="${running}"][data-status="cancelled"]`, { timeout: TIMEOUT });
      await view('tools');
      await page.waitForSelector('#call-result .result, #call-result .card', { timeout: TIMEOUT });
      return `${statuses.length} tasks listed; ${running} cancelled from the panel`;
    });
  }

  await check('image: the result renders', async () => {
    await call('image', {});
    const width = await page.$eval('#call-result img', (img) => img.complete && img.naturalWidth);
    const box = await page.$eval('#call-result img', (img) => img.getBoundingClientRect().width);
    assert(width > 0 && box > 0, `naturalWidth ${width}, width ${box}`);
    await shot('tools-image');
    return `naturalWidth ${width}, shown ${box}px wide`;
  });

  await check('audio, embedded resources and resource links render', async () => {
    await call('audio', {});
    assert(await page.$eval('#call-result audio', (a) => a.src.startsWith('data:audio/wav;base64,')), 'an audio player');
    const embedded = await call('embedded_resource', {});
    assert(/ferry:\/\/readme/.test(embedded) && await page.$('#call-result .markdown h3'), 'the embedded readme, as Markdown');
    await call('resource_link', {});
    await page.click('#call-result button:has-text("Open readme")');
    await page.waitForSelector('#view-resources:not([hidden]) #read-result .markdown h3', { timeout: TIMEOUT });
    const heading = await page.textContent('#read-result .markdown h3');
    assert(/Ferry reference server/.test(heading), heading);
  });

  await check('structured content is a tree checked against the outputSchema', async () => {
    const text = await call('weather', { city: 'Lisbon' });
    assert(/matches outputSchema/.test(text), text);
  });

  await check('elicitation: the form is answered and the result echoes it', async () => {
    await call('elicit', { message: 'Who are you?' }, { wait: false });
    const card = '#inbox [data-method="elicitation/create"]';
    await page.waitForSelector(`${card} [data-path="name"]`, { timeout: TIMEOUT });
    assert(/Who are you\?/.test(await page.textContent(card)), 'the message is shown');
    await page.fill(`${card} [data-path="name"]`, 'Ada');
    await page.fill(`${card} [data-path="colour"]`, 'green');
    await shot('elicitation');
    await page.click(`${card} button[type=submit]`);
    await page.waitForSelector('#call-result .result', { timeout: TIMEOUT });
    const text = await page.innerText('#call-result');
    assert(/accepted: name=Ada, colour=green/.test(text), text);
    assert(await page.$(card) === null, 'the request left the inbox');
    return text.trim();
  });

  await check('elicitation: answered as JSON', async () => {
    await call('elicit', { message: 'And now?' }, { wait: false });
    const card = '#inbox [data-method="elicitation/create"]';
    await page.waitForSelector(`${card} [data-path="name"]`, { timeout: TIMEOUT });
    await page.click(`${card} .elicitation-raw summary`);
    await page.fill(`${card} textarea.elicitation-json`, '{"name": "Grace"');
    await page.click(`${card} button.json-accept`);
    await page.waitForSelector(`${card} .error-text:has-text("Not JSON")`, { timeout: TIMEOUT });
    await page.fill(`${card} textarea.elicitation-json`, '{"name": "Grace", "colour": "blue"}');
    await page.click(`${card} button.json-accept`);
    await page.waitForSelector('#call-result .result', { timeout: TIMEOUT });
    const text = await page.innerText('#call-result');
    assert(/accepted: name=Grace, colour=blue/.test(text), text);
    return text.trim();
  });

  await check('elicitation: a request the server gives up leaves the inbox, and the page says so', async () => {
    await call('elicit', { message: 'Still there?' }, { wait: false });
    const card = '#inbox [data-method="elicitation/create"]';
    await page.waitForSelector(`${card} [data-path="name"]`, { timeout: TIMEOUT });
    // Cancelling the call makes the server give its question up.
    await page.click('#cancel-button');
    await page.waitForSelector(card, { state: 'detached', timeout: TIMEOUT });
    await page.waitForFunction(() => /withdrew its request \(elicitation\/create\)/.test(document.querySelector('#status').textContent), null, { timeout: TIMEOUT });
    assert(await page.isHidden('#inbox'), 'the inbox is empty and hidden');
    return page.textContent('#status');
  });

  await check('sampling: the person writes the reply', async () => {
    await call('sample', { prompt: 'What is 2 + 2?' }, { wait: false });
    const card = '#inbox [data-method="sampling/createMessage"]';
    await page.waitForSelector(`${card} textarea.sampling-reply`, { timeout: TIMEOUT });
    assert(/What is 2 \+ 2\?/.test(await page.textContent(card)), 'the question is shown');
    await page.fill(`${card} textarea.sampling-reply`, 'Four.');
    await page.selectOption(`${card} select.sampling-stop`, 'maxTokens');
    await shot('sampling');
    await page.click(`${card} button.primary`);
    await page.waitForSelector('#call-result .result', { timeout: TIMEOUT });
    const text = await page.innerText('#call-result');
    assert(/ferry-inspector says: Four\./.test(text), text);
    // The stop reason chosen is the one the server got.
    await view('wire');
    await page.fill('#wire-text', '"stopReason":"maxTokens"');
    await page.waitForSelector('#wire-list .row', { timeout: TIMEOUT });
    await page.fill('#wire-text', '');
    await view('tools');
    return text.trim();
  });

  await check('roots: the edited list is what the server gets', async () => {
    await view('roots');
    await page.click('#view-roots button:has-text("Add root")');
    await page.fill('#view-roots .root-row:last-child .root-uri', 'file:///tmp/ferry-project');
    await page.fill('#view-roots .root-row:last-child .root-name', 'project');
    await page.click('#view-roots button.primary');
    await page.waitForSelector('#view-roots [role=status]');
    const text = await call('roots', {});
    assert(/project: file:\/\/\/tmp\/ferry-project/.test(text), text);
  });

  await check('resource template: completed and read', async () => {
    await view('resources');
    await page.click('#template-list button[data-name="note"]');
    await page.fill('#resource-detail input[data-arg="id"]', '1');
    await page.waitForFunction(() => {
      const offered = [...document.querySelectorAll('.suggestions[data-arg="id"] button')].map((b) => b.textContent);
      return offered.includes('10') && !offered.includes('2');
    }, null, { timeout: TIMEOUT });
    const offered = await page.$$eval('.suggestions[data-arg="id"] button', (b) => b.map((x) => x.textContent));
    assert(offered.includes('1') && offered.includes('10') && !offered.includes('2'), `suggestions: ${offered}`);
    await page.click('.suggestions[data-arg="id"] button:has-text("10")');
    assert(await page.textContent('#template-uri') === 'ferry://notes/10', 'the URI is expanded');
    await page.click('#template-read');
    await page.waitForSelector('#read-result .result', { timeout: TIMEOUT });
    const text = await page.textContent('#read-result');
    assert(/Ferry the goat across first\./.test(text), text);
    await shot('resources-template');
    return `suggested ${offered.join(', ')}`;
  });

  await check('a resource is subscribed to', async () => {
    await view('resources');
    await page.click('#resource-list button[data-name="readme"]');
    await page.waitForSelector('#read-result .result', { timeout: TIMEOUT });
    assert(/Ferry reference server/.test(await page.textContent('#read-result')), 'the readme is read');
    // The template chosen before is no longer marked: one item chosen in the view.
    const marked = await page.$$eval('#view-resources [aria-current]', (b) => b.map((x) => x.dataset.name));
    assert(marked.length === 1 && marked[0] === 'readme', `marked: ${marked}`);
    // Rendered as Markdown: the underscores inside tool names are letters, not italics.
    const rendered = await page.$eval('#read-result', (box) => ({
      text: box.textContent,
      em: [...box.querySelectorAll('em')].map((e) => e.textContent),
    }));
    assert(/get_timestamp/.test(rendered.text) && /elicit_url/.test(rendered.text), `tool names shown: ${rendered.text.slice(0, 200)}`);
    assert(!rendered.em.some((e) => /timestamp|elicit/.test(e)), `italics: ${rendered.em}`);
    await page.click('#resource-detail button:has-text("Subscribe")');
    await page.waitForSelector('#resource-detail button:has-text("Unsubscribe")', { timeout: TIMEOUT });
    await view('wire');
    await page.fill('#wire-text', mode === 'reference' ? 'subscriptions/listen' : 'resources/subscribe');
    await page.waitForSelector('#wire-list .row', { timeout: TIMEOUT });
    await page.fill('#wire-text', '');
  });

  await check('prompt: arguments completed, messages rendered', async () => {
    await view('prompts');
    await page.click('#prompt-list button[data-name="code_review"]');
    await page.fill('#prompt-detail input[data-arg="code"]', 'fn main() {}');
    await page.fill('#prompt-detail input[data-arg="language"]', 'ru');
    await page.waitForSelector('.suggestions[data-arg="language"] button:has-text("rust")', { timeout: TIMEOUT });
    await page.click('.suggestions[data-arg="language"] button:has-text("rust")');
    await page.click('#prompt-get');
    await page.waitForSelector('#prompt-result .result', { timeout: TIMEOUT });
    const text = await page.textContent('#prompt-result');
    assert(/Please review this rust/.test(text) && /user/.test(text), text);
  });

  await check('logging: level set, messages shown, filtered by level', async () => {
    await view('log');
    // The stateless era (the reference run) logs only for requests naming a level: the page says so.
    const stateless = mode === 'reference';
    assert(await page.isVisible('#log-hint') === stateless, `the stateless hint is shown: ${!stateless}`);
    await page.selectOption('#log-level', 'debug');
    await page.waitForFunction(() => /debug/.test(document.querySelector('#status').textContent));
    assert(await page.isHidden('#log-hint'), 'the hint goes once a level is set');
    await call('log', { message: 'hello-log' });
    await view('log');
    await page.fill('#log-text', 'hello-log');
    await page.selectOption('#log-min', String(4));
    await page.waitForFunction(() => /^4 of/.test(document.querySelector('#log-shown').textContent), null, { timeout: TIMEOUT });
    await page.selectOption('#log-min', String(0));
    const all = await page.textContent('#log-shown');
    await shot('log');
    return all;
  });

  await check('the status corner goes back to the stream state after a message', async () => {
    // "Log level set to debug", shown by the logging check, is news for a few seconds only.
    await page.waitForFunction(() => document.querySelector('#status').textContent === 'Live', null, { timeout: 15000 });
  });

  await check('the wire shows the exchange and exports it', async () => {
    await view('wire');
    await page.fill('#wire-text', 'tools/call');
    await page.waitForSelector('#wire-list .row');
    const rows = await page.$$eval('#wire-list .row', (r) => r.map((x) => x.textContent));
    assert(rows.some((r) => /→ tools\/call/.test(r)), `rows: ${rows.slice(0, 3)}`);
    await page.click('#wire-list .row');
    const detail = await page.textContent('#wire-item');
    assert(/"jsonrpc": "2.0"/.test(detail), detail.slice(0, 200));
    await page.fill('#wire-text', '');
    const sent = await page.$$eval('#wire-list .row', (r) => r.some((x) => /←.*(result|error) #/.test(x.textContent) && /ms$/.test(x.textContent.trim())));
    assert(sent, 'answers carry their latency');
    await shot('wire');
    const text = await downloaded(() => page.click('#wire-export'));
    const [header, ...lines] = text.trim().split('\n').map((l) => JSON.parse(l));
    assert(header.format === 'ferry-wire' && header.version === 1, `the header line: ${JSON.stringify(header)}`);
    const messages = lines.filter((l) => l.direction);
    const connections = lines.filter((l) => l.connection);
    assert(messages.some((l) => l.direction === 'sent' && l.message.method === 'tools/call'), 'the export holds the calls');
    assert(messages.every((l) => l.time && l.conn && l.message), 'every message has time, connection, message');
    assert(messages.length + connections.length === lines.length, 'every line is a message or a connection');
    const era = mode === 'reference' ? 'stateless' : 'session';
    assert(connections[0]?.connection.era === era && lines.indexOf(connections[0]) === 0, `the connection first: ${JSON.stringify(connections[0])}`);
    // Kept for the test, which replays it with `ferry replay`.
    wireExport = path.join(artifacts, `${tag}-wire.jsonl`);
    await writeFile(wireExport, text);
    return `${messages.length} messages exported`;
  });

  await check('a request from the history is edited and sent again', async () => {
    await view('wire');
    await page.selectOption('#wire-dir', 'sent');
    await page.fill('#wire-text', '"calculate"');
    await page.waitForSelector('#wire-list .row', { timeout: TIMEOUT });
    await page.click('#wire-list .row >> nth=0');
    await page.waitForSelector('#wire-resend textarea', { timeout: TIMEOUT });
    await page.fill('#wire-resend textarea', '{"name": "calculate", "arguments": {"expression": "6 * 7"}}');
    await page.click('#resend-button');
    await page.waitForSelector('#resend-answer .card', { timeout: TIMEOUT });
    const text = await page.innerText('#resend-answer');
    assert(/42/.test(text) && /A result in/.test(text), text);
    await page.selectOption('#wire-dir', '');
    await page.fill('#wire-text', '');
    return text.split('\n')[0];
  });

  await check('keyboard: the view tabs and the lists are buttons', async () => {
    await page.focus('#views button[data-view="server"]');
    await page.click('#views button[data-view="server"]');
    await page.keyboard.press('ArrowRight');
    await page.waitForSelector('#view-tools:not([hidden])');
    await page.focus('#tool-list button[data-name="echo"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /echo/.test(document.querySelector('#tool-detail h2').textContent));
  });

  await check('an API call without the session cookie gets 403', async () => {
    const bare = await raw('GET', '/api/state', {});
    assert(bare.status === 403, `status ${bare.status}`);
    assert(JSON.parse(bare.text).error.message, 'a JSON error');
    const wrong = await raw('POST', '/api/list', { cookie: `ferry-inspect=${'f'.repeat(32)}`, 'content-type': 'application/json' }, '{"conn":1,"kind":"tools"}');
    assert(wrong.status === 403, `wrong cookie: ${wrong.status}`);
    const events = await raw('GET', '/api/events', {});
    assert(events.status === 403, `event stream: ${events.status}`);
    const pageItself = await raw('GET', '/', {});
    assert(pageItself.status === 403, `page: ${pageItself.status}`);
    const good = await raw('GET', '/api/state', auth());
    assert(good.status === 200, `with the cookie: ${good.status}`);
    assert(!('access-control-allow-origin' in good.headers), 'no CORS header');
  });

  await check('the launch URL works once', async () => {
    const launch = new URL(url);
    const again = await raw('GET', `${launch.pathname}${launch.search}`, {});
    assert(again.status === 403, `a used launch URL: ${again.status}`);
    assert(/used already/.test(JSON.parse(again.text).error.message), again.text);
    assert(!('set-cookie' in again.headers), 'no cookie for it');
  });

  await check('a foreign Origin or Host gets 403', async () => {
    const foreign = await raw('POST', '/api/list', auth({ origin: 'http://evil.example', 'content-type': 'application/json' }), '{"conn":1,"kind":"tools"}');
    assert(foreign.status === 403, `foreign origin: ${foreign.status}`);
    const rebound = await raw('GET', '/api/state', auth({ host: `evil.example:${port}` }));
    assert(rebound.status === 403, `foreign host: ${rebound.status}`);
    const own = await raw('POST', '/api/list', auth({ origin, 'content-type': 'application/json' }), '{"conn":1,"kind":"tools"}');
    assert(own.status === 200, `own origin: ${own.status}`);
    // In the browser: a page of another origin cannot use the API (the cookie is
    // SameSite=Strict, and no CORS header lets it read an answer).
    const other = await context.newPage();
    await other.goto(`http://localhost:${port}/assets/style.css`);
    const outcome = await other.evaluate(async (target) => {
      try {
        const response = await fetch(target, { method: 'POST', body: '{"conn":1,"kind":"tools"}' });
        return `read ${response.status}`;
      } catch (error) {
        return `refused: ${error.message}`;
      }
    }, `${origin}/api/list`);
    await other.close();
    assert(outcome.startsWith('refused'), outcome);
  });

  await check('bad input from the page is a JSON error, not a crash', async () => {
    const cases = [
      ['/api/list', '{"conn":1,"kind":"nothing"}', 400],
      ['/api/list', 'not json', 400],
      ['/api/call', '{"conn":99,"callId":"x","name":"echo"}', 404],
      ['/api/call', '{"conn":1,"callId":"x","name":"echo","arguments":[1]}', 400],
      ['/api/answer', '{"id":12345,"result":{}}', 404],
      ['/api/nothing', '{}', 404],
    ];
    for (const [where, body, status] of cases) {
      const answer = await raw('POST', where, auth({ 'content-type': 'application/json' }), body);
      assert(answer.status === status, `${where} ${body}: ${answer.status} ${answer.text}`);
      assert(typeof JSON.parse(answer.text).error.message === 'string', `${where}: a message`);
    }
    const unknownTool = await raw('POST', '/api/call', auth(), '{"conn":1,"callId":"y","name":"no_such_tool"}');
    assert(unknownTool.status === 502 && JSON.parse(unknownTool.text).error.message, `unknown tool: ${unknownTool.status}`);
  });

  if (mode === 'reference') {
    await check('connecting from the page is refused without --allow-spawn', async () => {
      const answer = await raw('POST', '/api/connect', auth(), '{"command":["true"]}');
      assert(answer.status === 403, `status ${answer.status}`);
    });

    await check('ferry check, rendered by section', async () => {
      await view('check');
      await page.click('#check-run');
      await page.waitForSelector('#check-summary', { timeout: 120_000 });
      const summary = await page.textContent('#check-summary');
      const sections = await page.$$eval('.check-section summary strong', (s) => s.map((x) => x.textContent));
      assert(sections.includes('lifecycle') && sections.length >= 5, `sections: ${sections}`);
      // "1 requirement", "2 requirements": the count and the noun agree (ping has one).
      const counts = await page.$$eval('.check-section > summary', (s) => s.map((x) => x.textContent));
      for (const line of counts) {
        const [, n, noun] = /(\d+) (requirements?)/.exec(line) || [];
        assert(noun === (n === '1' ? 'requirement' : 'requirements'), `a section says ${line}`);
      }
      assert(counts.some((line) => / 1 requirement(?!s)/.test(line)), `a section of one: ${counts}`);
      assert(/0 failed/.test(summary), summary);
      await shot('check');
      return `${sections.length} sections; ${summary.trim().slice(0, 120)}`;
    });

    await check('10,000 log messages: filtering and scrolling stay fast', async () => {
      const before = await page.evaluate(() => window.ferryInspector.logCount());
      // 1,250 calls of `log` (8 messages each, and its debug trace): over 10,000 entries,
      // through the real path (server, wire, event stream, page).
      const sentMs = await page.evaluate(async () => {
        const started = performance.now();
        let next = 0;
        const worker = async () => {
          while (next < 1250) {
            next += 1;
            const n = next;
            await fetch('/api/call', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ conn: 1, callId: `perf-${n}`, name: 'log', arguments: { message: `perf ${n}` } }),
            });
          }
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        return performance.now() - started;
      });
      await page.waitForFunction((n) => window.ferryInspector.logCount() >= n + 10_000, before, { timeout: 120_000 });
      const count = await page.evaluate(() => window.ferryInspector.logCount());
      metrics.logEntries = count;
      metrics.logGenerationMs = Math.round(sentMs);
      await view('log');
      await page.fill('#log-text', '');
      await page.selectOption('#log-min', '4');
      metrics.filterLevelMs = await page.evaluate(() => window.ferryInspector.lastFilterMs);
      await page.fill('#log-text', 'perf 12');
      metrics.filterTextMs = await page.evaluate(() => window.ferryInspector.lastFilterMs);
      const shown = await page.textContent('#log-shown');
      assert(/^\d+ of \d+ shown$/.test(shown), shown);
      await page.fill('#log-text', '');
      await page.selectOption('#log-min', '0');
      metrics.filterAllMs = await page.evaluate(() => window.ferryInspector.lastFilterMs);
      const rowsInDom = await page.$$eval('#log-list .row', (r) => r.length);
      assert(rowsInDom < 200, `only the visible rows are in the DOM (${rowsInDom})`);
      metrics.scrollFrameMs = await page.evaluate(async () => {
        const list = document.getElementById('log-list');
        const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
        const started = performance.now();
        for (let i = 1; i <= 10; i += 1) {
          list.scrollTop = (list.scrollHeight * i) / 11;
          await frame();
        }
        return (performance.now() - started) / 10;
      });
      for (const key of ['filterLevelMs', 'filterTextMs', 'filterAllMs']) {
        assert(metrics[key] < 200, `${key} ${metrics[key]} ms`);
      }
      await shot('log-10000');
      return `${count} entries; filter ${metrics.filterLevelMs.toFixed(1)} / ${metrics.filterTextMs.toFixed(1)} / ${metrics.filterAllMs.toFixed(1)} ms; ${rowsInDom} rows in the DOM`;
    });
  }

  if (mode === 'stdio') {
    await check('the session cookie alone starts nothing: the code from the terminal is needed', async () => {
      const marker = path.join(os.tmpdir(), `ferry-inspect-must-not-exist-${process.pid}`);
      const request = JSON.stringify({ command: ['touch', marker] });
      const states = async () => JSON.parse((await raw('GET', '/api/state', auth())).text).connections.length;
      const before = await states();
      const asked = await raw('POST', '/api/connect', auth({ 'content-type': 'application/json' }), request);
      assert(asked.status === 200 && JSON.parse(asked.text).confirm, `asked: ${asked.status} ${asked.text}`);
      const code = await terminalCode();
      const guessed = await raw('POST', '/api/connect', auth({ 'content-type': 'application/json' }),
        JSON.stringify({ command: ['touch', marker], code: code === '000000' ? '000001' : '000000' }));
      assert(guessed.status === 403, `a wrong code: ${guessed.status} ${guessed.text}`);
      // The guess used the code up: the right one no longer works either.
      const late = await raw('POST', '/api/connect', auth({ 'content-type': 'application/json' }),
        JSON.stringify({ command: ['touch', marker], code }));
      assert(late.status === 403, `a used code: ${late.status}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert(await states() === before, 'no connection made');
      let exists = true;
      await readFile(marker).catch(() => { exists = false; });
      assert(!exists, 'the command did not run');
    });

    await check('another server connected from the page after confirming the command', async () => {
      const ferry = JSON.parse((await raw('GET', '/api/state', auth())).text).connections[0].target.command[0];
      await view('server');
      await page.fill('#view-server input.mono[placeholder^="node"]', `${ferry} serve`);
      await page.click('#view-server button:has-text("Run…")');
      await page.waitForSelector('#confirm[open]');
      const shown = await page.textContent('#confirm-command');
      assert(shown === `${ferry} serve`, `the dialog shows ${shown}`);
      await shot('connect-confirm');
      await page.fill('#confirm-code', await terminalCode());
      await page.click('#confirm-yes');
      await page.waitForFunction(() => document.querySelectorAll('#conns button').length === 2, null, { timeout: TIMEOUT });
      const text = await call('echo', { text: 'second server' });
      assert(/second server/.test(text), text);
      return shown;
    });

    await check('a command the person declines is not run', async () => {
      await view('server');
      await page.fill('#view-server input.mono[placeholder^="node"]', 'touch /tmp/ferry-inspect-must-not-exist');
      await page.click('#view-server button:has-text("Run…")');
      await page.waitForSelector('#confirm[open]');
      await terminalCode(); // shown, and never typed
      await page.click('#confirm button[value="no"]');
      await page.waitForTimeout(300);
      assert(await page.$$eval('#conns button', (b) => b.length) === 2, 'no third connection');
    });

    await check('a reconnection begins a new connection in the wire export', async () => {
      await page.click('#conns button >> nth=0');
      await view('server');
      await page.click('#view-server button:has-text("Reconnect")');
      await page.waitForFunction(() => document.querySelector('#status').textContent === 'Reconnected', null, { timeout: TIMEOUT });
      const text = await call('echo', { text: 'after the reconnection' });
      assert(/after the reconnection/.test(text), text);
      await view('wire');
      const exported = await downloaded(() => page.click('#wire-export'));
      const lines = exported.trim().split('\n').map((l) => JSON.parse(l));
      const begun = lines.map((l, i) => [l, i]).filter(([l]) => l.connection && l.conn === 1).map(([, i]) => i);
      assert(begun.length === 2, `connection lines of connection 1 at ${begun}`);
      const next = lines.slice(begun[1] + 1).find((l) => l.conn === 1);
      assert(next?.message?.method === 'initialize', `after the second: ${JSON.stringify(next)}`);
      assert(lines.some((l) => l.conn === 2 && l.connection), 'the second server has its line');
      wireExportReconnected = path.join(artifacts, `${tag}-wire-reconnected.jsonl`);
      await writeFile(wireExportReconnected, exported);
      return `connection lines at ${begun.join(', ')} of ${lines.length}`;
    });

    await check('a server that dies is noticed at once, with its last stderr lines', async () => {
      const ferry = JSON.parse((await raw('GET', '/api/state', auth())).text).connections[0].target.command[0];
      await view('server');
      await page.fill('#view-server input.mono[placeholder^="node"]', `sh -c "echo going down >&2; exec timeout 2 ${ferry} serve"`);
      await page.click('#view-server button:has-text("Run…")');
      await page.waitForSelector('#confirm[open]');
      await page.fill('#confirm-code', await terminalCode());
      await page.click('#confirm-yes');
      await page.waitForFunction(() => document.querySelectorAll('#conns button').length === 3, null, { timeout: TIMEOUT });
      // No call needed: the page hears the exit.
      await page.waitForFunction(() => /the server process exited/.test(document.querySelector('#status').textContent), null, { timeout: TIMEOUT });
      const said = await page.textContent('#status');
      await page.waitForSelector('#conns button.closed', { timeout: TIMEOUT });
      await page.waitForSelector('#stderr-box[open]', { timeout: TIMEOUT });
      await page.waitForFunction(() => /going down/.test(document.querySelector('#stderr-lines').textContent), null, { timeout: TIMEOUT });
      await shot('server-died');
      return said;
    });
  }

  await check('the theme is chosen and kept; the list pane resizes from the keyboard; the header stays in view', async () => {
    await page.selectOption('#theme', 'dark');
    const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(dark === 'rgb(21, 24, 29)', `dark background: ${dark}`);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]', { timeout: TIMEOUT });
    assert(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark', 'the theme is kept');
    await page.selectOption('#theme', 'light');
    const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(light === 'rgb(251, 251, 250)', `light background: ${light}`);
    await view('tools');
    const side = () => page.$eval('#view-tools .side', (e) => Math.round(e.getBoundingClientRect().width));
    const before = await side();
    await page.focus('#view-tools .splitter');
    for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowRight');
    const after = await side();
    assert(Math.abs(after - before - 48) <= 2, `the list went from ${before} to ${after} px`);
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const top = await page.$eval('#chrome', (e) => e.getBoundingClientRect().top);
    assert(top === 0, `the header is at ${top}`);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.selectOption('#theme', '');
    return `list ${before} -> ${after} px`;
  });

  await check('readable in a narrow window', async () => {
    await page.setViewportSize({ width: 380, height: 800 });
    await chooseTool('calculate');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot('narrow');
    await page.setViewportSize({ width: 1280, height: 860 });
    assert(overflow <= 0, `scrolls sideways by ${overflow}px`);
  });

  await check('no script errors', async () => {
    assert(errors.length === 0, errors.join('\n'));
  });
} finally {
  await browser.close();
  if (downloads) await rm(downloads, { recursive: true, force: true });
}
console.log(JSON.stringify({ verdicts, metrics, wireExport, wireExportReconnected }));
