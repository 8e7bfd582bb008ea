// The REST server's status page in headless Chromium (Debian's chromium, driven by
// puppeteer-core): it loads with no console error, shows the node's peer ID and a connected
// js-waku peer, its rate chart moves while messages flow, and a peer whose agent string is HTML
// runs nothing. Screenshots (desktop light, phone dark) go to $LD_BUILD_DIR.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';

import puppeteer from 'puppeteer-core';

import { missing, nodePath } from './lib/cpeer.mjs';
import { startRelayNode } from './lib/relaynode.mjs';
import { createRelayPeer, shardTopic } from './lib/wakupeer.mjs';

const CLUSTER = 42;
const SHARD = 3;
const CONTENT_TOPIC = '/status/1/chat/proto';
// What a hostile peer could send as its identify agent string: markup that would run script if
// the page inserted it as HTML.
const HOSTILE_AGENT = '<img src=x onerror="window.__pwned=1;document.title=\'pwned\'"><script>window.__pwned=2</script>';

function chromiumPath() {
  for (const p of [process.env.LD_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (p && existsSync(p)) return p;
  }
  return null;
}

const skip = missing('logosdelivery', nodePath())
  || (chromiumPath() == null ? 'chromium is not installed (scripts/deps.sh installs it; or set LD_CHROMIUM)' : false);

async function waitFor(what, fn, { timeoutMs = 20_000, stepMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(stepMs);
  }
}

describe('status page', { skip }, () => {
  let node;
  let peer;
  let browser;
  let page;
  const problems = []; // console errors, page errors, failed requests

  before(async () => {
    node = await startRelayNode({ clusterId: CLUSTER, shards: [SHARD], logLevel: 'INFO' });
    peer = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: SHARD, contentTopics: [CONTENT_TOPIC],
      userAgent: HOSTILE_AGENT });
    await peer.dial(node.addr);
    browser = await puppeteer.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
    await page.setViewport({ width: 1200, height: 1400 });
    await page.goto(`${node.restUrl}/?refresh=1`, { waitUntil: 'load' });
  });

  after(async () => {
    await browser?.close();
    await peer?.stop();
    await node?.stop();
  });

  it('shows the node peer ID, its addresses and a connected peer with its agent as text', async () => {
    await waitFor('the peer ID', () => page.$eval('#peer-id', (e) => e.textContent.length > 20));
    assert.equal(await page.$eval('#peer-id', (e) => e.textContent), node.peerId);
    const addrs = await waitFor('the addresses', async () => {
      const list = await page.$$eval('#addresses code', (es) => es.map((e) => e.textContent));
      return list.length > 0 ? list : null;
    });
    assert.ok(addrs.includes(node.addr), `${node.addr} not among ${addrs}`);
    const peerId = peer.node.peerId.toString();
    const row = await waitFor('the js-waku peer with its agent string', () => page.evaluate((id) => {
      const tr = document.querySelector(`#peers tr[data-peer-id="${id}"]`);
      const agent = tr?.querySelector('td.agent')?.textContent;
      return agent ? { agent, direction: tr.children[1].textContent, protocols: tr.children[4].textContent,
        shards: tr.children[5].textContent } : null;
    }, peerId));
    assert.equal(row.agent, HOSTILE_AGENT, 'the agent string is shown as it came, as text');
    assert.equal(row.direction, 'In');
    assert.match(row.protocols, /\/vac\/waku\/relay\/2\.0\.0/);
  });

  it('runs nothing a peer sent: no element, no script, no title change', async () => {
    const seen = await page.evaluate(() => ({
      pwned: window.__pwned ?? null,
      title: document.title,
      imgs: document.querySelectorAll('img').length,
      scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src')),
    }));
    assert.deepEqual(seen, { pwned: null, title: 'logosdelivery status', imgs: 0, scripts: ['/status/app.js'] });
  });

  it('moves the rate chart of the shard while messages flow', async () => {
    const topic = shardTopic(CLUSTER, SHARD);
    const chartTotal = () => page.evaluate((t) => {
      const c = [...document.querySelectorAll('#rates .chart')].find((e) => e.dataset.topic === t);
      return c ? { total: Number(c.dataset.totalIn), line: c.querySelector('polyline.in')?.getAttribute('points') ?? '' } : null;
    }, topic);
    const before = await waitFor(`a chart for ${topic}`, chartTotal);
    let sent = 0;
    const moved = await waitFor('the chart to count the messages', async () => {
      await peer.publish({ payload: new TextEncoder().encode(`status ${sent++}`) });
      const now = await chartTotal();
      return now != null && now.total > before.total && now.line !== before.line ? now : null;
    }, { timeoutMs: 30_000, stepMs: 250 });
    assert.ok(moved.total > 0);
    const mesh = await page.$$eval('#mesh tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    assert.ok(mesh.some(([t, m]) => t === topic && Number(m) >= 0), `no mesh row for ${topic}: ${JSON.stringify(mesh)}`);
  });

  it('has had no console error, failed request or HTTP error', async () => {
    const refreshes = await page.evaluate(() => Number(document.body.dataset.refreshes || 0));
    assert.ok(refreshes >= 2, `the page refreshed ${refreshes} times`);
    assert.deepEqual(problems, []);
  });

  it('fits a phone in the dark, and leaves screenshots', async () => {
    const dir = process.env.LD_BUILD_DIR && existsSync(process.env.LD_BUILD_DIR) ? process.env.LD_BUILD_DIR : tmpdir();
    const desktop = join(dir, 'status-page.png');
    await page.screenshot({ path: desktop, fullPage: true });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await page.reload({ waitUntil: 'load' });
    await waitFor('the peer ID after reload', () => page.$eval('#peer-id', (e) => e.textContent.length > 20));
    const layout = await page.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      background: getComputedStyle(document.body).backgroundColor,
    }));
    assert.ok(layout.overflow <= 0, `the page is ${layout.overflow} px wider than the phone`);
    assert.equal(layout.background, 'rgb(15, 18, 22)', 'dark colours on a dark phone');
    const phone = join(dir, 'status-page-phone-dark.png');
    await page.screenshot({ path: phone, fullPage: true });
    assert.ok(existsSync(desktop) && existsSync(phone));
    assert.deepEqual(problems, []);
  });
});
