// The status page's script: reads /health, /debug/v1/info and /status/v1/summary and redraws.
// Every string shown is set with textContent (or an attribute), never parsed as markup: agent
// strings, protocols, topics and addresses come from peers.
'use strict';

(function () {
  const params = new URLSearchParams(location.search);
  const refreshSeconds = Math.max(0.5, Number(params.get('refresh')) || 2);
  const $ = (id) => document.getElementById(id);

  function el(tag, text, className) {
    const e = document.createElement(tag);
    if (text != null) e.textContent = String(text);
    if (className) e.className = className;
    return e;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function duration(seconds) {
    const d = Math.floor(seconds / 86400), h = Math.floor(seconds / 3600) % 24;
    const m = Math.floor(seconds / 60) % 60, s = Math.floor(seconds) % 60;
    if (d > 0) return `${d}d ${h}h ${m}m`;
    if (h > 0) return `${h}h ${m}m ${s}s`;
    return m > 0 ? `${m}m ${s}s` : `${s}s`;
  }

  function copyText(text, button) {
    const done = () => {
      button.textContent = 'copied';
      setTimeout(() => { button.textContent = 'copy'; }, 1200);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
    } else {
      fallbackCopy(text, done);
    }
  }

  function fallbackCopy(text, done) {
    const area = el('textarea', text);
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    try { document.execCommand('copy'); done(); } catch (_) { /* nothing to copy to */ }
    document.body.removeChild(area);
  }

  function copyButton(text) {
    const b = el('button', 'copy', 'copy');
    b.type = 'button';
    b.addEventListener('click', () => copyText(text, b));
    return b;
  }

  async function getJson(path) {
    const res = await fetch(path, { cache: 'no-store' });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return res.json();
  }

  // ---- sections -------------------------------------------------------------------------------

  function showHealth(h) {
    const badge = $('node-health');
    badge.textContent = h.nodeHealth || 'UNKNOWN';
    badge.className = `badge ${h.nodeHealth || ''}`;
    const cs = $('connection-status');
    cs.hidden = h.connectionStatus == null;
    if (h.connectionStatus != null) {
      cs.textContent = h.connectionStatus;
      cs.className = `badge ${h.connectionStatus}`;
    }
    const list = $('health');
    clear(list);
    for (const entry of h.protocolsHealth || []) {
      const name = Object.keys(entry).find((k) => k !== 'desc');
      if (name == null) continue;
      const li = el('li');
      const label = el('span', name);
      if (entry.desc) label.title = entry.desc;
      li.append(label, el('span', entry[name], entry[name]));
      list.append(li);
    }
  }

  function showInfo(info) {
    const list = $('addresses');
    clear(list);
    const rows = (info.listenAddresses || []).map((a) => ['', a]);
    if (info.enrUri) rows.push(['ENR', info.enrUri]);
    for (const [label, text] of rows) {
      const li = el('li');
      if (label) li.append(el('span', label, 'muted'));
      li.append(el('code', text), copyButton(text));
      list.append(li);
    }
  }

  function showSummary(s) {
    $('peer-id').textContent = s.peerId || '';
    $('version').textContent = s.version || '';
    $('uptime').textContent = duration(s.uptimeSeconds || 0);
    const c = s.connections || { in: 0, out: 0 };
    $('connections').textContent = `${c.in + c.out} (${c.in} in, ${c.out} out)`;
    showPeers(s.peers || []);
    showMesh(s.mesh || []);
    showRates(s.rates || { intervalSeconds: 2, shards: [] });
    showStore(s.store || {});
    showFilter(s.filter || {});
  }

  function shortId(id) {
    return id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id;
  }

  function showPeers(peers) {
    $('peer-count').textContent = `(${peers.length} connected)`;
    const body = $('peers').tBodies[0];
    clear(body);
    for (const p of peers) {
      const tr = el('tr');
      tr.dataset.peerId = p.peerId || '';
      const idCell = el('td');
      const code = el('code', shortId(p.peerId || ''));
      code.title = p.multiaddr || p.peerId || '';
      idCell.append(code, ' ', copyButton(p.multiaddr || p.peerId || ''));
      const score = typeof p.score === 'number' ? p.score.toFixed(2) : '–';
      tr.append(idCell, el('td', p.direction || ''), el('td', p.origin || ''),
        el('td', p.agent || '', 'agent'), el('td', (p.protocols || []).join(', ')),
        el('td', (p.shards || []).join(', ')), el('td', score));
      body.append(tr);
    }
    if (peers.length === 0) {
      const tr = el('tr');
      const td = el('td', 'No connected peer', 'muted');
      td.colSpan = 7;
      tr.append(td);
      body.append(tr);
    }
  }

  function byTopic(a, b) {
    return String(a.topic).localeCompare(String(b.topic), undefined, { numeric: true });
  }

  function showMesh(mesh) {
    const body = $('mesh').tBodies[0];
    clear(body);
    for (const t of [...mesh].sort(byTopic)) {
      const tr = el('tr');
      tr.append(el('td', t.topic), el('td', t.meshPeers), el('td', t.topicPeers));
      body.append(tr);
    }
    if (mesh.length === 0) {
      const tr = el('tr');
      const td = el('td', 'No relay topic', 'muted');
      td.colSpan = 3;
      tr.append(td);
      body.append(tr);
    }
  }

  const SVG = 'http://www.w3.org/2000/svg';

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  }

  function points(samples, slots, max, width, height) {
    const step = width / Math.max(1, slots - 1);
    const offset = slots - samples.length;
    return samples.map((v, i) => `${((offset + i) * step).toFixed(1)},${(height - (v / max) * (height - 4) - 2).toFixed(1)}`).join(' ');
  }

  function sum(list) {
    return list.reduce((a, b) => a + b, 0);
  }

  function showRates(rates) {
    const interval = rates.intervalSeconds || 2;
    const slots = 150;
    $('rate-window').textContent = `(last ${Math.round((slots * interval) / 60)} min, per ${interval} s)`;
    const box = $('rates');
    clear(box);
    for (const shard of [...(rates.shards || [])].sort(byTopic)) {
      const inS = shard.in || [], outS = shard.out || [];
      const peak = Math.max(0, ...inS, ...outS);
      const max = Math.max(1, peak);
      const width = 300, height = 80;
      const chart = el('div', null, 'chart');
      chart.dataset.topic = shard.topic;
      chart.dataset.totalIn = String(sum(inS));
      chart.dataset.totalOut = String(sum(outS));
      chart.append(el('code', shard.topic));
      const svg = svgEl('svg', { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none', role: 'img' });
      svg.append(svgEl('line', { x1: 0, y1: height - 1, x2: width, y2: height - 1, class: 'axis' }));
      if (inS.length > 0) svg.append(svgEl('polyline', { points: points(inS, slots, max, width, height), class: 'in' }));
      if (outS.length > 0) svg.append(svgEl('polyline', { points: points(outS, slots, max, width, height), class: 'out' }));
      chart.append(svg);
      const lastIn = inS.length ? inS[inS.length - 1] / interval : 0;
      const lastOut = outS.length ? outS[outS.length - 1] / interval : 0;
      const legend = el('div', null, 'legend');
      legend.append(el('span', `in ${lastIn.toFixed(1)}/s`, 'in-key'), el('span', `out ${lastOut.toFixed(1)}/s`, 'out-key'),
        el('span', `peak ${(peak / interval).toFixed(1)}/s`));
      chart.append(legend);
      box.append(chart);
    }
    if (!box.firstChild) box.append(el('p', 'No relay traffic yet', 'muted'));
  }

  function definitions(dl, rows) {
    clear(dl);
    for (const [k, v] of rows) dl.append(el('dt', k), el('dd', v));
  }

  function showStore(st) {
    if (!st.mounted) return definitions($('store'), [['Store', 'not mounted']]);
    definitions($('store'), [
      ['Messages', st.messages != null ? st.messages : '…'],
      ['Written since start', st.inserted || 0],
      ['Retention', st.retention || 'none'],
      ['Database', st.driver || ''],
    ]);
  }

  function showFilter(f) {
    if (!f.mounted) return definitions($('filter'), [['Filter', 'not mounted']]);
    definitions($('filter'), [['Subscribers', f.subscribers || 0], ['Criteria', f.criteria || 0]]);
  }

  // ---- refresh --------------------------------------------------------------------------------

  let infoShown = false;

  async function refresh() {
    const errors = [];
    const tasks = [
      getJson('/health').then(showHealth),
      getJson('/status/v1/summary').then(showSummary),
    ];
    if (!infoShown) tasks.push(getJson('/debug/v1/info').then((i) => { showInfo(i); infoShown = true; }));
    for (const r of await Promise.allSettled(tasks)) if (r.status === 'rejected') errors.push(r.reason.message);
    const err = $('error');
    err.hidden = errors.length === 0;
    err.textContent = errors.length ? `Node not reachable: ${errors.join('; ')}` : '';
    $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
    setTimeout(refresh, refreshSeconds * 1000);
  }

  function setupTheme() {
    const saved = localStorage.getItem('ld-theme');
    if (saved) document.documentElement.dataset.theme = saved;
    $('theme').addEventListener('click', () => {
      const dark = document.documentElement.dataset.theme
        ? document.documentElement.dataset.theme === 'dark'
        : matchMedia('(prefers-color-scheme: dark)').matches;
      const next = dark ? 'light' : 'dark';
      document.documentElement.dataset.theme = next;
      localStorage.setItem('ld-theme', next);
    });
  }

  function setupCopy() {
    for (const b of document.querySelectorAll('button[data-copy]')) {
      b.addEventListener('click', () => copyText($(b.dataset.copy).textContent, b));
    }
  }

  setupTheme();
  setupCopy();
  refresh();
})();
