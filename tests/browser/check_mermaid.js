#!/usr/bin/env node
// check_mermaid.js - render every Mermaid chart of a Markdown file (the
// GitHub step summary) with @mermaid-js/mermaid-cli in the Debian Chromium,
// then measure the rendered SVG the way a reader sees it: the x axis has at
// most 12 labels and no two of them overlap, the y axis starts at 0, the
// line is drawn in the chart's colour, and the text is not the default
// theme's. Writes each SVG beside the Markdown (NAME-K.svg), or into
// OUTDIR when given.
//
// usage: node check_mermaid.js STEP.md [OUTDIR]
// Exit 0 when every chart passes; one line per problem otherwise.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const peers = path.join(__dirname, '..', 'peers', 'node_modules');
const md = path.resolve(process.argv[2] || '');
const outdir = process.argv[3] ? path.resolve(process.argv[3]) : path.dirname(md);
const browser = process.env.CHROMIUM || '/usr/bin/chromium';
const text = fs.readFileSync(md, 'utf8');
const charts = [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]);
if (!charts.length) {
  console.error('check_mermaid: no Mermaid chart in ' + md);
  process.exit(1);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-mermaid-'));
const args = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
fs.writeFileSync(path.join(tmp, 'puppeteer.json'), JSON.stringify({ executablePath: browser, args }));
const problems = [];
const svgs = [];
charts.forEach((c, k) => {
  const src = path.join(tmp, `c${k}.mmd`);
  const out = path.join(outdir, `${path.basename(md, '.md')}-${k + 1}.svg`);
  fs.writeFileSync(src, c);
  try {
    execFileSync(path.join(peers, '.bin', 'mmdc'),
      ['-q', '-i', src, '-o', out, '-p', path.join(tmp, 'puppeteer.json')],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60000 });
  } catch (e) {
    problems.push(`chart ${k + 1}: mermaid-cli failed: ${String(e.stderr || e).slice(0, 300)}`);
    return;
  }
  svgs.push([k + 1, out, c]);
});

(async () => {
  const puppeteer = require(path.join(peers, 'puppeteer'));
  const b = await puppeteer.launch({ executablePath: browser, args, headless: true });
  try {
    for (const [k, file, src] of svgs) {
      const page = await b.newPage();
      await page.goto('file://' + file);
      const r = await page.evaluate(() => {
        const box = (e) => { const q = e.getBoundingClientRect(); return [q.left, q.top, q.right, q.bottom]; };
        const xs = [...document.querySelectorAll('.bottom-axis .label text')];
        const ys = [...document.querySelectorAll('.left-axis .label text')];
        const line = document.querySelector('.line-plot-0 path');
        return {
          x: xs.map((e) => ({ t: e.textContent, b: box(e) })),
          y: ys.map((e) => e.textContent),
          stroke: line ? line.getAttribute('stroke') : null,
          fills: [...new Set([...document.querySelectorAll('text')].map((e) => e.getAttribute('fill')))],
        };
      });
      await page.close();
      const want = (src.match(/"plotColorPalette": "(#[0-9a-fA-F]+)"/) || [])[1];
      if (r.x.length < 2 || r.x.length > 12) problems.push(`chart ${k}: ${r.x.length} x labels (2 to 12 wanted)`);
      for (let i = 1; i < r.x.length; i++) {
        const a = r.x[i - 1].b, c = r.x[i].b;
        if (c[0] < a[2] + 2 && a[0] < c[2] && c[1] < a[3] && a[1] < c[3])
          problems.push(`chart ${k}: x labels '${r.x[i - 1].t}' and '${r.x[i].t}' overlap`);
      }
      const yv = r.y.map(Number);
      if (!yv.length || Math.min(...yv) !== 0) problems.push(`chart ${k}: the y axis does not start at 0 (${r.y.join(' ')})`);
      if (!want || r.stroke !== want) problems.push(`chart ${k}: the line is drawn in ${r.stroke}, not ${want}`);
      if (r.fills.includes('#131300')) problems.push(`chart ${k}: text in the default theme's colour (#131300)`);
      console.log(`check_mermaid: chart ${k}: ${r.x.length} x labels (${r.x.map((l) => l.t).join(' ')}), ` +
        `y from ${r.y.length ? Math.min(...yv) : '-'}, line ${r.stroke}: ${path.basename(file)}`);
    }
  } finally {
    await b.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  problems.forEach((p) => console.error('check_mermaid: ' + p));
  process.exit(problems.length ? 1 : 0);
})().catch((e) => {
  console.error('check_mermaid: ' + (e && e.stack || e));
  process.exit(1);
});
