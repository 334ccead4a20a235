#!/usr/bin/env node
// check_report.js - open an rt report in headless Chromium (file://) and
// check it the way a person would see it: no console errors or page
// exceptions, no request other than the file itself, every chart drawn
// (a canvas with painted pixels), the crosshair shared across charts.
// Talks the DevTools protocol over --remote-debugging-pipe: no npm package.
//
// usage: node check_report.js REPORT.html [SCREENSHOT.png]
// Exit 0 when the page passes; one line per problem otherwise.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const os = require('os');

const file = path.resolve(process.argv[2] || '');
const shot = process.argv[3];
if (!fs.existsSync(file)) {
  console.error('check_report: no such file ' + file);
  process.exit(2);
}
const browser = process.env.CHROMIUM || 'chromium';
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-chromium-'));
const child = spawn(browser, [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--no-default-browser-check', '--disable-extensions', '--disable-dev-shm-usage', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--metrics-recording-only',
  '--user-data-dir=' + profile, '--remote-debugging-pipe', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
child.stderr.on('data', (d) => { stderr += d; });
const toBrowser = child.stdio[3], fromBrowser = child.stdio[4];

let nextId = 1;
const waiting = new Map();
const listeners = [];
let pending = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let z;
  while ((z = pending.indexOf(0)) >= 0) {
    const msg = JSON.parse(pending.slice(0, z).toString('utf8'));
    pending = pending.slice(z + 1);
    if (msg.id && waiting.has(msg.id)) {
      const { resolve, reject } = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error)));
      else resolve(msg.result);
    } else if (msg.method) {
      listeners.forEach((l) => l(msg));
    }
  }
});
function send(method, params, sessionId) {
  const id = nextId++;
  const m = { id, method, params: params || {} };
  if (sessionId) m.sessionId = sessionId;
  toBrowser.write(JSON.stringify(m) + '\0');
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const problems = [];
const deadline = setTimeout(() => {
  console.error('check_report: timed out (browser stderr: ' + stderr.slice(-400) + ')');
  child.kill('SIGKILL');
  process.exit(1);
}, 45000);

(async () => {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const url = 'file://' + file;
  let loaded = false;
  listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    const p = m.params || {};
    if (m.method === 'Runtime.exceptionThrown')
      problems.push('page exception: ' + (p.exceptionDetails.exception
        ? p.exceptionDetails.exception.description : p.exceptionDetails.text));
    if (m.method === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'warning'))
      problems.push('console ' + p.type + ': ' + p.args.map((a) => a.value || a.description).join(' '));
    if (m.method === 'Log.entryAdded' && p.entry.level === 'error')
      problems.push('browser log error: ' + p.entry.text + ' ' + (p.entry.url || ''));
    if (m.method === 'Network.requestWillBeSent' && p.request.url !== url &&
        !p.request.url.startsWith('data:'))
      problems.push('the page requested ' + p.request.url);
    if (m.method === 'Page.loadEventFired') loaded = true;
  });
  for (const d of ['Runtime.enable', 'Log.enable', 'Network.enable', 'Page.enable'])
    await send(d, {}, sessionId);
  await send('Emulation.setDeviceMetricsOverride',
    { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
  await send('Page.navigate', { url }, sessionId);
  for (let i = 0; i < 200 && !loaded; i++) await sleep(50);
  if (!loaded) problems.push('the page did not finish loading');
  await sleep(300);
  const check = `(function(){
    var out = {charts: 0, drawn: [], empty: [], synced: true};
    var els = document.querySelectorAll('.chart');
    out.charts = els.length;
    els.forEach(function (el) {
      var canvases = el.querySelectorAll('canvas'), painted = 0;
      canvases.forEach(function (c) {
        if (!c.width || !c.height) return;
        var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (var i = 3; i < d.length; i += 4) if (d[i]) painted++;
      });
      (painted > 500 ? out.drawn : out.empty).push(el.id);
    });
    // every y axis: round ticks in the unit they are labeled with
    out.badTicks = [];
    els.forEach(function (el) {
      el.querySelectorAll('.dygraph-axis-label-y').forEach(function (t) {
        var m = /^(-?[0-9.]+) (\\S+)$/.exec(t.textContent.trim());
        var digits = m ? m[1].replace(/^-?0*\\.?0*/, '').replace('.', '').replace(/0+$/, '').length : 99;
        if (!m || digits > 3) out.badTicks.push(el.id + ': ' + t.textContent);
      });
    });
    // the summary table takes its card's width
    var st = document.querySelector('table.stats');
    if (st) out.tableFill = st.offsetWidth / (st.parentElement.clientWidth || 1);
    if (els[0]) els[0].scrollIntoView({block: 'center'});
    var first = els[0] && els[0].getBoundingClientRect();
    if (first) { out.x = first.left + first.width / 2; out.y = first.top + first.height / 2; }
    out.title = document.title;
    return JSON.stringify(out);
  })()`;
  const r = await send('Runtime.evaluate', { expression: check, returnByValue: true }, sessionId);
  const res = JSON.parse(r.result.value);
  // the crosshair: a real mouse over the first chart highlights a point in all of them
  if (res.x !== undefined) {
    await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: res.x, y: res.y }, sessionId);
    await sleep(200);
    const q = await send('Runtime.evaluate', {
      expression: `(function(){var gs=window.rtCharts||[];var s=gs.map(function(g){return g.getSelection();});
        return JSON.stringify(s);})()`, returnByValue: true }, sessionId);
    const sel = JSON.parse(q.result.value);
    if (process.env.RT_DEBUG) console.error(JSON.stringify(sel), res.x, res.y);
    res.synced = sel.length < 2 || (sel[0] >= 0 && sel.every((v) => v === sel[0]));
  }
  const want = parseInt(process.env.RT_EXPECT_CHARTS || '0', 10);
  if (res.charts === 0) problems.push('no chart on the page');
  if (want && res.charts !== want) problems.push(`${res.charts} charts, expected ${want}`);
  if (res.empty.length) problems.push('charts not drawn: ' + res.empty.join(', '));
  if (!res.synced) problems.push('the crosshair is not shared across charts');
  if (res.tableFill !== undefined && res.tableFill < 0.9)
    problems.push('the summary table fills ' + Math.round(res.tableFill * 100) + ' % of its card');
  if (res.badTicks.length) problems.push('y ticks not round or without a unit: ' + res.badTicks.slice(0, 6).join(', '));
  if (shot) {
    const h = await send('Runtime.evaluate',
      { expression: 'document.documentElement.scrollHeight', returnByValue: true }, sessionId);
    await send('Emulation.setDeviceMetricsOverride',
      { width: 1280, height: Math.min(h.result.value, 4000), deviceScaleFactor: 1, mobile: false },
      sessionId);
    await sleep(300);
    const img = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
    fs.writeFileSync(shot, Buffer.from(img.data, 'base64'));
  }
  const exited = new Promise((r) => child.once('exit', r));
  await send('Browser.close').catch(() => {});
  await Promise.race([exited, sleep(5000)]);
  child.kill('SIGKILL');
  clearTimeout(deadline);
  try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
  if (problems.length) {
    problems.forEach((p) => console.error('check_report: ' + p));
    process.exit(1);
  }
  console.log(`check_report: ${res.charts} charts drawn (${res.drawn.join(', ')}), ` +
    'no console errors, no requests, crosshair shared');
  process.exit(0);
})().catch((e) => {
  console.error('check_report: ' + e.message);
  child.kill('SIGKILL');
  process.exit(1);
});
