// Opens gpuwhy HTML reports in Debian's headless Chromium through playwright-core and fails on
// any console error, any network request (the report must be self-contained), a missing chart,
// or a chart without data. Saves a full-page screenshot of each report next to it.
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
  const verdict = await page.textContent('#verdict');
  if (!verdict || verdict.trim().length < 10) problems.push('no verdict');
  const findings = await page.$$eval('.finding', (els) => els.length);
  // Hover: every chart mark with a value carries a <title> tooltip.
  const titled = await page.$$eval('svg.chart title', (els) => els.length);
  if (titled === 0) problems.push('no hover titles');
  await page.screenshot({ path: file.replace(/\.html$/, '.png'), fullPage: true });
  if (problems.length) fail(`${file}: ${problems.join('; ')}`);
  else ok(`${file}: ${charts.length} charts (${charts.map((c) => c.id + '=' + c.points).join(' ')}), ${findings} findings, ${titled} tooltips`);
  await page.close();
}
await browser.close();
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
