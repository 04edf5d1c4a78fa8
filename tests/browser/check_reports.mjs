// Opens gpuwhy HTML reports in Debian's headless Chromium through playwright-core and fails on
// any console error, any network request (the report must be self-contained), a missing chart,
// a chart without data, chart text cut off at the chart's edges (as rendered, with Chromium's
// fonts), or a before/after section below the findings. Saves a full-page screenshot of each
// report next to it.
// Usage: node check_reports.mjs REPORT.html:chart1,chart2,... [...]
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const browser = await chromium.launch({
  executablePath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
});
let failures = 0, passes = 0;
const fail = (msg) => { failures++; console.log('FAIL - ' + msg); };
const ok = (msg) => { passes++; console.log('ok - ' + msg); };

for (const arg of process.argv.slice(2)) {
  const [file, chartList] = arg.split(':');
  const expected = chartList ? chartList.split(',').filter(Boolean) : [];
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console error: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  const url = pathToFileURL(file).href;
  page.on('request', (r) => { if (r.url() !== url && !r.url().startsWith('data:')) problems.push('network request: ' + r.url()); });
  await page.goto(url, { waitUntil: 'load' });
  const charts = await page.$$eval('svg.chart', (els) => els.map((e) => ({
    id: e.getAttribute('data-chart'),
    points: Number(e.getAttribute('data-points')),
    marks: e.querySelectorAll('rect, polyline, circle').length,
    width: e.getBoundingClientRect().width,
  })));
  for (const id of expected) {
    const c = charts.find((x) => x.id === id);
    if (!c) problems.push(`chart ${id} missing`);
    else if (!(c.points > 0) || c.marks === 0) problems.push(`chart ${id} has no data`);
    else if (c.width < 300) problems.push(`chart ${id} is only ${c.width}px wide`);
  }
  // Every label drawn inside its chart: an SVG clips text that runs past the viewBox.
  const clipped = await page.$$eval('svg.chart', (svgs) => {
    const out = [];
    for (const svg of svgs) {
      const vb = svg.viewBox.baseVal;
      for (const t of svg.querySelectorAll('text')) {
        const b = t.getBBox();
        if (b.x < vb.x - 0.5 || b.x + b.width > vb.x + vb.width + 0.5)
          out.push(`${svg.getAttribute('data-chart')}: "${t.textContent.slice(0, 40)}" spans x ${b.x.toFixed(0)}-${(b.x + b.width).toFixed(0)} of 0-${vb.width}`);
      }
    }
    return out;
  });
  if (clipped.length) problems.push(`${clipped.length} labels cut off: ${clipped.slice(0, 3).join('; ')}`);
  // Before/after, when there is one, is read first: above the findings. Found by its heading
  // (not only by an id a regression could drop), and required where a compare chart is.
  const order = await page.evaluate(() => {
    const ba = [...document.querySelectorAll('h2')].find((h) => h.textContent.trim() === 'Before and after');
    const first = document.querySelector('.finding');
    if (!ba) return 'absent';
    if (!first) return 'n/a';
    return ba.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING ? 'first' : 'after the findings';
  });
  if (order === 'after the findings') problems.push('the before/after section comes after the findings');
  if (order === 'absent' && expected.some((id) => id.startsWith('compare-'))) problems.push('no before/after section');
  const verdict = await page.textContent('#verdict');
  if (!verdict || verdict.trim().length < 10) problems.push('no verdict');
  const findings = await page.$$eval('.finding', (els) => els.length);
  // Hover: every chart mark with a value carries a <title> tooltip.
  const titled = await page.$$eval('svg.chart title', (els) => els.length);
  if (titled === 0) problems.push('no hover titles');
  await page.screenshot({ path: file.replace(/\.html$/, '.png'), fullPage: true });
  if (problems.length) fail(`${file}: ${problems.join('; ')}`);
  else ok(`${file}: ${charts.length} charts (${charts.map((c) => c.id + '=' + c.points).join(' ')}), ${findings} findings, ${titled} tooltips, labels inside, before/after ${order}`);
  await page.close();
}
await browser.close();
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
