/**
 * The report as one self-contained HTML file: inline CSS and JavaScript (src/report/assets/), the meta
 * block and the data as JSON blobs, and nothing fetched — a Content-Security-Policy of `default-src
 * 'none'` makes the browser refuse any request the page might try. The page draws its charts (SVG) and
 * tables from the data when it opens.
 *
 * Every string of the data, keys too, has its control characters shown as `\x1b` (util/control-chars.ts), as
 * the terminal shows them: the page draws what a model wrote, tool names and error bodies included.
 *
 * Built by string concatenation; the JSON is escaped so that nothing in it can end its script element
 * (`<` → `\u003c`) and so that the file holds no `://` at all (`:\/\/` inside JSON strings), which keeps a
 * plain search for `http://` meaningful. Credentials are masked before that escaping (util/redact.ts
 * recognises URLs by their `://`).
 */
import { readFileSync } from 'node:fs';
import { escapeControlsDeep } from '../util/control-chars.ts';
import { redactText } from '../util/redact.ts';
import { sourceAsset } from '../util/paths.ts';
import type { ReportData, ReportMeta } from './model.ts';

let assets: { css: string; js: string } | undefined;

function loadAssets(): { css: string; js: string } {
  if (!assets) {
    assets = {
      css: readFileSync(sourceAsset('report', 'assets', 'report.css'), 'utf8'),
      js: readFileSync(sourceAsset('report', 'assets', 'report.js'), 'utf8'),
    };
  }
  return assets;
}

/** JSON for a `<script type="application/json">` element: control characters shown, redacted, then escaped (see the module comment). */
export function scriptJson(value: unknown): string {
  const json = redactText(JSON.stringify(escapeControlsDeep(value)));
  return json.replace(/<|:\/\//g, (m) => (m === '<' ? '\\u003c' : ':\\/\\/'));
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

export function renderReportHtml(meta: ReportMeta, data: ReportData): string {
  const { css, js } = loadAssets();
  const title = escapeHtml(meta.title).replace(/:\/\//g, ':/&#47;');
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">\n` +
    `<meta name="generator" content="skillopt ${escapeHtml(meta.skillopt_version)}">\n` +
    `<title>${title}</title>\n<style>\n${css}\n</style>\n</head>\n<body>\n` +
    `<div id="app"><header class="top"><h1>${title}</h1><p class="muted" id="loading">Loading the report…</p></header></div>\n` +
    '<noscript><p>This report draws its tables and charts with JavaScript. The same data is in the run folder (results.jsonl, summary.json); <code>npx skillopt show &lt;dir&gt;</code> prints it in a terminal.</p></noscript>\n' +
    `<script type="application/json" id="skillopt-meta">${scriptJson(meta)}</script>\n` +
    `<script type="application/json" id="skillopt-data">${scriptJson(data)}</script>\n` +
    `<script>\n${js}\n</script>\n</body>\n</html>\n`
  );
}
