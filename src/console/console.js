// The console's own script (served from /console/assets, never inline): copy buttons, a key's usage chart drawn from the
// table on the same page with Chart.js, and a refused search shown as a page. Everything works without it but the chart and
// the copy button.
'use strict';

document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button.copy') : null;
  if (button === null) return;
  const source = document.getElementById(button.dataset.copy);
  const status = button.parentElement.querySelector('.copy-status');
  const text = source.textContent.trim();
  const say = (words) => {
    if (status !== null) status.textContent = words;
  };
  navigator.clipboard.writeText(text).then(
    () => say('Copied.'),
    () => {
      // Without clipboard access (an old browser, a refused permission): select it for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      say('Selected: press Ctrl+C (⌘C) to copy.');
    },
  );
});

// Colour per outcome, each also named in the legend and the table: never colour alone.
const OUTCOME_COLOURS = {
  success: '#2e7d32',
  client_error: '#ef6c00',
  rate_limited: '#6a1b9a',
  refused: '#c62828',
  server_error: '#37474f',
};

function drawUsage() {
  const table = document.getElementById('usage-table');
  const canvas = document.getElementById('usage-chart');
  if (table === null || canvas === null || typeof window.Chart !== 'function') return;
  const outcomes = [...table.querySelectorAll('thead th[data-outcome]')].map((th) => ({ key: th.dataset.outcome, label: th.textContent.trim() }));
  const rows = [...table.querySelectorAll('tbody tr')];
  const labels = rows.map((row) => row.querySelector('th').textContent.trim());
  const datasets = outcomes.map((outcome, index) => ({
    label: outcome.label,
    backgroundColor: OUTCOME_COLOURS[outcome.key] ?? '#555',
    data: rows.map((row) => Number(row.querySelectorAll('td')[index].textContent)),
  }));
  new window.Chart(canvas, {
    type: 'bar',
    data: { labels, datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
    },
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawUsage);
else drawUsage();

// A search answered with a refusal htmx swaps nothing in for (429 once the admin token's request budget is spent): the address is
// loaded as a whole page instead, which shows the refusal and when to try again, rather than leaving stale results in place.
document.addEventListener('htmx:responseError', (event) => {
  const xhr = event.detail.xhr;
  if (xhr.status === 429 && xhr.responseURL) window.location.assign(xhr.responseURL);
});
